// The slot reports and revert halts of ../ota-status.test.ts with the telemetry kept in PostgreSQL (a fresh database).
import t from 'tap'
import { onPostgresToo } from '../harness.js'

await onPostgresToo(t, async () => await import('../ota-status.test.js'))
