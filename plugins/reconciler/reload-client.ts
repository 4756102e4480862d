// `berth reload` waiting for its outcome: the server answers the request at once, restarts, and then
// redeploys; the command asks GET /api/v1/reload until the reload it started is done or failed. A
// server that cannot be asked for a while (it is between kernels) is asked again.
import type { ApiClient } from '../../kernel/index.js'
import type { ReloadRecord } from './reload.js'

const POLL_MS = 250
/** Longest run of failed asks before the command gives up. */
const UNREACHABLE_MS = 60_000

/** Another reload was asked for meanwhile: this one's outcome cannot be told. */
class ReplacedReload extends Error {}

/** The reload `id` once it has finished (done or failed). */
export async function reloadOutcome (client: ApiClient, id: string): Promise<ReloadRecord> {
  let failingSince: number | undefined
  for (;;) {
    try {
      const { reload } = await client.json<{ reload: ReloadRecord }>('GET', '/api/v1/reload')
      failingSince = undefined
      if (reload.id !== id) throw new ReplacedReload(`another reload (${reload.id}) replaced this one (${id})`)
      if (reload.state === 'done' || reload.state === 'failed') return reload
    } catch (err) {
      if (err instanceof ReplacedReload) throw err
      failingSince ??= Date.now()
      if (Date.now() - failingSince > UNREACHABLE_MS) throw err
    }
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
}
