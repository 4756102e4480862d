// The Chromium tests of the campaign UI (../) with its sessions in Redis and its data in PostgreSQL: a
// fresh database and a Redis of its own for each app a test starts. One process for all of them.
import t from 'tap'
import { onSharedBackendsToo } from '../../../support/campaign.js'

await onSharedBackendsToo(t, async () => {
  await import('../browser.test.js')
  await import('../browser-modules.test.js')
  await import('../browser-phone.test.js')
  await import('../page-security.test.js')
})
