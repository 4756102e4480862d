// A random 32-byte key made once and kept in the campaign's store, for the HMAC-signed links modules
// send (unsubscribe, RSVP cancel, consent confirmation): every instance on the same store signs and
// checks with the same key, and a restart keeps the links already sent valid.
import { randomBytes } from 'node:crypto'
import type { CampaignStore } from './contract.js'

/** The key named `name` in `table`, made on first use; a failed read is tried again at the next call. */
export function keptKey (store: CampaignStore, table: string, name: string): () => Promise<Buffer> {
  let key: Promise<Buffer> | undefined
  return async () => {
    key ??= store.transaction(table, async tx => {
      const secrets = tx.table<string>(table)
      const kept = await secrets.get(name)
      if (kept !== undefined) return Buffer.from(kept, 'base64')
      const made = randomBytes(32)
      await secrets.put(name, made.toString('base64'))
      return made
    }).catch(err => { key = undefined; throw err })
    return await key
  }
}
