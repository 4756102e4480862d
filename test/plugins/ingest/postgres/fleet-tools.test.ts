// The symbol files, timeline and exports of ../fleet-tools.test.ts with the telemetry kept in PostgreSQL (a fresh database).
import t from 'tap'
import { onPostgresToo } from '../harness.js'

await onPostgresToo(t, async () => await import('../fleet-tools.test.js'))
