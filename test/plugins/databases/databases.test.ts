// `berth db create` against a real Docker engine, with postgres and redis images built locally from
// Debian's packages (test/support/databases.ts): the printed connection string works with the real
// clients (psql, redis-cli), the password is a secret and nowhere in the service file, the engine's
// health check reports healthy, the backup hook dumps; and the refusals.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import databases from '../../../plugins/databases/index.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import { runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { postgresImage, redisImage } from '../../support/databases.js'
import { dockerEngine } from '../../support/docker.js'
import { adminToken, api, reconcilerKernel, reconcilerSection, startKernel, testInstance, tokenFor } from '../../support/orchestration.js'
import { tempDir } from '../../support/tmp.js'

const run = promisify(execFile)

t.test('a request the deploy would refuse is refused first, and nothing is written (no engine needed)', async t => {
  const cwd = tempDir(t)
  const kernel = await startKernel(t, { plugins: [tokens, secrets, reconciler, databases], cwd, config: { reconciler: reconcilerSection(testInstance(), { docker_socket: join(cwd, 'no-engine.sock') }) } })
  const token = adminToken(kernel)
  for (const image of ['post gres:16', 'x'.repeat(513), '"quoted"\nimage', 5]) {
    const answer = await api<{ error: string }>(kernel, 'POST', '/api/v1/databases', { token, body: { engine: 'postgres', name: 'db', image } })
    t.match([answer.status, answer.body], [400, { error: /^image must be an image reference such as postgres:16 \(at most 512 characters\), got / }], String(image).slice(0, 20))
  }
  t.notOk(existsSync(join(cwd, 'services')), 'no service file')
  t.same((await api(kernel, 'GET', '/api/v1/secrets', { token })).body, { secrets: [] }, 'no secret')
})

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('db create postgres and redis: a working connection string, a secret password, a healthy service, a dump hook', async t => {
    const [postgres, redis] = await Promise.all([postgresImage(docker), redisImage(docker)])
    const { kernel, cwd, token, instance } = await reconcilerKernel(t, docker, { plugins: [databases], sections: { databases: { postgres_image: postgres, redis_image: redis } } })
    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token }
    const pg = `pg${instance.slice(-6)}`
    const cache = `cache${instance.slice(-6)}`

    const created = await runCli(['db', 'create', 'postgres', pg], { env, timeout: 180_000 })
    t.equal(created.code, 0, created.stderr)
    t.match(created.stdout, new RegExp(`^postgres ${pg} deployed from ${postgres}, healthy\\nservice file: .*services/${pg}/service.toml; password: secret ${pg.toUpperCase()}_PASSWORD\\npostgres://app:[\\w-]+@127\\.0\\.0\\.1:\\d+/app\\n$`))
    const url = created.stdout.trim().split('\n').at(-1) ?? ''
    const password = decodeURIComponent(/^postgres:\/\/app:([^@]+)@/.exec(url)?.[1] ?? '')
    const file = readFileSync(join(cwd, 'services', pg, 'service.toml'), 'utf8')
    t.notMatch(file, password, 'the password is not in the service file')
    t.match(file, `POSTGRES_PASSWORD = "\${secrets.${pg.toUpperCase()}_PASSWORD}"`)
    const { stdout: answer } = await run('psql', [url, '-tAc', 'CREATE TABLE t (v text); INSERT INTO t VALUES (\'kept\'); SELECT v FROM t'])
    t.equal(answer.trim().split('\n').at(-1), 'kept', 'psql connects with the printed string')
    await t.rejects(run('psql', [url.replace(encodeURIComponent(password), 'wrong'), '-tAc', 'SELECT 1']), 'a wrong password is refused')
    const hook = await kernel.service('reconciler').reconciler.exec(pg, 'pg_dump -U app -d app -f /var/lib/postgresql/data/berth-dump.sql && cat /var/lib/postgresql/data/berth-dump.sql')
    t.equal(hook.exitCode, 0, hook.output)
    t.match(hook.output, /kept/, 'the backup hook dumps the database into its volume')

    const made = await runCli(['db', 'create', 'redis', cache], { env, timeout: 180_000 })
    t.equal(made.code, 0, made.stderr)
    const redisUrl = made.stdout.trim().split('\n').at(-1) ?? ''
    t.match(redisUrl, /^redis:\/\/default:[\w-]+@127\.0\.0\.1:\d+\/0$/)
    const { stdout: pong } = await run('redis-cli', ['-u', redisUrl, '--no-auth-warning', 'ping'])
    t.equal(pong.trim(), 'PONG', 'redis-cli connects with the printed string')
    const { stdout: denied } = await run('redis-cli', ['-u', redisUrl.replace(/default:[\w-]+@/, 'default:wrong@'), '--no-auth-warning', 'ping'])
    t.match(denied, /WRONGPASS|NOAUTH|invalid/i, 'a wrong password is refused')

    const status = await api<{ services: Array<{ name: string, containers: Array<{ health?: string }> }> }>(kernel, 'GET', '/api/v1/status', { token })
    t.same(status.body.services.filter(s => s.name === pg || s.name === cache).map(s => s.containers[0].health), ['healthy', 'healthy'], 'the engine\'s health checks pass')
    const secrets = await api<{ secrets: Array<{ name: string }> }>(kernel, 'GET', '/api/v1/secrets', { token })
    t.same(secrets.body.secrets.map(s => s.name).sort(), [`${cache.toUpperCase()}_PASSWORD`, `${pg.toUpperCase()}_PASSWORD`])

    const again = await runCli(['db', 'create', 'postgres', pg], { env })
    t.same([again.code, again.stderr.replace(/\(.*\)/, '(…)')], [1, `berth: a service named ${pg} already exists (…)\n`])
    const engine = await runCli(['db', 'create', 'mysql', 'x'], { env })
    t.same([engine.code, engine.stderr], [2, 'berth: engine must be one of postgres, redis, got mysql\n'])
    const badName = await runCli(['db', 'create', 'redis', 'Bad_Name'], { env })
    t.match(badName, { code: 1, stderr: /^berth: name must be a service name/ })
    const viewer = await tokenFor(kernel, 'viewer')
    t.equal((await api(kernel, 'POST', '/api/v1/databases', { token: viewer, body: { engine: 'redis', name: 'x' } })).status, 403, 'a viewer cannot create a database')
  })
}
