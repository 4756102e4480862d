// The shared state while etcd fails, on a cluster of the test's own: one member killed, writes go on;
// two of three stopped, writes reject with a 503 within their deadline and reads answer from the
// mirror; members back, writes work again and another master catches up by itself, and a master whose
// only member was away while the changes it missed were compacted loads everything again.
import t from 'tap'
import type { KeyValueDatabase } from '../../kernel/key-value.js'
import { SharedStateUnavailable, type SharedState } from '../../kernel/shared-store.js'
import { SharedPluginStore } from '../../kernel/shared-view.js'
import { requireComponent } from '../support/component.js'
import { ownEtcd } from '../support/etcd.js'
import { pollUntil } from '../support/poll.js'
import { openSharedState, testEtcdClient } from '../support/shared-state.js'

interface Item { n: number }

const items = (state: SharedState): KeyValueDatabase<Item> => new SharedPluginStore(state, 'alpha').db<Item>('items')
const ROOT = '/berth-test/shared/'

t.test('members lost and back: writes refused without a quorum, reads go on, everyone catches up', async t => {
  const cluster = await requireComponent(t, 'etcd', async () => await ownEtcd(t))
  if (cluster === undefined) return
  const { endpoints } = cluster
  const a = items(await openSharedState(t, endpoints, ROOT))
  const b = items(await openSharedState(t, endpoints, ROOT))
  // c reaches etcd through the third member only.
  const c = items(await openSharedState(t, endpoints.slice(2), ROOT))
  await a.put('before', { n: 0 })
  await pollUntil(() => b.get('before') !== undefined && c.get('before') !== undefined, { timeout: 5000, what: 'b and c to see the first write' })

  await cluster.kill(0)
  for (let n = 1; n <= 10; n++) await a.put(`one-down-${n}`, { n })
  t.pass('ten writes acknowledged with one member of three killed')
  await pollUntil(() => b.getKeysCount() === 11, { timeout: 15_000, what: 'b to see them' })

  await cluster.stop(1)
  const sentAt = Date.now()
  const refusal = await a.put('no-quorum', { n: -1 }).then(() => undefined, (err: unknown) => err)
  const took = Date.now() - sentAt
  t.type(refusal, SharedStateUnavailable, `refused without a quorum: ${String(refusal)}`)
  t.equal((refusal as SharedStateUnavailable).statusCode, 503)
  t.equal((refusal as SharedStateUnavailable).code, 'BERTH_SHARED_STATE_UNAVAILABLE')
  t.ok(took < 5000, `within the deadline (${took} ms)`)
  t.same(a.get('one-down-10'), { n: 10 }, 'the writer still reads its copy')
  t.equal(b.getKeysCount(), 11, 'another master still reads its copy')

  await Promise.all([cluster.start(0), cluster.start(1)])
  await pollUntil(async () => await a.put('after', { n: 99 }).then(() => true, () => false), { timeout: 30_000, interval: 250, what: 'a write to succeed again' })
  await pollUntil(() => b.get('after')?.n === 99 && c.get('after')?.n === 99, { timeout: 15_000, what: 'b and c to catch up' })

  // c's member away while a writes, removes, and etcd compacts what c has not seen.
  await cluster.stop(2)
  await a.put('while-away', { n: 7 })
  await a.remove('before')
  const admin = testEtcdClient(t, endpoints.slice(0, 2))
  const { header } = await admin.kv.range({ key: Buffer.from(ROOT), limit: 1 })
  await admin.kv.compact({ revision: header.revision, physical: true })
  await cluster.start(2)
  await pollUntil(() => c.get('while-away')?.n === 7 && c.get('before') === undefined, { timeout: 20_000, what: 'c to load everything again' })
  t.same([...c.getKeys()], [...a.getKeys()], 'c holds what a holds')
})
