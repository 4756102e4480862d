// The reassembler's bounds stay true to what LMDB holds, also when the transaction that added or
// expired fragments fails and rolls back; a chunk dropped for its age makes its next fragment ask for
// the whole chunk again, until its first fragment comes.
import t from 'tap'
import { Store } from '../../../kernel/store.js'
import type { LostChunk, PendingChunk } from '../../../plugins/ingest/store.js'
import { LOST_KEPT_MS, Reassembler, type LostEvent } from '../../../plugins/ingest/wire/reassembly.js'
import { tempDir } from '../../support/tmp.js'

const header = { type: 1, flags: 0, fragmentIndex: 0, fragmentCount: 2, retransmitted: false }

t.test('a failed transaction leaves the pending counts equal to the database', async t => {
  const store = Store.open(tempDir(t))
  t.teardown(async () => { await store.close() })
  const env = store.forPlugin('ingest')
  const db = env.db<PendingChunk, string>('fragments')
  const reassembler = new Reassembler(db, env.db<LostChunk, string>('fragments-lost'), { maxChunks: 2, maxBytes: 100, ttlMs: 60_000 })

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

t.test('a chunk dropped incomplete for its age: its next fragment asks for the whole chunk again, counted', async t => {
  const store = Store.open(tempDir(t))
  t.teardown(async () => { await store.close() })
  const env = store.forPlugin('ingest')
  const events: LostEvent[] = []
  const reassembler = new Reassembler(env.db<PendingChunk, string>('fragments'), env.db<LostChunk, string>('fragments-lost'), { maxChunks: 4, maxBytes: 1000, ttlMs: 60_000 }, event => { events.push(event) })
  const add = async (key: string, index: number, now: number): Promise<unknown> => await reassembler.settle(env.transaction(() => reassembler.add(key, { ...header, fragmentCount: 3, fragmentIndex: index }, new Uint8Array([index]), now)))
  t.match(await add('gap', 0, 0), { status: 'partial' })
  t.match(await add('gap', 1, 61_000), { status: 'rejected', retry: true, resend: true, reason: /^the earlier fragments of this chunk \(1 of 3\) were dropped, older than 60 s, before the rest came; send the whole chunk again$/ }, 'a gap longer than the time limit: the whole chunk again')
  t.match(await add('gap', 2, 62_000), { status: 'rejected', resend: true }, 'every later fragment says so until the first comes again')
  t.match(await add('gap', 0, 63_000), { status: 'partial' }, 'the chunk again from its first fragment')
  t.match(await add('gap', 1, 63_000), { status: 'partial' })
  t.match(await add('gap', 2, 63_000), { status: 'complete' })
  t.same(events, ['dropped', 'resend', 'resend'])

  t.match(await add('old', 0, 100_000), { status: 'partial' })
  t.equal(await reassembler.settle(env.transaction(() => reassembler.expire(161_000))), 1, 'the scheduled expiry drops it too')
  t.match(await add('old', 1, 162_000), { status: 'rejected', resend: true })
  await reassembler.settle(env.transaction(() => reassembler.expire(161_000 + LOST_KEPT_MS + 1)))
  t.match(await add('old', 1, 161_000 + LOST_KEPT_MS + 2), { status: 'partial' }, 'forgotten after LOST_KEPT_MS')
})
