// The per-IP token bucket: burst, refill, the wait it reports, the 60-second sweep of idle buckets, and
// the budget of Basic password checks that keeps a flood of wrong passwords off the event loop.
import t from 'tap'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { RateLimiter } from '../../../plugins/ingest/rate-limit.js'
import { telemetryServer } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

const heartbeat = (sequence: number): Uint8Array => encodeChunk({ device: DEVICE, sequence, payload: SAMPLES[5] })

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

t.test('a success gives its token back, up to the bucket size', async t => {
  const limiter = new RateLimiter({ burst: 1, per_second: 0.001 })
  const now = 5_000_000
  t.equal(limiter.take('10.0.0.9', now), 0)
  limiter.giveBack('10.0.0.9')
  t.equal(limiter.take('10.0.0.9', now), 0, 'given back')
  t.ok(limiter.take('10.0.0.9', now) > 0, 'then empty')
  limiter.giveBack('10.0.0.9')
  limiter.giveBack('10.0.0.9')
  t.equal(limiter.take('10.0.0.9', now), 0)
  t.ok(limiter.take('10.0.0.9', now) > 0, 'never more than the bucket holds')
})

t.test('a flood of wrong passwords is refused before scrypt runs, and other routes keep answering', async t => {
  const server = await telemetryServer(t, { auth_failures: { burst: 10, per_second: 0.01 } })
  const wrong = `Basic ${Buffer.from('admin:not the password').toString('base64')}`
  // 200 wrong-password requests at once, and while they are answered, requests that need no password.
  const flood = Promise.all(Array.from({ length: 200 }, async () => {
    const response = await fetch(new URL('/devices', server.base), { headers: { authorization: wrong } })
    await response.arrayBuffer()
    return response.status
  }))
  const others = (async () => {
    const statuses: number[] = []
    for (let i = 0; i < 10; i++) {
      statuses.push((await fetch(new URL('/auth/mode', server.base))).status)
      statuses.push((await server.ingest(heartbeat(i))).status)
    }
    return statuses
  })()
  const statuses = await flood
  t.same(await others, Array(20).fill(200), 'the public route and device ingest answered throughout')
  t.equal(statuses.filter(s => s === 401).length, 10, 'as many checks as the budget holds')
  t.equal(statuses.filter(s => s === 429).length, 190, 'the rest refused at once')
  const refused = await fetch(new URL('/devices', server.base), { headers: { authorization: wrong } })
  t.equal(refused.status, 429)
  t.match(refused.headers.get('retry-after'), /^\d+$/)
  t.match(await refused.json(), { error: /^too many failed sign-ins from 127\.0\.0\.1; retry in \d+ s$/ })
  const { body: metrics } = await server.kernel.exposition('telemetry')
  t.match(metrics, /^berth_ingest_password_checks_total\{outcome="invalid"\} 10$/m, 'scrypt ran ten times for the wrong password, off the event loop')
  t.match(metrics, /^berth_ingest_password_checks_total\{outcome="refused"\} 191$/m)
})
