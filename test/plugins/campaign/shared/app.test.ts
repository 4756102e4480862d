// The login, the role matrix, people's fields, the public event pages, forms and petitions and the generative paths of the modules (../) with the
// campaign's sessions in Redis and its data in PostgreSQL: a fresh database and a Redis of its own for
// each app a test starts. One process for all of them. The provider's bound on waiting
// (generator.test.ts: time-outs, slots, the note in a browser) stores nothing and runs once.
import t from 'tap'
import { onSharedBackendsToo } from '../../../support/campaign.js'

await onSharedBackendsToo(t, async () => {
  await import('../login.test.js')
  await import('../role-matrix.test.js')
  await import('../people.test.js')
  await import('../public-events.test.js')
  await import('../public-forms.test.js')
  await import('../generative.test.js')
})
