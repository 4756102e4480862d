// The campaign store contract on the backend this run tests (LMDB by default, PostgreSQL when the
// campaign runs on shared backends: shared/modules.test.ts imports this file): a transaction reads its
// own writes and commits all of them or none, many writes land together, and a transaction naming
// several subjects runs alone among the transactions of each, without two of them waiting on each other.
import t, { type Test } from 'tap'
import type { CampaignStore } from '../../../plugins/campaign/store/contract.js'
import { PostgresCampaignStore } from '../../../plugins/campaign/store/postgres-store.js'
import { lmdbCampaignStore, onSharedBackends } from '../../support/campaign.js'
import { postgresDatabase } from '../../support/postgres.js'
import { pollUntil } from '../../support/poll.js'

const backend = onSharedBackends() ? 'PostgreSQL' : 'LMDB'

async function freshStore (t: Test): Promise<CampaignStore> {
  if (onSharedBackends()) {
    const store = await PostgresCampaignStore.open(await postgresDatabase(t), 'test')
    t.teardown(async () => { await store.close() })
    return store
  }
  return lmdbCampaignStore(t)
}

/** A promise and the function that settles it. */
function gate (): { opened: Promise<void>, open: () => void } {
  let open = (): void => {}
  const opened = new Promise<void>(resolve => { open = resolve })
  return { opened, open }
}

t.test(`a transaction on ${backend}: its own writes, all or nothing, many at once`, async t => {
  const store = await freshStore(t)
  const notes = store.table<{ text: string }>('notes')
  await notes.put('kept', { text: 'before' })
  await notes.put('gone', { text: 'to remove' })
  const seen = await store.transaction('notes', async tx => {
    const table = tx.table<{ text: string }>('notes')
    await table.put('kept', { text: 'after' })
    await table.put('new', { text: 'added' })
    await table.remove('gone')
    await table.put('brief', { text: 'put, then removed' })
    await table.remove('brief')
    return { kept: await table.get('kept'), fresh: await table.has('new'), gone: await table.get('gone'), brief: await table.has('brief'), committed: (await table.list()).map(e => e.key) }
  })
  t.same(seen, { kept: { text: 'after' }, fresh: true, gone: undefined, brief: false, committed: ['gone', 'kept'] }, 'get and has see the writes; a range sees what was committed')
  t.same((await notes.list()).map(e => [e.key, e.value.text]), [['kept', 'after'], ['new', 'added']], 'committed together')

  await t.rejects(store.transaction('notes', async tx => {
    await tx.table('notes').put('kept', { text: 'never' })
    await tx.table('other').put('x', { text: 'never' })
    throw new Error('abandoned')
  }), /abandoned/)
  t.same(await notes.get('kept'), { text: 'after' }, 'a transaction that throws writes nothing')
  t.equal(await store.table('other').count(), 0)

  const many = 4500
  await store.transaction('bulk', async tx => {
    const table = tx.table<{ n: number }, [string, number]>('bulk')
    for (let n = 0; n < many; n++) await table.put(['row', n], { n })
  })
  const rows = await store.table<{ n: number }, [string, number]>('bulk').list()
  t.equal(rows.length, many, 'thousands of writes in one transaction all land')
  t.same(rows.at(-1), { key: ['row', many - 1], value: { n: many - 1 } })
})

t.test(`transactions naming several subjects on ${backend}`, async t => {
  const store = await freshStore(t)
  const started: string[] = []
  const first = gate()
  const holding = store.transaction(['roster', 'people'], async () => { started.push('roster+people'); await first.opened })
  await pollUntil(() => started.includes('roster+people'), { what: 'the first transaction' })
  const onPeople = store.transaction('people', async () => { started.push('people') })
  const elsewhere = store.transaction('events', async () => { started.push('events') })
  await elsewhere
  t.same(started, ['roster+people', 'events'], 'another subject runs meanwhile; one of its subjects waits')
  first.open()
  await Promise.all([holding, onPeople])
  t.same(started, ['roster+people', 'events', 'people'], 'and runs once it ends')

  // Two transactions taking the same subjects named in opposite orders both finish, many times over.
  const counts = store.table<number>('counts')
  const bump = async (subjects: string[]): Promise<void> => await store.transaction(subjects, async tx => {
    const table = tx.table<number>('counts')
    await table.put('n', ((await table.get('n')) ?? 0) + 1)
  })
  await Promise.all(Array.from({ length: 20 }, async (_, i) => await bump(i % 2 === 0 ? ['a', 'b'] : ['b', 'a'])))
  t.equal(await counts.get('n'), 20, 'no deadlock, and no update lost')
})
