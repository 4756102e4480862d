// The login, the role matrix, people's fields and the generative provider's tests (../) with the
// campaign's sessions in Redis and its data in PostgreSQL: a fresh database and a Redis of its own for
// each app a test starts. One process for all of them.
import t from 'tap'
import { onSharedBackendsToo } from '../../../support/campaign.js'

await onSharedBackendsToo(t, async () => {
  await import('../login.test.js')
  await import('../role-matrix.test.js')
  await import('../people.test.js')
  await import('../generator.test.js')
  await import('../generative.test.js')
})
