// The placement function: exact node names, spreading by the documented rule, resources, keeping
// replicas where they are, drains and the grace period — and, for any input, every replica placed
// at most once and only where it may run.
import t from 'tap'
import fc from 'fast-check'
import { place, type PlacementNode, type PlacementService } from '../../../plugins/nodes/placement.js'

const GIB = 1024 ** 3

function node (name: string, extra: Partial<PlacementNode> = {}): PlacementNode {
  return { name, accepts: true, keeps: true, drained: false, capacity: { cpus: 0, memory_bytes: 0 }, ...extra }
}

function service (name: string, replicas: number, extra: Partial<PlacementService> = {}): PlacementService {
  return { name, replicas, cpus: 0, memory_bytes: 0, ...extra }
}

function where (result: ReturnType<typeof place>, name: string): Record<number, string> {
  return Object.fromEntries(result.assignment.get(name) ?? [])
}

const none = new Map<string, Map<number, string>>()

t.test('placement.node matches the node name exactly, never a prefix or substring', async t => {
  const nodes = [node('web'), node('web-2'), node('api')]
  const result = place([service('site', 3, { node: 'web' }), service('shop', 1, { node: 'we' }), service('b', 2, { node: 'web-2' })], nodes, none)
  t.same(where(result, 'site'), { 1: 'web', 2: 'web', 3: 'web' }, 'all replicas on "web", none on "web-2"')
  t.same(where(result, 'b'), { 1: 'web-2', 2: 'web-2' })
  t.same(result.unplaced, [{ service: 'shop', replica: 1, reason: 'no node named "we" in the cluster' }])
})

t.test('unpinned replicas spread: fewest of the service, then fewest in all, then name', async t => {
  const nodes = [node('c'), node('a'), node('b')]
  const first = place([service('api', 4), service('web', 3)], nodes, none)
  t.same(where(first, 'api'), { 1: 'a', 2: 'b', 3: 'c', 4: 'a' })
  t.same(where(first, 'web'), { 1: 'b', 2: 'c', 3: 'a' }, 'web starts on the nodes with the fewest replicas in all')
  t.same(first.unplaced, [])
  const again = place([service('api', 4), service('web', 3)], nodes, first.assignment)
  t.same(again.assignment, first.assignment, 'the same inputs give the same placement')
})

t.test('resources: a replica goes only where its cpu and memory fit', async t => {
  const nodes = [node('small', { capacity: { cpus: 1, memory_bytes: GIB } }), node('large', { capacity: { cpus: 8, memory_bytes: 16 * GIB } })]
  const result = place([service('db', 3, { memory_bytes: 0.75 * GIB, cpus: 0.5 })], nodes, none)
  t.same(where(result, 'db'), { 1: 'large', 2: 'small', 3: 'large' }, 'the second 0.75 GiB replica does not fit the 1 GiB node')
  const full = place([service('huge', 1, { cpus: 16 })], nodes, none)
  t.match(full.unplaced, [{ service: 'huge', replica: 1, reason: /no node has room for it \(16 cpu/ }])
  const unknown = place([service('x', 2, { cpus: 4 })], [node('n')], none)
  t.same(where(unknown, 'x'), { 1: 'n', 2: 'n' }, 'a node that reports no capacity sets no limit')
})

t.test('replicas stay where they are while their node keeps them; scale down drops the highest', async t => {
  const previous = new Map([['api', new Map([[1, 'b'], [2, 'b'], [3, 'a']])]])
  const kept = place([service('api', 2)], [node('a'), node('b'), node('c')], previous)
  t.same(where(kept, 'api'), { 1: 'b', 2: 'b' }, 'no move when nothing forces one')
  const grace = place([service('api', 3)], [node('a'), node('b', { accepts: false, keeps: true }), node('c')], previous)
  t.same(where(grace, 'api'), { 1: 'b', 2: 'b', 3: 'a' }, 'an offline node within its grace period keeps its replicas')
  const gone = place([service('api', 3)], [node('a'), node('b', { accepts: false, keeps: false }), node('c')], previous)
  t.same(where(gone, 'api'), { 1: 'c', 2: 'a', 3: 'a' }, 'after the grace period they move: c has none of the service, then a and c tie and a comes first')
  const changing = place([service('api', 3, { moveFromUnavailable: true })], [node('a'), node('b', { accepts: false, keeps: true }), node('c')], previous)
  t.same(where(changing, 'api'), { 1: 'c', 2: 'a', 3: 'a' }, 'a service being changed leaves an unavailable node at once')
})

t.test('a drained node keeps nothing; pinned work there is unplaced; no node at all says so', async t => {
  const previous = new Map([['api', new Map([[1, 'a'], [2, 'b']])]])
  const drained = node('b', { accepts: false, keeps: false, drained: true })
  const result = place([service('api', 2), service('cache', 1, { node: 'b' })], [node('a'), drained], previous)
  t.same(where(result, 'api'), { 1: 'a', 2: 'a' })
  t.same(result.unplaced, [{ service: 'cache', replica: 1, reason: 'placed on node "b", which is drained' }])
  const offline = node('b', { accepts: false, keeps: false })
  const pinned = place([service('cache', 1, { node: 'b' })], [node('a'), offline], none)
  t.same(where(pinned, 'cache'), { 1: 'b' }, 'pinned work stays on its offline node: it runs when the node returns')
  const nothing = place([service('api', 1)], [offline], none)
  t.same(nothing.unplaced, [{ service: 'api', replica: 1, reason: 'no node takes replicas (every node is offline, unhealthy or drained)' }])
})

t.test('for any cluster: each replica placed once, on a node that may run it, or reported unplaced', async t => {
  const names = ['a', 'b', 'web', 'web-2', 'w']
  const nodeArb = fc.record({
    name: fc.constantFrom(...names),
    accepts: fc.boolean(),
    keeps: fc.boolean(),
    drained: fc.boolean(),
    capacity: fc.record({ cpus: fc.integer({ min: 0, max: 8 }), memory_bytes: fc.constantFrom(0, GIB, 4 * GIB) })
  }).map(n => ({ ...n, keeps: n.keeps || n.accepts, accepts: n.accepts && !n.drained }))
    .map(n => ({ ...n, keeps: n.keeps && !n.drained }))
  const serviceArb = fc.record({
    name: fc.constantFrom('s1', 's2', 's3', 's4'),
    replicas: fc.integer({ min: 0, max: 12 }),
    node: fc.option(fc.constantFrom(...names, 'we', 'web-'), { nil: undefined }),
    cpus: fc.constantFrom(0, 0.5, 2),
    memory_bytes: fc.constantFrom(0, GIB / 2)
  })
  fc.assert(fc.property(
    fc.uniqueArray(nodeArb, { selector: n => n.name, maxLength: 5 }),
    fc.uniqueArray(serviceArb, { selector: s => s.name, maxLength: 4 }),
    fc.array(fc.tuple(fc.constantFrom('s1', 's2', 's3', 's4'), fc.integer({ min: 1, max: 14 }), fc.constantFrom(...names)), { maxLength: 20 }),
    (nodes, services, before) => {
      const previous = new Map<string, Map<number, string>>()
      for (const [s, r, n] of before) previous.set(s, (previous.get(s) ?? new Map<number, string>()).set(r, n))
      const result = place(services, nodes, previous)
      const byName = new Map(nodes.map(n => [n.name, n]))
      for (const s of services) {
        const placed = result.assignment.get(s.name) ?? new Map<number, string>()
        const missing = result.unplaced.filter(u => u.service === s.name).map(u => u.replica)
        const all = [...placed.keys(), ...missing].sort((a, b) => a - b)
        if (JSON.stringify(all) !== JSON.stringify(Array.from({ length: s.replicas }, (_, i) => i + 1))) return false
        for (const [replica, name] of placed) {
          const n = byName.get(name)
          if (n === undefined || n.drained) return false
          if (s.node !== undefined) {
            if (name !== s.node) return false
          } else if (!n.accepts && !(n.keeps && previous.get(s.name)?.get(replica) === name)) return false
        }
      }
      return [...result.assignment.keys()].every(name => services.some(s => s.name === name))
    }), { numRuns: 2000 })
  t.pass('held for 2000 generated clusters')
})
