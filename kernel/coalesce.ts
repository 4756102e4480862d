// One run at a time of an async job, for work that refreshes from the current state (a routing
// table, a repair pass): a call while it runs waits for it and for one more run after it, which every
// call made meanwhile shares, so each caller sees a run that began after its call.

/** `job` wrapped so; `more` says whether the run after may still start (false: the owner stops). */
export function coalesced (job: () => Promise<void>, more: () => boolean = () => true): () => Promise<void> {
  let running: Promise<void> | undefined
  let again = false
  return async () => {
    if (running !== undefined) {
      again = true
      await running
      return
    }
    running = (async () => {
      do {
        again = false
        await job()
      } while (again && more())
    })().finally(() => { running = undefined })
    await running
  }
}
