// The reassembler's bounds stay true to what LMDB holds, also when the transaction that added or
// expired fragments fails and rolls back.
import t from 'tap'
import { Store } from '../../../kernel/store.js'
import type { PendingChunk } from '../../../plugins/ingest/store.js'
import { Reassembler } from '../../../plugins/ingest/wire/reassembly.js'
import { tempDir } from '../../support/tmp.js'

const header = { type: 1, flags: 0, fragmentIndex: 0, fragmentCount: 2, retransmitted: false }

t.test('a failed transaction leaves the pending counts equal to the database', async t => {
  const store = Store.open(tempDir(t))
  t.teardown(async () => { await store.close() })
  const env = store.forPlugin('ingest')
  const db = env.db<PendingChunk, string>('fragments')
  const reassembler = new Reassembler(db, { maxChunks: 2, maxBytes: 100, ttlMs: 60_000 })

  t.match(await reassembler.settle(env.transaction(() => reassembler.add('a', header, new Uint8Array(10), 0))), { status: 'partial' })
  t.same(reassembler.pending, { chunks: 1, bytes: 10 })

  const failing = reassembler.settle(env.transaction(() => {
    reassembler.add('b', header, new Uint8Array(40), 0)
    reassembler.add('a', { ...header, fragmentIndex: 1 }, new Uint8Array(5), 0)
    throw new Error('disk on fire')
  }))
  await t.rejects(failing, { message: 'disk on fire' })
  t.equal(db.get('b'), undefined, 'the failed transaction wrote nothing')
  t.same(reassembler.pending, { chunks: 1, bytes: 10 }, 'counts rolled back with it')

  await t.rejects(reassembler.settle(env.transaction(() => {
    t.equal(reassembler.expire(120_000), 1)
    throw new Error('again')
  })))
  t.same(reassembler.pending, { chunks: 1, bytes: 10 }, 'a failed expiry is not counted either')
  t.equal(await reassembler.settle(env.transaction(() => reassembler.expire(120_000))), 1)
  t.same(reassembler.pending, { chunks: 0, bytes: 0 })
})
