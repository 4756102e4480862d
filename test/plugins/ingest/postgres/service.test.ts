// The scenarios of ../service.test.ts with the telemetry kept in PostgreSQL (a fresh database each).
import t from 'tap'
import { onPostgresToo } from '../harness.js'

await onPostgresToo(t, async () => await import('../service.test.js'))
