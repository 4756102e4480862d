// `berth secrets set|list|rm` from a directory other than the server's: the CLI goes through the
// control API with the admin token of the state directory it is pointed at.
import t from 'tap'
import { join } from 'node:path'
import { runCli } from '../../support/cli.js'
import { serverDir, startServer } from '../../support/orchestration.js'
import { tempDir } from '../../support/tmp.js'

t.test('secrets set, list and rm work from any directory', async t => {
  const server = await serverDir(t, ['tokens', 'secrets'])
  const child = await startServer(t, server)
  const elsewhere = tempDir(t)
  const cli = async (...args: string[]): ReturnType<typeof runCli> =>
    await runCli(['--config', join(server.dir, 'cluster.toml'), '--state-dir', server.stateDir, 'secrets', ...args], { cwd: elsewhere })

  const set = await cli('set', 'DB_PASSWORD', 's3cr3t-value')
  t.equal(set.code, 0, set.stderr)
  t.equal(set.stdout, 'secret DB_PASSWORD (shared with every project) stored; redeploy the services that use it to apply it\n')
  t.equal((await cli('set', 'API_KEY', 'shop-key-value', '--project', 'shop')).stdout, 'secret API_KEY (project shop) stored; redeploy the services that use it to apply it\n')
  t.equal((await cli('set', 'SMTP', 'smtp-value', '--share-with', 'shop,blog')).stdout, 'secret SMTP (shared with shop, blog) stored; redeploy the services that use it to apply it\n')
  const listed = await cli('list')
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, /^NAME\s+PROJECT\s+UPDATED\n/)
  t.match(listed.stdout, /^DB_PASSWORD\s+shared: \*\s+\d{4}-\d\d-\d\dT/m, 'a shared secret')
  t.match(listed.stdout, /^SMTP\s+shared: blog,shop\s+\d{4}/m, 'shared with some projects')
  t.match(listed.stdout, /^API_KEY\s+shop\s+\d{4}/m, 'a project\'s')
  t.match((await cli('list', '--project', 'shop')).stdout, /^NAME\s+PROJECT\s+UPDATED\nAPI_KEY\s+shop\s+\S+\n$/, 'one project\'s')
  t.notOk(listed.stdout.includes('s3cr3t-value') || listed.stdout.includes('shop-key-value'), 'values are never printed')
  t.same(await cli('set', 'X', 'v', '--project', 'shop', '--share-with', 'a'), { code: 2, stdout: '', stderr: 'berth: --share-with goes with a shared secret: leave out --project\n' })
  t.equal((await cli('rm', 'API_KEY')).stderr, 'berth: no secret named "API_KEY"\n', 'the shared one of that name: none')
  t.equal((await cli('rm', 'API_KEY', '--project', 'shop')).stdout, 'secret API_KEY of project shop deleted\n')

  const bad = await cli('set', '9X', 'v')
  t.equal(bad.code, 2, 'a bad name is a usage error')
  t.equal(bad.stderr, 'berth: secret name "9X" must be letters, digits and underscores, not starting with a digit\n')

  const removed = await cli('rm', 'DB_PASSWORD')
  t.equal(removed.code, 0, removed.stderr)
  const again = await cli('rm', 'DB_PASSWORD')
  t.equal(again.code, 1)
  t.equal(again.stderr, 'berth: no secret named "DB_PASSWORD"\n')
  t.notOk(child.output().includes('s3cr3t-value'), 'the value is not in the server output')
})
