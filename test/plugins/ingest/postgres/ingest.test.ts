// The scenarios of ../ingest.test.ts with the telemetry kept in PostgreSQL (a fresh database each).
import t from 'tap'
import { requireComponent } from '../../../support/component.js'
import { runPostgres } from '../../../support/postgres.js'

if (await requireComponent(t, 'postgresql-15', runPostgres) !== undefined) {
  process.env.BERTH_TEST_INGEST_BACKEND = 'postgres'
  await import('../ingest.test.js')
}
