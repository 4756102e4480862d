// The planner as a pure function: desired services and existing containers in, actions out, in boot
// order. No engine involved.
import t from 'tap'
import { planDeploy, type Desired } from '../../../plugins/reconciler/plan.js'
import type { ContainerState } from '../../../plugins/reconciler/container-engine.js'
import type { ServiceSpec } from '../../../plugins/reconciler/spec.js'

function spec (name: string, extra: Partial<ServiceSpec> = {}): ServiceSpec {
  return { name, project: 'p', image: `${name}:1`, runtime: 'docker', replicas: 1, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false, ...extra }
}

function desired (name: string, extra: Partial<ServiceSpec> = {}, more: Partial<Desired> = {}): Desired {
  return { spec: spec(name, extra), hash: `h-${name}`, imageId: `img-${name}`, ...more }
}

function container (service: string, replica: number, extra: Partial<ContainerState> = {}): ContainerState {
  return { runtime: 'docker', id: `${service}-${replica}`, name: `p-${service}-${replica}`, service, project: 'p', replica, hash: `h-${service}`, imageId: `img-${service}`, running: true, state: 'running', ...extra }
}

/** The plan as short strings: "service: kind replica (reason)". */
function summary (plan: ReturnType<typeof planDeploy>): string[][] {
  const describe = (service: string, a: ReturnType<typeof planDeploy>['layers'][0][0]['actions'][0]): string => {
    switch (a.kind) {
      case 'create': return `${service}: create ${a.replica}`
      case 'recreate': return `${service}: recreate ${a.replica} (${a.reason})`
      case 'start': return `${service}: start ${a.container.replica}`
      case 'unpause': return `${service}: unpause ${a.container.replica}`
      case 'remove': return `${service}: remove ${a.container.replica} (${a.reason})`
    }
  }
  return [plan.orphans, ...plan.layers].map(layer => layer.flatMap(s => s.actions.length === 0 ? [`${s.name}: unchanged`] : s.actions.map(a => describe(s.name, a))))
}

t.test('nothing exists: every replica is created, dependencies in earlier layers', async t => {
  const plan = planDeploy([desired('web', { depends_on: ['api'], replicas: 2 }), desired('api', { depends_on: ['db'] }), desired('db'), desired('cache')], [], { removeOrphans: true })
  t.same(summary(plan), [[], ['db: create 1', 'cache: create 1'], ['api: create 1'], ['web: create 1', 'web: create 2']])
})

t.test('everything as desired: no action at all', async t => {
  const plan = planDeploy([desired('web', { replicas: 2 }), desired('db')], [container('web', 1), container('web', 2), container('db', 1)], { removeOrphans: true })
  t.same(summary(plan), [[], ['web: unchanged', 'db: unchanged']])
})

t.test('a changed hash, a new image, a stopped container, a forced redeploy', async t => {
  const plan = planDeploy(
    [desired('a'), desired('b'), desired('c'), desired('d', {}, { force: true }), desired('e', {}, { imageId: undefined })],
    [container('a', 1, { hash: 'old' }), container('b', 1, { imageId: 'older' }), container('c', 1, { running: false, state: 'exited' }), container('d', 1), container('e', 1, { imageId: 'whatever' })],
    { removeOrphans: false })
  t.same(summary(plan), [[], ['a: recreate 1 (changed)', 'b: recreate 1 (new image)', 'c: start 1', 'd: recreate 1 (redeploy)', 'e: unchanged']])
})

t.test('scaling down removes the highest replicas; duplicates and strays go too', async t => {
  const plan = planDeploy([desired('web', { replicas: 2 })], [
    container('web', 1), container('web', 2, { id: 'dup-old', hash: 'old' }), container('web', 2), container('web', 3), container('web', Number.NaN, { id: 'stray' })
  ], { removeOrphans: false })
  t.same(summary(plan), [[], ['web: remove 3 (extra replica)', 'web: remove NaN (extra replica)', 'web: remove 2 (duplicate)']])
  const removed = plan.layers[0][0].actions.map(a => a.kind === 'remove' ? a.container.id : '')
  t.same(removed, ['web-3', 'stray', 'dup-old'], 'of two replicas 2 the current one is kept')
})

t.test('orphans are removed only in a deploy of everything declared', async t => {
  const actual = [container('web', 1), container('gone', 1), container('gone', 2)]
  const full = planDeploy([desired('web')], actual, { removeOrphans: true })
  t.same(summary(full), [['gone: remove 1 (orphan)', 'gone: remove 2 (orphan)'], ['web: unchanged']])
  t.same(summary(planDeploy([desired('web')], actual, { removeOrphans: false })), [[], ['web: unchanged']])
})

t.test('a dependency outside the deployed set does not hold a service back', async t => {
  t.same(summary(planDeploy([desired('api', { depends_on: ['db'] })], [], { removeOrphans: false })), [[], ['api: create 1']])
})

t.test('a cluster node plans only the replica indices placed on it; without them, 1 to replicas as always', async t => {
  const plan = planDeploy
  const spec = { name: 'web', project: 'p', image: 'x:1', runtime: 'docker', replicas: 4, depends_on: [], extra_ports: [], env: {}, volumes: [], mounts: [], internal: false }
  const container = (replica: number): ContainerState => ({ runtime: 'docker', id: `c${replica}`, name: `p-web-${replica}`, service: 'web', project: 'p', replica, hash: 'h', imageId: 'i', running: true, state: 'running' })
  const placed = plan([{ spec, hash: 'h', imageId: 'i', replicas: [2, 4] }], [container(1), container(2)], { removeOrphans: false })
  t.same(placed.layers[0][0].actions.map(a => [a.kind, 'replica' in a ? a.replica : a.container.replica]), [['remove', 1], ['create', 4]], 'replica 1 runs elsewhere now; 4 comes here; 2 stays')
  const all = plan([{ spec, hash: 'h', imageId: 'i' }], [container(1), container(2)], { removeOrphans: false })
  t.same(all.layers[0][0].actions.map(a => [a.kind, 'replica' in a ? a.replica : a.container.replica]), [['create', 3], ['create', 4]])
  const none = plan([{ spec, hash: 'h', imageId: 'i', replicas: [] }], [container(1)], { removeOrphans: false })
  t.same(none.layers[0][0].actions.map(a => a.kind), ['remove'], 'no replica here: every container of the service goes')
})

t.test('a repair brings containers back and never changes a spec', async t => {
  const plan = planDeploy([desired('web', { replicas: 3 }), desired('db'), desired('cache')], [
    container('web', 1, { hash: 'h-old', running: false, state: 'exited' }),
    container('web', 2, { running: false, state: 'restarting' }),
    container('web', 3, { running: false, state: 'paused' }),
    container('web', 4),
    container('db', 1, { imageId: 'img-older' }),
    container('cache', 1, { running: false, state: 'exited' }),
    container('cache', 1, { id: 'cache-1b' }),
    container('gone', 1)
  ], { removeOrphans: true, repair: true })
  t.same(summary(plan), [
    ['gone: remove 1 (orphan)'],
    ['web: remove 4 (extra replica)', 'web: start 1', 'web: unpause 3', 'db: unchanged', 'cache: remove 1 (duplicate)']
  ], 'a stopped container of another spec is started, not recreated; the one the engine restarts is left to it; a paused one is unpaused; an older image stays; the running one of two duplicates is kept')
})
