// The shared state while etcd fails, on a cluster of the test's own: the member leading etcd's raft
// group killed, writes work again once the others have elected one of their own, then go on;
// two of three stopped, writes reject with a 503 (not a hang) and reads answer from the
// mirror; members back, writes work again and another master catches up by itself, and a master whose
// only member was away while the changes it missed were compacted loads everything again.
import t from 'tap'
import type { KeyValueDatabase } from '../../../kernel/key-value.js'
import { SharedStateUnavailable, type SharedState } from '../../../plugins/cluster/shared-state/state.js'
import { SharedPluginStore } from '../../../plugins/cluster/shared-state/view.js'
import { requireComponent } from '../../support/component.js'
import { ownEtcd, raftLeaderIndex } from '../../support/etcd.js'
import { pollUntil } from '../../support/poll.js'
import { openSharedState, testEtcdClient } from '../../support/shared-state.js'

interface Item { n: number }

const items = (state: SharedState): KeyValueDatabase<Item> => new SharedPluginStore(state, 'alpha').db<Item>('items')
const ROOT = '/berth-test/shared/'

t.test('members lost and back: writes refused without a quorum, reads go on, everyone catches up', async t => {
  const cluster = await requireComponent(t, 'etcd', async () => await ownEtcd(t))
  if (cluster === undefined) return
  const { endpoints } = cluster
  // The member leading etcd's raft group is killed first (the hardest case: the others elect one of
  // their own meanwhile); c reaches etcd through one other member only.
  const leader = await raftLeaderIndex(endpoints)
  const [reached, other] = [0, 1, 2].filter(i => i !== leader)
  const a = items(await openSharedState(t, endpoints, ROOT))
  const b = items(await openSharedState(t, endpoints, ROOT))
  const c = items(await openSharedState(t, [endpoints[reached]], ROOT))
  await a.put('before', { n: 0 })
  await pollUntil(() => b.get('before') !== undefined && c.get('before') !== undefined, { timeout: 5000, what: 'b and c to see the first write' })

  await cluster.kill(leader)
  // A write while the others elect a leader may be refused (etcd commits nothing meanwhile, and the
  // client rests members that did not answer); then writes go on.
  await pollUntil(async () => await a.put('one-down-0', { n: 0 }).then(() => true, () => false), { timeout: 15_000, interval: 100, what: 'a write after the kill' })
  t.pass('writes work again after the kill')
  for (let n = 1; n <= 10; n++) await a.put(`one-down-${n}`, { n })
  t.pass('ten more writes acknowledged one after the other')
  await pollUntil(() => b.getKeysCount() === 12, { timeout: 15_000, what: 'b to see them' })

  await cluster.stop(other)
  const refusal = await a.put('no-quorum', { n: -1 }).then(() => undefined, (err: unknown) => err)
  t.type(refusal, SharedStateUnavailable, `refused without a quorum: ${String(refusal)}`)
  t.equal((refusal as SharedStateUnavailable).statusCode, 503)
  t.equal((refusal as SharedStateUnavailable).code, 'BERTH_SHARED_STATE_UNAVAILABLE')
  t.same(a.get('one-down-10'), { n: 10 }, 'the writer still reads its copy')
  t.equal(b.getKeysCount(), 12, 'another master still reads its copy')

  await Promise.all([cluster.start(leader), cluster.start(other)])
  await pollUntil(async () => await a.put('after', { n: 99 }).then(() => true, () => false), { timeout: 30_000, interval: 250, what: 'a write to succeed again' })
  await pollUntil(() => b.get('after')?.n === 99 && c.get('after')?.n === 99, { timeout: 15_000, what: 'b and c to catch up' })

  // c's member away while a writes, removes, and etcd compacts what c has not seen.
  await cluster.stop(reached)
  await a.put('while-away', { n: 7 })
  await a.remove('before')
  const admin = await testEtcdClient(t, [endpoints[leader], endpoints[other]])
  const { header } = await admin.kv.range({ key: Buffer.from(ROOT), limit: 1 })
  await admin.kv.compact({ revision: header.revision, physical: true })
  await cluster.start(reached)
  await pollUntil(() => c.get('while-away')?.n === 7 && c.get('before') === undefined, { timeout: 20_000, what: 'c to load everything again' })
  t.same([...c.getKeys()], [...a.getKeys()], 'c holds what a holds')
})
