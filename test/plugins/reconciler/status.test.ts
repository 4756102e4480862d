// The status entry as a pure function of the stored service and the containers the engine reports:
// only replicas that serve count (running, engine-healthy when checked, not a failed rollout's
// replacement, not the canary), and the status value and reason follow from the stored failure, a
// stop, a failing repair, or a deploy whose outcome was never stored.
import t from 'tap'
import type { ContainerState } from '../../../plugins/reconciler/container-engine.js'
import type { ServiceSpec } from '../../../plugins/reconciler/spec.js'
import type { DeployFailure, StoredService } from '../../../plugins/reconciler/state.js'
import { serviceStatus } from '../../../plugins/reconciler/status.js'

const spec: ServiceSpec = { name: 'web', project: 'p', image: 'web:2', runtime: 'docker', replicas: 2, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false }

function stored (extra: Partial<StoredService> = {}): StoredService {
  return { spec, source: 'services/p/service.toml', deployed_at: '2026-01-01T00:00:00.000Z', ...extra }
}

function replica (replica: number, extra: Partial<ContainerState> = {}): ContainerState {
  return { runtime: 'docker', id: `id-${replica}`, name: `p-web-${replica}`, service: 'web', project: 'p', replica, hash: 'h', imageId: 'i', running: true, state: 'running', ...extra }
}

const failure = (recovery: DeployFailure['recovery'], extra: Partial<DeployFailure> = {}): DeployFailure =>
  ({ at: '2026-01-01T00:00:00.000Z', trigger: 'deploy', image: 'web:2', hash: 'h2', error: 'health check / did not pass within 60 s', recovery, ...extra })

t.test('only serving replicas count', async t => {
  t.match(serviceStatus(stored(), [replica(1), replica(2)], 0), { status: 'running', running_replicas: 2 })
  t.match(serviceStatus(stored(), [replica(1, { health: 'healthy' }), replica(2, { health: 'unhealthy' })], 0), { status: 'degraded', running_replicas: 1 }, 'the engine\'s healthcheck says unhealthy')
  t.match(serviceStatus(stored(), [replica(1, { health: 'starting' }), replica(2)], 0), { status: 'degraded', running_replicas: 1 }, 'not healthy yet')
  t.match(serviceStatus(stored(), [replica(1), replica(2, { running: false, state: 'restarting' })], 0), { status: 'degraded', running_replicas: 1 }, 'restarting')
  t.match(serviceStatus(stored(), [replica(1), replica(1, { id: 'c', canary: true, name: 'p-web-canary' })], 0), { status: 'degraded', running_replicas: 1 }, 'a canary is not a replica')
  t.match(serviceStatus(stored(), [replica(1, { running: false, state: 'exited' }), replica(2, { running: false, state: 'exited' })], 0), { status: 'stopped', running_replicas: 0 })
})

t.test('the status and reason follow a failed deploy, a stop and a failing repair', async t => {
  const left = serviceStatus(stored({ failure: failure('none', { unready: 'id-1' }) }), [replica(1), replica(2)], 0)
  t.match(left, { status: 'failed', running_replicas: 1, reason: 'deploy of web:2 failed: health check / did not pass within 60 s' }, 'the replacement left running does not count')
  t.match(serviceStatus(stored({ failure: failure('rolled-back') }), [replica(1), replica(2)], 0), { status: 'degraded', running_replicas: 2 })
  t.match(serviceStatus(stored({ failure: failure('unchanged') }), [replica(1), replica(2)], 0), { status: 'degraded', reason: /; web:2 runs as before$/ })
  const repairing = 'repair failed 1 time in a row: pulling web:2: refused; next attempt at 2026-01-01T00:00:05.000Z'
  t.match(serviceStatus(stored(), [], 0, undefined, repairing), { status: 'stopped', reason: repairing })
  t.equal(serviceStatus(stored(), [replica(1), replica(2)], 0).reason, undefined, 'no reason when all is well')
  t.match(serviceStatus(stored({ stopped_at: '2026-01-01T00:01:00.000Z' }), [replica(1, { running: false, state: 'exited' })], 0, undefined, repairing), {
    status: 'stopped', reason: 'stopped by a stop request at 2026-01-01T00:01:00.000Z; its next deploy or restart starts it'
  }, 'a stop says so before anything else')
})

t.test('a deploy that began and whose outcome was never stored: degraded, and the reason says what may run', async t => {
  const unfinished = { at: '2026-01-02T00:00:00.000Z', trigger: 'deploy', image: 'web:3', hash: 'h3' }
  t.match(serviceStatus(stored(), [replica(1), replica(2)], 0, undefined, undefined, unfinished), {
    status: 'degraded',
    running_replicas: 2,
    reason: 'a deploy of web:3 (spec h3) began at 2026-01-02T00:00:00.000Z and its outcome could not be stored: containers may run that spec or the one shown; deploy again'
  })
  t.match(serviceStatus(stored(), [replica(1, { running: false, state: 'exited' })], 0, undefined, undefined, unfinished), { status: 'stopped' }, 'a worse status stays')
})
