// The scenarios of ../rate-limit.test.ts with the telemetry kept in PostgreSQL (a fresh database each).
import t from 'tap'
import { onPostgresToo } from '../harness.js'

await onPostgresToo(t, async () => await import('../rate-limit.test.js'))
