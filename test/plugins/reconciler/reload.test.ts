// `berth reload` against `berth server` in a child process with the proxy in front of a service of two
// replicas and a canary, under a bounded load of keep-alive clients: the server restarts in place
// (same process, cluster.toml read again, the proxy's port never closed), every container is
// recreated one at a time (the canary with its own spec), no request fails, and the service runs at
// its spec afterwards, its canary beside it. A cluster.toml the server cannot use is
// refused and changes nothing.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ReloadRecord } from '../../../plugins/reconciler/reload.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { boundUrls, runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { dockerEngine, httpdImage } from '../../support/docker.js'
import { failedAnswers, startLoad } from '../../support/load.js'
import { inRegistry, instanceContainers, removeInstanceAtEnd, serverDir, startServer, testInstance, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const docker = await requireComponent(t, 'docker', dockerEngine)
/** Reloads under the one load (the window of a single one is tested in the fast lane's tests). */
const RELOADS = 2

if (docker !== undefined) {
  t.test('berth reload: a restart in place and a redeploy of everything, with no failed request through the proxy', async t => {
    // A reload pulls every image: the service's comes from a registry on loopback.
    const image = await inRegistry(t, docker, await httpdImage(docker))
    const instance = testInstance()
    removeInstanceAtEnd(t, docker, instance)
    const sections = (cluster: string): string => [
      '[reconciler]', `instance = "${instance}"`, 'network = "berth-test"', 'stop_timeout_secs = 0', '',
      '[proxy]', 'health_interval_secs = 1', 'connect_timeout_ms = 1000', '', '[acme]', 'directory = ""', '', '[cluster]', `name = "${cluster}"`, ''
    ].join('\n')
    const server = await serverDir(t, ['tokens', 'secrets', 'reconciler', 'cluster', 'nodes', 'proxy'], sections('before'))
    const configFile = join(server.dir, 'cluster.toml')
    const config = readFileSync(configFile, 'utf8')
    const project = `p${instance.slice(-6)}`
    writeServices(server.dir, {
      [project]: `[[service]]\nname = "web"\nimage = "${image}"\nport = 8080\nhealth = "/"\ndomain = "web.test"\nreplicas = 2\n`
    })
    const child = await startServer(t, server)
    // The proxy's port (0 in the configuration) is kept across the reloads; the file written back below keeps the control port at 0 too.
    const proxyUrl = (await boundUrls(child, 'berth server'))['proxy-http']
    const token = readFileSync(join(server.stateDir, 'admin.token'), 'utf8').trim()
    const call = async <T>(method: string, path: string): Promise<{ status: number, body: T }> => {
      const response = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } })
      return { status: response.status, body: await response.json() as T }
    }
    const deployed = await runCli(['deploy'], { cwd: server.dir })
    t.equal(deployed.code, 0, deployed.stderr)
    // A canary of a second spec (the file edited, deployed with --canary) runs beside the replicas through the reloads.
    writeServices(server.dir, {
      [project]: `[[service]]\nname = "web"\nimage = "${image}"\nport = 8080\nhealth = "/"\ndomain = "web.test"\nreplicas = 2\nenv = { VERSION = "2" }\n`
    })
    const canary = await runCli(['deploy', 'web', '--canary'], { cwd: server.dir })
    t.equal(canary.code, 0, canary.stderr)
    const before = await instanceContainers(docker, instance)

    // A configuration the server cannot use: refused, nothing restarts.
    writeFileSync(configFile, config + '\n[proxy.nonsense]\n')
    const refused = await call<{ error: string }>('POST', '/api/v1/reload')
    t.match(refused, { status: 400, body: { error: /^not restarted, the configuration cannot be used: / } })
    t.match((await call<{ reload: ReloadRecord }>('GET', '/api/v1/reload')).body.reload, { state: 'failed', error: /^not restarted/ })
    writeFileSync(configFile, config.replace('name = "before"', 'name = "after"'))

    // Clients that keep their connections alive: the restart closes the old proxy's, none mid-request.
    const load = startLoad(proxyUrl, 'web.test', { maxRequests: 50_000, timeoutMs: 180_000, keepAlive: true })
    await pollUntil(() => load.answers.length >= 20, { what: 'the load to begin' })
    // Reloads in a row: each closes the kept connections of clients that are sending again.
    for (let round = 1; round <= RELOADS; round++) {
      const reloaded = await runCli(['reload'], { cwd: server.dir, env: { BERTH_URL: server.url }, timeout: 180_000 })
      t.equal(reloaded.code, 0, reloaded.stderr)
      t.match(reloaded.stderr, /^reloading: restarting the server, then redeploying every service …\n/)
      t.equal(reloaded.stdout, '  web  updated\n1 deployed (1 updated), 0 removed, 0 failed\n', `reload ${round}`)
      const seen = load.answers.length
      await pollUntil(() => load.answers.length >= seen + 100, { what: `answers after reload ${round}` })
    }
    const answers = await load.stop()
    t.same(failedAnswers(answers), [], `no failed request among ${answers.length} through the reload`)

    t.equal(child.exitCode, null, 'the server process runs on')
    t.equal(readFileSync(join(server.stateDir, 'berth.pid'), 'utf8').trim(), String(child.pid), 'with the same pid')
    t.match(child.output(), /restarted with the configuration read again/)
    t.match((await call<{ cluster: { name?: string } }>('GET', '/api/v1/cluster/info')).body.cluster, { name: 'after' }, 'cluster.toml was read again')
    const after = await instanceContainers(docker, instance)
    for (const name of [`${project}-web-1`, `${project}-web-2`, `${project}-web-canary`]) t.not(after.get(name)?.Id, before.get(name)?.Id, `${name} was recreated`)
    const { services } = (await call<{ services: ServiceStatus[] }>('GET', '/api/v1/status')).body
    t.match(services, [{ name: 'web', status: 'running', replicas: 2, running_replicas: 2, image, domain: 'web.test', canary: { running: true } }], 'the service runs at its spec, its canary beside it')
    t.equal(services[0].reason, undefined)
    const record = (await call<{ reload: ReloadRecord }>('GET', '/api/v1/reload')).body.reload
    t.match(record, { state: 'done', by: 'admin', result: { deployed: ['web'], errors: [], changed: ['web'] } })
    const history = (await call<{ deploys: Array<{ trigger: string }> }>('GET', '/api/v1/deploys')).body.deploys
    t.same(history.slice(-RELOADS).map(d => d.trigger), Array(RELOADS).fill('reload'), 'each redeploy is in the history')
  })
}
