// The per-IP token bucket: burst, refill, the wait it reports, and the 60-second sweep of idle buckets.
import t from 'tap'
import { RateLimiter } from '../../../plugins/ingest/rate-limit.js'

t.test('buckets refill at the configured rate and idle ones are swept', async t => {
  const limiter = new RateLimiter({ burst: 2, per_second: 1 })
  const start = 1_000_000
  t.same([limiter.take('10.0.0.1', start), limiter.take('10.0.0.1', start), limiter.take('10.0.0.1', start)], [0, 0, 1])
  t.equal(limiter.take('10.0.0.1', start + 1000), 0, 'one token back after a second')
  t.equal(limiter.take('10.0.0.2', start + 1000), 0, 'buckets are per address')
  t.equal(limiter.size, 2)
  t.equal(limiter.sweep(start + 2500), 0, 'not yet full again: kept')
  t.equal(limiter.sweep(start + 3000), 2, 'full again and idle: removed')
  t.equal(limiter.size, 0)
})
