// The login, the role matrix, people's fields and the generative provider's tests (../) with the
// campaign's sessions in Redis and its data in PostgreSQL: a fresh database and a Redis of its own for
// each app a test starts. One process for all of them.
import t from 'tap'
import { runPostgres } from '../../../support/postgres.js'
import { ensureDebianPackages, requireComponent } from '../../../support/component.js'

if (await requireComponent(t, 'postgresql-15', runPostgres) !== undefined && await requireComponent(t, 'redis-server', async () => { await ensureDebianPackages(['redis-server']); return true }) !== undefined) {
  process.env.BERTH_TEST_CAMPAIGN_BACKEND = 'shared'
  await import('../login.test.js')
  await import('../role-matrix.test.js')
  await import('../people.test.js')
  await import('../generator.test.js')
  await import('../generative.test.js')
}
