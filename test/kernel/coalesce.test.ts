// coalesced(): one run at a time; calls made during a run share one more run after it, and `more`
// can refuse that run.
import t from 'tap'
import { coalesced } from '../../kernel/coalesce.js'

/** A job whose runs end only when the test says so; it counts them. */
function gatedJob (): { job: () => Promise<void>, runs: () => number, release: () => void } {
  let runs = 0
  let open: (() => void) | undefined
  return {
    job: async () => {
      runs++
      await new Promise<void>(resolve => { open = resolve })
    },
    runs: () => runs,
    release: () => { open?.() }
  }
}

/** Let pending promise callbacks run. */
async function settle (): Promise<void> {
  await new Promise(resolve => setImmediate(resolve))
}

t.test('calls during a run share one more run after it', async t => {
  const { job, runs, release } = gatedJob()
  const run = coalesced(job)
  let done = 0
  const calls = [run(), run(), run()].map(async p => { await p; done++ })
  await settle()
  t.equal(runs(), 1, 'one run at a time')
  release()
  await settle()
  t.equal(runs(), 2, 'then one more for the calls made meanwhile')
  t.equal(done, 0, 'no caller is answered before the run that began after its call')
  release()
  await Promise.all(calls)
  t.equal(runs(), 2)
  t.equal(done, 3)
  const after = run()
  await settle()
  t.equal(runs(), 3, 'a call after both runs starts a new one')
  release()
  await after
})

t.test('more() false: the run after does not start', async t => {
  const { job, runs, release } = gatedJob()
  let stopping = false
  const run = coalesced(job, () => !stopping)
  const calls = [run(), run()]
  await settle()
  stopping = true
  release()
  await Promise.all(calls)
  t.equal(runs(), 1)
})
