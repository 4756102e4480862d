// The shared state on a real etcd (three members on loopback): two masters on one prefix see each
// other's writes; ranges come out exactly as from an LMDB database holding the same data; a
// transaction applies whole or not at all (a refused fence, too many writes, a callback that throws);
// a new instance loads everything.
import t from 'tap'
import { join } from 'node:path'
import { Store } from '../../../kernel/store.js'
import type { KeyRange, KeyValueDatabase, KeyValueStore } from '../../../kernel/key-value.js'
import { FencedWriteRefused, TransactionTooLarge, type SharedState } from '../../../plugins/cluster/shared-state/state.js'
import { SharedPluginStore } from '../../../plugins/cluster/shared-state/view.js'
import { etcdctl, requireEtcd } from '../../support/etcd.js'
import { pollUntil } from '../../support/poll.js'
import { openSharedState, testEtcdClient } from '../../support/shared-state.js'
import { tempDir } from '../../support/tmp.js'

interface Item { n: number, tags?: string[], nested?: { at: string, ok: boolean | null } }

/**
 * What a database shows of `range`: entries, keys and count, through the interface both stores meet.
 * Each call gets a copy of the range: LMDB's getKeysCount adds options of its own to the object.
 */
function view (db: KeyValueDatabase<unknown>, range: KeyRange = {}): unknown {
  return { entries: [...db.getRange({ ...range })].map(({ key, value }) => [key, value]), keys: [...db.getKeys({ ...range })], count: db.getKeysCount({ ...range }) }
}

const items = (state: SharedState, plugin = 'alpha'): KeyValueDatabase<Item> => new SharedPluginStore(state, plugin).db<Item>('items')

const etcd = await requireEtcd(t)

if (etcd !== undefined) {
  const { endpoints, prefix } = etcd

  t.test('two masters on one prefix see each other\'s writes; plugins see only their own', async t => {
    const root = `${prefix}two/`
    const [a, b] = [await openSharedState(t, endpoints, root), await openSharedState(t, endpoints, root)]
    const [onA, onB] = [items(a), items(b)]
    await onA.put('k1', { n: 1 })
    t.same(onA.get('k1'), { n: 1 }, 'the writer reads its write once acknowledged')
    await pollUntil(() => onB.get('k1')?.n === 1, { timeout: 5000, what: 'b to see a\'s put' })
    t.equal(await onB.remove('k1'), true, 'a removal of a present key changed something')
    t.equal(await onB.remove('k1'), false, 'a second one did not')
    await pollUntil(() => onA.get('k1') === undefined, { timeout: 5000, what: 'a to see b\'s removal' })
    await new SharedPluginStore(b, 'alpha').transaction(() => {
      for (const n of [1, 2, 3]) void onB.put(`t${n}`, { n })
    })
    await pollUntil(() => onA.getKeysCount() === 3, { timeout: 5000, what: 'a to see b\'s transaction' })
    t.same([...onA.getRange()].map(({ value }) => value.n), [1, 2, 3])
    t.equal(items(a, 'beta').get('t1'), undefined, 'another plugin\'s database of the same name is another database')
    t.match(await etcdctl(endpoints, ['get', '--keys-only', '--prefix', `${root}state/`]), `${root}state/alpha/items/t1`)
  })

  t.test('ranges, keys and counts come out as from an LMDB database with the same data', async t => {
    const lmdb = Store.open(join(tempDir(t), 'state'))
    t.teardown(async () => { await lmdb.close() })
    const plugin = lmdb.forPlugin('alpha')
    // LMDB's own handles, typed as the interface: they meet it as they are.
    const stores: KeyValueStore[] = [
      { db: <V>(name: string) => plugin.db<V, string>(name), transaction: plugin.transaction },
      new SharedPluginStore(await openSharedState(t, endpoints, `${prefix}order/`), 'alpha')
    ]
    const keys = ['a', 'ab', 'a/b', 'a#2', 'b', 'B', '10', '9', 'z\u00ff', 'é', '\uD7FF', '\uE000x', '\uFFFD', '😀', '😀a', 'zz', 'x y']
    const value = (key: string, i: number): Item => ({ n: i, tags: [key, 'x'], nested: { at: '2026-11-26T06:00:00Z', ok: i % 3 === 0 ? null : i % 2 === 0 } })
    for (const store of stores) {
      const db = store.db<Item>('items')
      await store.transaction(() => { keys.forEach((key, i) => { void db.put(key, value(key, i)) }) })
    }
    const ranges: KeyRange[] = [
      {}, { start: 'a' }, { end: 'b' }, { start: 'a', end: 'b' }, { start: 'a/', end: 'b' }, { start: 'ab', end: 'ab' }, { start: 'b', end: 'a' },
      { reverse: true }, { reverse: true, start: 'b' }, { reverse: true, start: 'b', end: 'a' }, { reverse: true, start: 'a', end: 'b' },
      { limit: 3 }, { reverse: true, limit: 2 }, { start: 'a', limit: 2 }, { start: '\uE000' }, { start: '😀' }, { end: 'é' }, { reverse: true, start: '\uFFFD' }, { start: 'zz' }
    ]
    const [onLmdb, onShared] = stores.map(store => store.db<unknown>('items'))
    for (const range of ranges) t.same(view(onShared, range), view(onLmdb, range), `range ${JSON.stringify(range)}`)
    t.same(onShared.get('😀'), onLmdb.get('😀'), 'a value decodes the same')

    // Inside a transaction, reads see its own writes, in the same order.
    const inside: unknown[][] = []
    for (const store of stores) {
      const db = store.db<Item>('items')
      await store.transaction(() => {
        void db.remove('ab')
        void db.put('aa', { n: 100 })
        void db.put('b', { n: 101 })
        inside.push(ranges.map(range => view(db, range)), [db.get('ab'), db.get('aa')])
      })
    }
    t.same(inside[2], inside[0], 'ranges inside a transaction')
    t.same(inside[3], inside[1], 'gets inside a transaction')
    for (const range of ranges) t.same(view(onShared, range), view(onLmdb, range), `after the transaction: ${JSON.stringify(range)}`)
  })

  t.test('a transaction applies whole or not at all', async t => {
    const root = `${prefix}txn/`
    const state = await openSharedState(t, endpoints, root)
    const client = await testEtcdClient(t, endpoints)
    const stored = async (): Promise<string> => await etcdctl(endpoints, ['get', '--keys-only', '--prefix', `${root}state/`])
    const write = async (store: KeyValueStore, count: number): Promise<void> => {
      const db = store.db<Item>('items')
      await store.transaction(() => { for (let n = 0; n < count; n++) void db.put(`k${String(n).padStart(3, '0')}`, { n }) })
    }

    // A fence: a key held under a lease, as the leader's key is.
    const lease = client.lease(30, { autoKeepAlive: false })
    await lease.put(`${root}leader`).value('me')
    const held = await client.get(`${root}leader`).exec()
    const term = { key: `${root}leader`, createRevision: held.kvs[0].create_revision, lease: await lease.grant() }
    await t.rejects(write(new SharedPluginStore(state, 'alpha', () => ({ ...term, createRevision: '1' })), 5), FencedWriteRefused, 'a stale term is refused by etcd')
    await t.rejects(write(new SharedPluginStore(state, 'alpha', () => undefined), 5), FencedWriteRefused, 'no term: refused before sending')
    await t.rejects(write(new SharedPluginStore(state, 'alpha'), 129), TransactionTooLarge, '129 writes are refused whole')
    const plain = new SharedPluginStore(state, 'alpha')
    await t.rejects(plain.transaction(() => {
      void plain.db<Item>('items').put('k000', { n: 0 })
      throw new Error('changed my mind')
    }), { message: 'changed my mind' }, 'a callback that throws writes nothing')
    t.equal(await stored(), '', 'nothing of them reached etcd')
    t.equal(plain.db('items').getKeysCount(), 0, 'nor the mirror')

    await write(new SharedPluginStore(state, 'alpha', () => term), 128)
    t.equal(plain.db('items').getKeysCount(), 128, '128 writes under the live term apply')
    await lease.revoke()
    await t.rejects(new SharedPluginStore(state, 'alpha', () => term).db<Item>('items').put('late', { n: 0 }), FencedWriteRefused, 'once the lease is gone, refused')
    t.equal(plain.db('items').get('late'), undefined)
  })

  t.test('a new instance loads everything, in pages', async t => {
    const root = `${prefix}load/`
    const first = new SharedPluginStore(await openSharedState(t, endpoints, root), 'alpha')
    for (const name of ['one', 'two']) {
      const db = first.db<Item>(name)
      for (let batch = 0; batch < 6; batch++) {
        await first.transaction(() => { for (let n = 0; n < 100; n++) void db.put(`${batch}-${String(n).padStart(3, '0')}`, { n: batch * 100 + n }) })
      }
    }
    await first.db('two').remove('0-000')
    const again = new SharedPluginStore(await openSharedState(t, endpoints, root, { pageSize: 50 }), 'alpha')
    for (const name of ['one', 'two']) t.same(view(again.db(name)), view(first.db(name)), `database ${name}`)
    t.equal(again.db('one').getKeysCount(), 600)
    t.equal(again.db('two').getKeysCount(), 599)
  })
}
