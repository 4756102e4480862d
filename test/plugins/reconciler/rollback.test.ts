// A rollout whose new image never gets healthy, on the stand-in engine (test/support/fake-engine.ts; the
// reconciler's rollout and rollback, not Docker, are the subject): by default the replaced replica is
// rolled back to the previous spec, the status says degraded with the reason, operators are
// alerted and the rollback is counted; with rollback_on_failure = false the broken replica stays, does
// not count as serving, and the status says failed. A deploy that fails before any container changes
// keeps the previous spec.
import t from 'tap'
import type { OperatorAlert } from '../../../kernel/index.js'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { HTTPD_IMAGE, NEVER_HEALTHY_IMAGE as NEVER_HEALTHY } from '../../support/docker.js'
import { FAKE_HTTPD, FAKE_IDLE, FakeEngine } from '../../support/fake-engine.js'
import { api, reconcilerKernel, writeServices, type ReconcilerInstance } from '../../support/orchestration.js'

/** A stand-in engine with the httpd image and one that never gets healthy (nothing listens on its port). */
function engineWithImages (): FakeEngine {
  return new FakeEngine({ images: { [HTTPD_IMAGE]: FAKE_HTTPD, [NEVER_HEALTHY]: FAKE_IDLE } })
}

const web = (image: string, extra = ''): string =>
  `[[service]]\nname = "web"\nimage = "${image}"\nport = 8080\nhealth = "/"\nreplicas = 2\n${extra}`

async function webStatus (instance: ReconcilerInstance): Promise<ServiceStatus | undefined> {
  const { body } = await api<{ services: ServiceStatus[] }>(instance.kernel, 'GET', '/api/v1/status', { token: instance.token })
  return body.services.find(s => s.name === 'web')
}

function alertsOf (instance: ReconcilerInstance): OperatorAlert[] {
  const alerts: OperatorAlert[] = []
  instance.kernel.events.on('operator.alert', alert => { alerts.push(alert) })
  return alerts
}

t.test('a rollout that never gets healthy is rolled back; status, alerts and metrics say so (stand-in engine)', async t => {
  const engine = engineWithImages()
  const instance = await reconcilerKernel(t, engine, { extra: { health_timeout_secs: 5 } })
  const { kernel, cwd, project, token } = instance
  const alerts = alertsOf(instance)
  const deploy = async (): Promise<DeployResult> => (await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body
  writeServices(cwd, { [project]: web('berth-test/httpd:1') })
  t.same((await deploy()).errors, [])
  const before = new Map([...engine.containers()].map(([name, c]) => [name, { ...c }]))

  writeServices(cwd, { [project]: web(NEVER_HEALTHY) })
  const failed = await deploy()
  t.same(failed, {
    deployed: [], changed: ['web'], removed: [],
    errors: [{ service: 'web', project, error: 'health check / did not pass within 5 s; rolled back to berth-test/httpd:1' }]
  }, 'the deploy fails, naming the check and the rollback')
  const after = engine.containers()
  t.not(after.get(`${project}-web-1`)?.id, before.get(`${project}-web-1`)?.id, 'the replaced replica is a new container')
  t.equal(after.get(`${project}-web-1`)?.image, 'berth-test/httpd:1', 'of the previous image')
  t.equal(after.get(`${project}-web-1`)?.labels['berth.hash'], before.get(`${project}-web-1`)?.labels['berth.hash'], 'and the previous spec')
  t.equal(after.get(`${project}-web-2`)?.id, before.get(`${project}-web-2`)?.id, 'the replica the rollout never reached is untouched')

  t.match(await webStatus(instance), {
    status: 'degraded', replicas: 2, running_replicas: 2, image: 'berth-test/httpd:1',
    reason: `deploy of ${NEVER_HEALTHY} failed: health check / did not pass within 5 s; rolled back to berth-test/httpd:1`
  }, 'the status tells the truth: the previous version serves, the new one failed')
  t.match(alerts, [
    { kind: 'deploy.failed', subject: 'web', message: `deploy of web (${NEVER_HEALTHY}) failed: health check / did not pass within 5 s; rolled back to berth-test/httpd:1`, details: { project, trigger: 'deploy', image: NEVER_HEALTHY, rolled_back: true } },
    { kind: 'deploy.rolled-back', subject: 'web', message: `web was rolled back to berth-test/httpd:1: its deploy of ${NEVER_HEALTHY} failed`, details: { from_image: NEVER_HEALTHY, to_image: 'berth-test/httpd:1' } }
  ])
  t.equal(alerts.length, 2)
  t.match((await api(kernel, 'GET', '/metrics')).text, /berth_reconciler_rollbacks_total\{service="web"\} 1\n/, 'the rollback is counted')
  const { body: history } = await api<{ deploys: Array<{ errors: unknown[], deployed: string[] }> }>(kernel, 'GET', '/api/v1/deploys', { token })
  t.match(history.deploys.at(-1), { deployed: [], errors: [{ service: 'web' }] }, 'the history has the failed deploy')

  // A deploy that fails before any container changes keeps the previous spec, and says so.
  writeServices(cwd, { [project]: web('127.0.0.1:1/none:1') })
  t.match((await deploy()).errors, [{ service: 'web', error: /^pulling 127\.0\.0\.1:1\/none:1: / }])
  t.match(await webStatus(instance), { status: 'degraded', running_replicas: 2, image: 'berth-test/httpd:1', reason: /^deploy of 127\.0\.0\.1:1\/none:1 failed: pulling .*; berth-test\/httpd:1 runs as before$/ })
  t.equal(alerts.filter(a => a.kind === 'deploy.rolled-back').length, 1, 'nothing was rolled back this time')

  // A deploy that works clears the failure.
  writeServices(cwd, { [project]: web('berth-test/httpd:1', '[service.env]\nV = "2"\n') })
  t.same(await deploy(), { deployed: ['web'], errors: [], changed: ['web'], removed: [] })
  const fixed = await webStatus(instance)
  t.match(fixed, { status: 'running', running_replicas: 2 })
  t.equal(fixed?.reason, undefined, 'no reason any more')
})

t.test('rollback_on_failure = false: the broken replica stays, does not count, and the service is failed (stand-in engine)', async t => {
  const engine = engineWithImages()
  const instance = await reconcilerKernel(t, engine, { extra: { health_timeout_secs: 5 } })
  const { kernel, cwd, project, token } = instance
  const alerts = alertsOf(instance)
  writeServices(cwd, { [project]: web('berth-test/httpd:1') })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])

  writeServices(cwd, { [project]: web(NEVER_HEALTHY, 'rollback_on_failure = false\n') })
  const failed = await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })
  t.same(failed.body.errors, [{ service: 'web', project, error: 'health check / did not pass within 5 s' }], 'the rollout stops at the first replica')
  const containers = engine.containers()
  t.equal(containers.get(`${project}-web-1`)?.image, NEVER_HEALTHY, 'the broken replica is left as it is')
  t.equal(containers.get(`${project}-web-2`)?.image, 'berth-test/httpd:1', 'the other one still runs the previous image')
  t.match(await webStatus(instance), {
    status: 'failed', replicas: 2, running_replicas: 1, image: NEVER_HEALTHY,
    reason: `deploy of ${NEVER_HEALTHY} failed: health check / did not pass within 5 s`
  }, 'only the serving replica counts, and the service is failed')
  t.same(alerts.map(a => [a.kind, a.subject, a.details?.rolled_back]), [['deploy.failed', 'web', false]], 'one alert, no rollback')
  t.notMatch((await api(kernel, 'GET', '/metrics')).text, /berth_reconciler_rollbacks_total\{service="web"\}/)
})
