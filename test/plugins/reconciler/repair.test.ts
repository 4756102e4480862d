// Continuous reconcile. Against a real dockerd of the test's own, which the test crashes and starts
// again (Docker's restart policies are the subject): the services serve again within 10 s of the
// engine answering, the same containers, a dependant started after what it depends on, and a container
// that will not start is replaced by the next deploy. On the stand-in engine (test/support/fake-engine.ts;
// the repair loop is the subject, not Docker): the engine away and back, a container removed by hand
// is replaced within the same bound, a stray of the instance is removed, a stop request
// (POST /api/v1/stop) is respected, a paused one unpaused, and a service whose repair keeps failing
// backs off, says why, and does not hold the others back.
import t from 'tap'
import type { OperatorAlert } from '../../../kernel/index.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import { repairBackoffMs } from '../../../plugins/reconciler/repair.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { requireComponent } from '../../support/component.js'
import { BUSYBOX_IMAGE, busyboxImage, HTTPD_IMAGE, HTTPD_INDEX, httpdImage } from '../../support/docker.js'
import { extraEngine } from '../../support/engines.js'
import { FAKE_HTTPD, FAKE_IDLE, FakeEngine } from '../../support/fake-engine.js'
import { api, instanceContainers, reconcilerKernel, writeServices, type ReconcilerInstance } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

/** The goal: serving again this soon after the engine answers, or after a container is removed. */
const BOUND_MS = 10_000

t.test('backoff: the interval doubled after each failure, at most five minutes', async t => {
  t.same([1, 2, 3, 4].map(n => repairBackoffMs(n, 5000)), [5000, 10_000, 20_000, 40_000])
  t.equal(repairBackoffMs(20, 5000), 300_000)
})

t.test('the engine crashes and comes back: repaired within the bound, as Docker\'s restart policies allow', async t => {
  const engine = await requireComponent(t, 'docker', async () => await extraEngine(t, 'repair'))
  if (engine === undefined) return
  await Promise.all([httpdImage(engine.docker), busyboxImage(engine.docker)])
  // The product's default interval (5 s): nothing about repair is tuned for the test.
  const instance = await reconcilerKernel(t, engine.docker, { extra: { docker_socket: engine.socket, repair_interval_secs: 5 } })
  const { kernel, cwd, project, token } = instance
  writeServices(cwd, {
    [project]: '[[service]]\nname = "web"\nimage = "berth-test/httpd:1"\nport = 8080\nhealth = "/"\nreplicas = 2\n' +
      '[[service]]\nname = "worker"\nimage = "berth-test/busybox:2"\ncommand = ["/bin/busybox", "sleep", "3600"]\ndepends_on = ["web"]\n'
  })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
  await pollUntil(async () => await everythingServes(instance), { what: 'the services to serve after the deploy' })
  const deployed = await instanceContainers(engine.docker, instance.instance)

  // The engine dies with its containers (as a crash would), and comes back: they stay exited by themselves.
  await engine.crash()
  t.equal((await api(kernel, 'GET', '/api/v1/status', { token })).status, 503, 'the status says the engine is away')
  await engine.startAgain()
  const back = Date.now()
  await pollUntil(async () => await everythingServes(instance), { timeout: BOUND_MS, what: 'every replica to serve again after the engine came back' })
  t.comment(`serving again ${Date.now() - back} ms after the engine answered`)
  const restarted = await instanceContainers(engine.docker, instance.instance)
  t.same([...restarted.keys()].sort(), [...deployed.keys()].sort(), 'the same containers')
  for (const [name, container] of deployed) t.equal(restarted.get(name)?.Id, container.Id, `${name} was started again, not recreated`)
  // The engine restarts what depends on nothing by itself; a dependant is started by the repair, after what it depends on.
  const inspected = await Promise.all(['web-1', 'web-2', 'worker-1'].map(async n => await engine.docker.getContainer(`${project}-${n}`).inspect()))
  t.same(inspected.map(c => c.HostConfig.RestartPolicy?.Name), ['unless-stopped', 'unless-stopped', 'no'], 'restart policies: the dependant\'s is the repair')
  const [web1, web2, workerStart] = inspected.map(c => Date.parse(c.State.StartedAt))
  t.ok(workerStart > Math.max(web1, web2), 'worker started after both replicas of web')

  // Stopped by a stop request (which keeps the repair off worker), web restarted.
  t.same((await api(kernel, 'POST', '/api/v1/stop', { token })).body, { stopped: ['web', 'worker'], containers: 3 })
  t.equal((await api(kernel, 'POST', '/api/v1/services/web/restart', { token })).status, 200)
  // worker's container is swapped for one that cannot start (its command is missing), as a stale engine task would be.
  const original = await engine.docker.getContainer(`${project}-worker-1`).inspect()
  await engine.docker.getContainer(original.Id).remove({ force: true })
  const broken = await engine.docker.createContainer({ name: `${project}-worker-1`, Image: original.Config.Image, Cmd: ['/missing'], Labels: original.Config.Labels })
  const refused = await api<{ error: string, code: string }>(kernel, 'POST', '/api/v1/services/worker/restart', { token })
  t.match(refused, { status: 502, body: { code: 'BERTH_ENGINE_FAILED', error: /^restarting a container: .*\/missing/ } }, 'an engine failure reaches the client with its cause')
  const redeployed = (await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body
  t.same([redeployed.changed, redeployed.errors], [['worker'], []], 'the next deploy starts the other, replacing what will not start')
  await pollUntil(async () => await everythingServes(instance), { what: 'the services to serve after the deploy' })
  t.not((await instanceContainers(engine.docker, instance.instance)).get(`${project}-worker-1`)?.Id, broken.id, 'the container that would not start was replaced')
})

t.test('the repair loop: the engine away and back, removals by hand, a stray, a stop request, a pause, a failing repair (stand-in engine)', async t => {
  const engine = new FakeEngine({ images: { [HTTPD_IMAGE]: FAKE_HTTPD, [BUSYBOX_IMAGE]: FAKE_IDLE } })
  // A repair each second (the bound with the product's default of 5 s is shown on Docker above).
  const instance = await reconcilerKernel(t, engine, { extra: { repair_interval_secs: 1 } })
  const { kernel, cwd, project, token } = instance
  const alerts: OperatorAlert[] = []
  kernel.events.on('operator.alert', alert => { alerts.push(alert) })
  writeServices(cwd, {
    [project]: '[[service]]\nname = "web"\nimage = "berth-test/httpd:1"\nport = 8080\nhealth = "/"\nreplicas = 2\n' +
      '[[service]]\nname = "worker"\nimage = "berth-test/busybox:2"\ncommand = ["/bin/busybox", "sleep", "3600"]\ndepends_on = ["web"]\n'
  })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
  await pollUntil(async () => await everythingServes(instance), { what: 'the services to serve after the deploy' })
  const ids = (): Map<string, string> => new Map([...engine.containers()].map(([name, c]) => [name, c.id]))
  const deployed = ids()

  // The engine goes away with its containers, and comes back: it starts web's replicas, the repair starts worker.
  engine.goAway({ containersExit: true })
  t.equal((await api(kernel, 'GET', '/api/v1/status', { token })).status, 503, 'the status says the engine is away')
  await engine.comeBack()
  t.equal(engine.containers().get(`${project}-worker-1`)?.state, 'exited', 'the engine did not start the dependant')
  await pollUntil(async () => await everythingServes(instance), { timeout: BOUND_MS, what: 'every replica to serve again after the engine came back' })
  t.same(ids(), deployed, 'the same containers, started again')
  const started = (name: string): number => engine.containers().get(`${project}-${name}`)?.startedAt ?? 0
  t.ok(started('worker-1') > Math.max(started('web-1'), started('web-2')), 'worker started after both replicas of web')

  // A replica removed by hand is replaced.
  await engine.removeByHand(`${project}-web-1`)
  const removed = Date.now()
  await pollUntil(async () => await everythingServes(instance), { timeout: BOUND_MS, what: 'the removed replica to be replaced' })
  t.comment(`replaced ${Date.now() - removed} ms after the removal`)
  t.not(engine.containers().get(`${project}-web-1`)?.id, deployed.get(`${project}-web-1`), 'by a new container')

  // A container of the instance that belongs to no deployed service is removed.
  await engine.create({
    spec: { name: 'stray', project, image: BUSYBOX_IMAGE, runtime: 'docker', replicas: 1, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false },
    replica: 1, hash: 'x', env: {}
  })
  t.equal(engine.containers().get(`${project}-stray-1`)?.state, 'running', 'a stray runs')
  await pollUntil(() => !engine.containers().has(`${project}-stray-1`), { timeout: BOUND_MS, what: 'the stray to be removed' })
  t.match((await api(kernel, 'GET', '/metrics')).text, /berth_reconciler_repairs_total\{service="web"\} [1-9]/, 'repairs are counted')

  // A stop request stays in force through repairs, until the next deploy or restart.
  t.same((await api(kernel, 'POST', '/api/v1/stop', { token })).body, { stopped: ['web', 'worker'], containers: 3 })
  const passes = await repairPasses(instance)
  await pollUntil(async () => await repairPasses(instance) >= passes + 2, { timeout: 20_000, what: 'two repair passes after the stop' })
  const stopped = await statusOf(instance)
  t.match(stopped.get('web'), { status: 'stopped', running_replicas: 0, reason: /^stopped by a stop request at .*; its next deploy or restart starts it$/ }, 'the stopped services stay stopped, and say why')
  t.match(stopped.get('worker'), { status: 'stopped', reason: /^stopped by a stop request/ })
  t.same([...engine.containers().values()].map(c => c.state), ['exited', 'exited', 'exited'], 'no container was started again')
  t.equal((await api(kernel, 'POST', '/api/v1/services/web/restart', { token })).status, 200)
  const web = (await statusOf(instance)).get('web')
  t.match(web, { status: 'running', running_replicas: 2 }, 'a restart starts a stopped service')
  t.equal(web?.reason, undefined, 'which is no longer stopped')
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [], 'the next deploy starts the other')
  await pollUntil(async () => await everythingServes(instance), { what: 'the services to serve after the deploy' })

  // A paused replica is unpaused, the same container.
  const paused = engine.containers().get(`${project}-web-2`)?.id ?? ''
  engine.pause(paused)
  await pollUntil(() => engine.containers().get(`${project}-web-2`)?.state === 'running', { timeout: BOUND_MS, what: 'the paused replica to run again' })
  t.equal(engine.containers().get(`${project}-web-2`)?.id, paused, 'the same container, unpaused')
  await pollUntil(async () => await everythingServes(instance), { what: 'the unpaused replica to serve' })

  // A service whose repair fails (its image is gone, and cannot be pulled) backs off and says why; the others are still repaired.
  const doomed = '127.0.0.1:1/berth-test/doomed:1'
  engine.addImage(doomed)
  writeServices(cwd, { [`${project}x`]: `[[service]]\nname = "doomed"\nimage = "${doomed}"\ncommand = ["/bin/busybox", "sleep", "3600"]\n` })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
  await engine.removeByHand(`${project}x-doomed-1`)
  engine.removeImage(doomed)
  const failing = await pollUntil(async () => { const s = (await statusOf(instance)).get('doomed'); return s?.reason !== undefined && s }, { timeout: BOUND_MS, what: 'doomed to fail its repair' })
  t.match(failing, { status: 'stopped', running_replicas: 0, reason: /^repair failed 1 time in a row: pulling 127\.0\.0\.1:1\/berth-test\/doomed:1: .*; next attempt at \d{4}-/ })
  t.match(alerts.filter(a => a.kind === 'repair.failed'), [{ subject: 'doomed', message: /^doomed cannot be repaired: pulling 127\.0\.0\.1:1\/berth-test\/doomed:1/ }], 'operators hear of it once')
  await engine.removeByHand(`${project}-worker-1`)
  await pollUntil(async () => await everythingServes(instance), { timeout: BOUND_MS, what: 'worker to be replaced while doomed fails' })
  await pollUntil(async () => /repair failed 2 times/.test((await statusOf(instance)).get('doomed')?.reason ?? ''), { timeout: 20_000, what: 'a second attempt after the backoff' })
  t.equal(alerts.filter(a => a.kind === 'repair.failed').length, 1, 'a failure streak is one alert')
  t.match((await api(kernel, 'GET', '/metrics')).text, /berth_reconciler_repair_failures_total\{service="doomed"\} [2-9]/)
})

async function statusOf (instance: ReconcilerInstance): Promise<Map<string, ServiceStatus>> {
  const answer = await api<{ services: ServiceStatus[] }>(instance.kernel, 'GET', '/api/v1/status', { token: instance.token })
  if (answer.status !== 200) return new Map()
  return new Map(answer.body.services.map(s => [s.name, s]))
}

/** web's two replicas answer on their published ports and worker runs. */
async function everythingServes (instance: ReconcilerInstance): Promise<boolean> {
  const status = await statusOf(instance)
  const web = status.get('web')
  if (web?.running_replicas !== 2 || status.get('worker')?.running_replicas !== 1) return false
  const pages = await Promise.all(web.containers.map(async c => await fetch(`http://${c.address ?? ''}/`).then(async r => await r.text(), () => '')))
  return pages.length === 2 && pages.every(page => page === HTTPD_INDEX)
}

async function repairPasses (instance: ReconcilerInstance): Promise<number> {
  const metrics = (await api(instance.kernel, 'GET', '/metrics')).text
  return Number(/^berth_reconciler_repair_passes_total (\d+)$/m.exec(metrics)?.[1] ?? 0)
}
