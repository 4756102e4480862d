// Liveness on the stand-in engine (test/support/fake-engine.ts; the probing and restarts are the
// reconciler's, not Docker's): a container whose probe path fails is restarted after
// failure_threshold probes and the restart is counted in status and metrics; a passing probe, and a
// failing one still inside initial_delay_secs, restart nothing.
import t from 'tap'
import type { DeployResult } from '../../../plugins/reconciler/reconciler.js'
import type { ServiceStatus } from '../../../plugins/reconciler/status.js'
import { HTTPD_IMAGE } from '../../support/docker.js'
import { FAKE_HTTPD, FakeEngine } from '../../support/fake-engine.js'
import { api, reconcilerKernel, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

t.test('failing probes restart the container after failure_threshold; restarts are counted (stand-in engine)', async t => {
  const engine = new FakeEngine({ images: { [HTTPD_IMAGE]: FAKE_HTTPD } })
  const { kernel, cwd, token, project } = await reconcilerKernel(t, engine)
  const probed = (name: string, path: string, delay: number): string =>
    `[[service]]\nname = "${name}"\nimage = "berth-test/httpd:1"\nport = 8080\n[service.liveness]\npath = "${path}"\n` +
    `interval_secs = 1\ntimeout_secs = 3\nfailure_threshold = 2\ninitial_delay_secs = ${delay}\n`
  writeServices(cwd, { [project]: probed('flaky', '/missing', 0) + probed('healthy', '/', 0) + probed('slow', '/missing', 60) })
  t.same((await api<DeployResult>(kernel, 'POST', '/api/v1/deploy', { token })).body.errors, [])
  const startedAt = (): number | undefined => engine.containers().get(`${project}-flaky-1`)?.startedAt
  const firstStart = startedAt()

  const restarts = async (): Promise<Record<string, number>> => {
    const { body } = await api<{ services: ServiceStatus[] }>(kernel, 'GET', '/api/v1/status', { token })
    return Object.fromEntries(body.services.map(s => [s.name, s.restarts]))
  }
  const counted = await pollUntil(async () => { const r = await restarts(); return r.flaky >= 1 && r }, { timeout: 20_000, what: 'a liveness restart of flaky' })
  t.equal(counted.healthy, 0, 'a passing probe restarts nothing')
  t.equal(counted.slow, 0, 'a failing probe inside initial_delay_secs restarts nothing')
  t.not(startedAt(), firstStart, 'the container was restarted')
  const metrics = (await api(kernel, 'GET', '/metrics')).text
  t.match(metrics, new RegExp(`berth_reconciler_liveness_restarts_total\\{service="flaky"\\} ${counted.flaky}\\n`), 'and counted in the metrics')
  t.notMatch(metrics, /liveness_restarts_total\{service="(healthy|slow)"\}/)

  const again = await pollUntil(async () => { const r = await restarts(); return r.flaky >= counted.flaky + 1 && r }, { timeout: 20_000, what: 'a second restart' })
  t.ok(again.flaky > counted.flaky, 'probing goes on after a restart (on the port the restarted container has)')
})
