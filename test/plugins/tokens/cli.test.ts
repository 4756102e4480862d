// `berth tokens ...` against a real server in a child process: the shared control client reads the
// admin token from the state directory (or BERTH_TOKEN), reports failures in one line, exits 1 or 2.
import t from 'tap'
import { runCli } from '../../support/cli.js'
import { serverDir, startServer } from '../../support/orchestration.js'

t.test('tokens create, list and revoke through the CLI', async t => {
  const server = await serverDir(t, ['tokens'])
  await startServer(t, server)
  const cli = async (args: string[], env: NodeJS.ProcessEnv = {}): ReturnType<typeof runCli> => await runCli(args, { cwd: server.dir, env })

  const created = await cli(['tokens', 'create', 'ci', '--role', 'viewer'])
  t.equal(created.code, 0, created.stderr)
  const token = created.stdout.trim()
  t.match(token, /^berth_[0-9a-f]{12}_/, 'the token is printed alone on stdout')
  t.match(created.stderr, /token "ci" \(id [0-9a-f]{12}, role viewer\) created; it is not shown again/)

  const listed = await cli(['tokens', 'list'])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, /^ID\s+NAME\s+ROLE\s+PROJECTS\s+CREATED\n/)
  t.match(listed.stdout, /\bci\s+viewer\s+\*\s/, 'every project: *')

  const limited = await cli(['tokens', 'create', 'team-a', '--role', 'deployer', '--project', 'shop,blog'])
  t.equal(limited.code, 0, limited.stderr)
  t.match(limited.stderr, /token "team-a" \(id [0-9a-f]{12}, role deployer, projects blog, shop\) created/)
  t.match((await cli(['tokens', 'list'])).stdout, /\bteam-a\s+deployer\s+blog,shop\s/, 'its projects listed')
  const adminLimited = await cli(['tokens', 'create', 'x', '--role', 'admin', '--project', 'shop'])
  t.same([adminLimited.code, adminLimited.stderr], [1, 'berth: only viewer and deployer tokens are limited to projects; an admin token reaches every project\n'])
  const badProject = await cli(['tokens', 'create', 'x', '--role', 'viewer', '--project', 'Shop!'])
  t.same([badProject.code, badProject.stderr], [1, 'berth: projects must be one or more project names (lowercase letters, digits and dashes), got "Shop!"\n'])
  t.notOk(listed.stdout.includes(token), 'secrets are never listed')

  const asViewer = await cli(['tokens', 'list'], { BERTH_TOKEN: token })
  t.equal(asViewer.code, 1)
  t.equal(asViewer.stderr, 'berth: token "ci" has role viewer; GET /api/v1/tokens needs admin\n')

  const badRole = await cli(['tokens', 'create', 'x', '--role', 'root'])
  t.equal(badRole.code, 2, 'an unknown role is a usage error')
  t.equal(badRole.stderr, 'berth: --role must be one of viewer, deployer, admin, agent; got "root"\n')

  const id = token.split('_')[1]
  const revoked = await cli(['tokens', 'revoke', id])
  t.equal(revoked.code, 0, revoked.stderr)
  t.equal(revoked.stdout, `token ${id} revoked\n`)
  const afterRevoke = await cli(['tokens', 'list'], { BERTH_TOKEN: token })
  t.equal(afterRevoke.code, 1)
  t.equal(afterRevoke.stderr, 'berth: invalid or revoked token (credentials from BERTH_TOKEN)\n')
  const again = await cli(['tokens', 'revoke', id])
  t.equal(again.stderr, `berth: no token with id "${id}"\n`)
})

t.test('without a server or a token the CLI says so in one line and exits 1', async t => {
  const server = await serverDir(t, ['tokens'])
  const noToken = await runCli(['tokens', 'list'], { cwd: server.dir })
  t.equal(noToken.code, 1)
  t.match(noToken.stderr, /^berth: no token: .*\.berth\/admin\.token does not exist \(start the server with this state directory first, pass --state-dir, or set BERTH_TOKEN\)\n$/)
  // The server never ran: its configuration still names port 0, which refuses every connection.
  const noServer = await runCli(['tokens', 'list'], { cwd: server.dir, env: { BERTH_TOKEN: 'x' } })
  t.equal(noServer.code, 1)
  t.equal(noServer.stderr, 'berth: cannot reach the server at http://127.0.0.1:0: ECONNREFUSED\n')
})
