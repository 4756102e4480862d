// The Chromium tests of the campaign UI that depend on where sessions live (../): signing in and out
// with the sessions in Redis and the data in PostgreSQL, and the page policies. The page-by-page and
// phone-width tests draw the same pages from the same functions, whose results on these backends the
// module tests check (modules.test.ts), so they run once, on the default backends. One process.
import t from 'tap'
import { onSharedBackendsToo } from '../../../support/campaign.js'

await onSharedBackendsToo(t, async () => {
  await import('../browser.test.js')
  await import('../page-security.test.js')
})
