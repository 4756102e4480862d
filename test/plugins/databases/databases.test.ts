// `berth db create` against a real Docker engine, with postgres and redis images built locally from
// Debian's packages (test/support/databases.ts), beside the cluster and proxy plugins (a default
// domain set): a create that fails is rolled back whole and a retry of the same name succeeds; the
// printed connection string works with the real clients (psql, redis-cli) and outlives a recreate
// (a fixed host port recorded in the file); another service reaches the database by its name; the
// password is a secret and nowhere in the service file; databases are internal (no route); the
// health check reports healthy, the backup hook dumps; and the refusals, before anything is written.
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import cluster from '../../../plugins/cluster/index.js'
import nodes from '../../../plugins/nodes/index.js'
import databases from '../../../plugins/databases/index.js'
import proxy from '../../../plugins/proxy/index.js'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import { runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { postgresImage, redisImage } from '../../support/databases.js'
import { dockerEngine } from '../../support/docker.js'
import { adminToken, api, instanceContainers, reconcilerKernel, reconcilerSection, startKernel, testInstance, tokenFor, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
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
  for (const port of [0, 70000, 1.5, '5432']) {
    const answer = await api<{ error: string }>(kernel, 'POST', '/api/v1/databases', { token, body: { engine: 'postgres', name: 'db', port } })
    t.match([answer.status, answer.body], [400, { error: /^port must be a host port from 1 to 65535, got / }], `port ${String(port)}`)
  }
  const noEngine = await api<{ error: string }>(kernel, 'POST', '/api/v1/databases', { token, body: { engine: 'redis', name: 'db' } })
  t.match([noEngine.status, noEngine.body], [503, { error: /^the container engine cannot be asked about volume db_data: / }])
  t.notOk(existsSync(join(cwd, 'services')), 'no service file')
  t.same((await api(kernel, 'GET', '/api/v1/secrets', { token })).body, { secrets: [] }, 'no secret')
})

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('db create postgres and redis: rolled back when it fails, a stable connection string, internal, a secret password, healthy, a dump hook', async t => {
    const [postgres, redis] = await Promise.all([postgresImage(docker), redisImage(docker)])
    const { kernel, cwd, token, instance } = await reconcilerKernel(t, docker, {
      plugins: [cluster, nodes, proxy, databases],
      sections: {
        databases: { postgres_image: postgres, redis_image: redis },
        proxy: { http_port: 0, https_port: 0 },
        acme: { directory: '' },
        cluster: { domain: 'apps.test' }
      }
    })
    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token }
    const pg = `pg${instance.slice(-6)}`
    const cache = `cache${instance.slice(-6)}`
    const secretNames = async (): Promise<string[]> => (await api<{ secrets: Array<{ name: string }> }>(kernel, 'GET', '/api/v1/secrets', { token })).body.secrets.map(s => s.name).sort()
    const deployed = async (): Promise<string[]> => (await api<{ services: Array<{ name: string }> }>(kernel, 'GET', '/api/v1/status', { token })).body.services.map(s => s.name)
    const volumes = async (name: string): Promise<string[]> => ((await docker.listVolumes({ filters: { name: [name] } })).Volumes ?? []).map(v => v.Name)

    // A create whose deploy fails (its image cannot be pulled) leaves nothing behind, and the same name works next.
    const failed = await runCli(['db', 'create', 'postgres', pg, '--image', '127.0.0.1:1/berth-test/absent:1'], { env, timeout: 60_000 })
    t.equal(failed.code, 1)
    t.match(failed.stderr, new RegExp(`^berth: db create ${pg}: the deploy failed: .*; rolled back: nothing of it is kept\\n$`), 'one line: why, and that nothing is kept')
    t.notOk(existsSync(join(cwd, 'services', pg)), 'no service folder')
    t.same(await secretNames(), [], 'no secret')
    t.notOk((await deployed()).includes(pg), 'no deployed service')
    t.same(await volumes(`${pg}_data`), [], 'no volume')

    const created = await runCli(['db', 'create', 'postgres', pg], { env, timeout: 180_000 })
    t.equal(created.code, 0, created.stderr)
    t.match(created.stdout, new RegExp(`^postgres ${pg} deployed from ${postgres}, healthy\\nservice file: .*services/${pg}/service.toml; password: secret ${pg.toUpperCase()}_PASSWORD\\nservices on its node reach it as postgres://app:\\$\\{secrets\\.${pg.toUpperCase()}_PASSWORD\\}@${pg}:5432/app\\npostgres://app:[\\w-]+@127\\.0\\.0\\.1:\\d+/app\\n$`))
    const url = created.stdout.trim().split('\n').at(-1) ?? ''
    const port = Number(/:(\d+)\/app$/.exec(url)?.[1])
    t.ok(port >= 15432 && port < 15532, `the first free host port from 15432 (${port})`)
    const password = decodeURIComponent(/^postgres:\/\/app:([^@]+)@/.exec(url)?.[1] ?? '')
    const file = readFileSync(join(cwd, 'services', pg, 'service.toml'), 'utf8')
    t.notMatch(file, password, 'the password is not in the service file')
    t.match(file, `POSTGRES_PASSWORD = "\${secrets.${pg.toUpperCase()}_PASSWORD}"`)
    t.match(file, `internal = true\nextra_ports = ["${port}:5432"]`, 'internal, on the host port recorded in the file')
    const { stdout: answer } = await run('psql', [url, '-tAc', 'CREATE TABLE t (v text); INSERT INTO t VALUES (\'kept\'); SELECT v FROM t'])
    t.equal(answer.trim().split('\n').at(-1), 'kept', 'psql connects with the printed string')
    await t.rejects(run('psql', [url.replace(encodeURIComponent(password), 'wrong'), '-tAc', 'SELECT 1']), 'a wrong password is refused')
    const hook = await kernel.service('reconciler').reconciler.exec(pg, 'pg_dump -U app -d app -f /var/lib/postgresql/data/berth-dump.sql && cat /var/lib/postgresql/data/berth-dump.sql')
    t.equal(hook.exitCode, 0, hook.output)
    t.match(hook.output, /kept/, 'the backup hook dumps the database into its volume')

    // A change to the file recreates the container: the printed string still works.
    const containerOf = async (service: string): Promise<string | undefined> => [...(await instanceContainers(docker, instance)).values()].find(c => c.Labels['berth.service'] === service)?.Id
    const before = await containerOf(pg)
    writeFileSync(join(cwd, 'services', pg, 'service.toml'), file.replace('POSTGRES_DB = "app"', 'POSTGRES_DB = "app"\nTZ = "UTC"'))
    const redeployed = await runCli(['deploy', pg], { env, timeout: 120_000 })
    t.equal(redeployed.code, 0, redeployed.stderr)
    t.not(await containerOf(pg), before, 'the container was recreated')
    const again = await pollUntil(async () => (await run('psql', [url, '-tAc', 'SELECT v FROM t'])).stdout.trim(), { timeout: 60_000, what: 'postgres answering after the recreate' })
    t.equal(again, 'kept', 'the same connection string reaches the same data after the recreate')

    const made = await runCli(['db', 'create', 'redis', cache], { env, timeout: 180_000 })
    t.equal(made.code, 0, made.stderr)
    const [, , reach, redisUrl] = made.stdout.trim().split('\n')
    t.match(redisUrl, /^redis:\/\/default:[\w-]+@127\.0\.0\.1:\d+\/0$/)
    t.equal(reach, `services on its node reach it as redis://default:\${secrets.${cache.toUpperCase()}_PASSWORD}@${cache}:6379/0`)
    const { stdout: pong } = await run('redis-cli', ['-u', redisUrl, '--no-auth-warning', 'ping'])
    t.equal(pong.trim(), 'PONG', 'redis-cli connects with the printed string')
    const { stdout: denied } = await run('redis-cli', ['-u', redisUrl.replace(/default:[\w-]+@/, 'default:wrong@'), '--no-auth-warning', 'ping'])
    t.match(denied, /WRONGPASS|NOAUTH|invalid/i, 'a wrong password is refused')

    // Another service of the database's project (whose secret the password is), with the printed reference in its environment, reaches the database by name.
    const client = `cl${instance.slice(-6)}`
    writeServices(cwd, { [client]: `project = "${cache}"\n[[service]]\nname = "${client}"\nimage = "${redis}"\ncommand = ["/bin/busybox", "sleep", "600"]\n[service.env]\nCACHE_URL = "${reach.replace(/^.* as /, '')}"\n` })
    t.equal((await runCli(['deploy', client], { env, timeout: 60_000 })).code, 0)
    const fromService = await kernel.service('reconciler').reconciler.exec(client, 'redis-cli -u "$CACHE_URL" --no-auth-warning ping')
    t.same([fromService.exitCode, fromService.output.trim()], [0, 'PONG'], 'a service reaches it as <name>:6379 with the secret\'s reference')

    const status = await api<{ services: Array<{ name: string, containers: Array<{ health?: string }> }> }>(kernel, 'GET', '/api/v1/status', { token })
    t.same(status.body.services.filter(s => s.name === pg || s.name === cache).map(s => s.containers[0].health), ['healthy', 'healthy'], 'the engine\'s health checks pass')
    t.same(await secretNames(), [`${cache.toUpperCase()}_PASSWORD`, `${pg.toUpperCase()}_PASSWORD`])
    const routes = await api<{ routes: Array<{ service: string }> }>(kernel, 'GET', '/api/v1/proxy/routes', { token })
    t.same(routes.body.routes.filter(r => r.service === pg || r.service === cache), [], 'no route (nor certificate) under the cluster\'s domain: databases are internal')

    // Refusals, each before anything is written.
    const taken = await runCli(['db', 'create', 'postgres', pg], { env })
    t.same([taken.code, taken.stderr.replace(/\(.*\)/, '(…)')], [1, `berth: a service named ${pg} already exists (…)\n`])
    const claimed = await runCli(['db', 'create', 'redis', 'other', '--port', String(port)], { env })
    t.same([claimed.code, claimed.stderr], [1, `berth: host port ${port} is claimed by service ${pg}\n`])
    const listener = createServer()
    await new Promise<void>(resolve => { listener.listen(0, '127.0.0.1', resolve) })
    t.teardown(() => { listener.close() })
    const busy = (listener.address() as AddressInfo).port
    const inUse = await runCli(['db', 'create', 'redis', 'other', '--port', String(busy)], { env })
    t.same([inUse.code, inUse.stderr], [1, `berth: host port ${busy} is in use on this host\n`])
    const earlier = `lo${instance.slice(-6)}`
    await docker.createVolume({ Name: `${earlier}_data` })
    t.teardown(async () => { await docker.getVolume(`${earlier}_data`).remove().catch(() => undefined) })
    const leftover = await runCli(['db', 'create', 'redis', earlier], { env })
    t.same([leftover.code, leftover.stderr], [1, `berth: the volume ${earlier}_data exists already and holds the data of an earlier ${earlier}, made with another password: remove it (docker volume rm ${earlier}_data) or choose another name\n`])
    const engine = await runCli(['db', 'create', 'mysql', 'x'], { env })
    t.same([engine.code, engine.stderr], [2, 'berth: engine must be one of postgres, redis, got mysql\n'])
    const badPort = await runCli(['db', 'create', 'redis', 'x', '--port', 'high'], { env })
    t.same([badPort.code, badPort.stderr], [2, 'berth: --port must be a port from 1 to 65535, got high\n'])
    const badName = await runCli(['db', 'create', 'redis', 'Bad_Name'], { env })
    t.match(badName, { code: 1, stderr: /^berth: name must be a service name/ })
    const viewer = await tokenFor(kernel, 'viewer')
    t.equal((await api(kernel, 'POST', '/api/v1/databases', { token: viewer, body: { engine: 'redis', name: 'x' } })).status, 403, 'a viewer cannot create a database')
    t.notOk(existsSync(join(cwd, 'services', 'other')) || existsSync(join(cwd, 'services', earlier)), 'nothing written by the refusals')
    t.same(await secretNames(), [`${cache.toUpperCase()}_PASSWORD`, `${pg.toUpperCase()}_PASSWORD`], 'no secret either')
  })
}
