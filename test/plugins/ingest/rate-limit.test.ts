// Token buckets: burst, refill, the wait they report, all-or-nothing takes, the 60-second sweep of idle
// buckets; /auth and /ingest with buckets of their own, /ingest per device (the devices behind one
// gateway), client addresses from X-Forwarded-For of trusted proxies only; and the budget of Basic
// password checks that keeps a flood of wrong passwords off the event loop.
import t from 'tap'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { RateLimiter } from '../../../plugins/ingest/rate-limit.js'
import { telemetryServer } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

const heartbeat = (sequence: number, device = DEVICE): Uint8Array => encodeChunk({ device, sequence, payload: SAMPLES[5] })
/** Devices behind one gateway. */
const DEVICES = ['00000000000000a1', '00000000000000a2', '00000000000000a3', '00000000000000a4', '00000000000000a5']

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

t.test('takeAll takes a token from every bucket, or from none', async t => {
  const limiter = new RateLimiter({ burst: 1, per_second: 0.5 })
  const now = 7_000_000
  t.equal(limiter.take('a', now), 0)
  t.equal(limiter.takeAll(['a', 'b'], now), 2, 'a is empty: two seconds until both have a token')
  t.equal(limiter.take('b', now), 0, 'b kept its token')
  t.equal(limiter.takeAll(['a', 'b'], now + 2000), 0, 'both refilled')
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

const LIMITS = { enabled: true, burst: 2, per_second: 0.01 }

t.test('/auth and /ingest have buckets of their own', async t => {
  const server = await telemetryServer(t, { rate_limit: LIMITS })
  const mode = async (): Promise<number> => (await fetch(new URL('/auth/mode', server.base))).status
  t.same([await mode(), await mode(), await mode()], [200, 200, 429], '/auth: the burst, then 429')
  t.same([(await server.ingest(heartbeat(1))).status, (await server.ingest(heartbeat(2))).status], [200, 200], '/ingest from the same address is untouched')
  t.equal((await server.ingest(heartbeat(3))).status, 429, 'then its own bucket is empty')
  t.equal(await mode(), 429, 'and /auth still counts its own')

  const other = await telemetryServer(t, { rate_limit: LIMITS })
  for (let i = 0; i < 3; i++) await other.ingest(heartbeat(i))
  t.equal((await fetch(new URL('/auth/mode', other.base))).status, 200, 'an empty /ingest bucket leaves /auth alone')
})

t.test('/ingest counts each device behind a gateway, not the gateway\'s address', async t => {
  const server = await telemetryServer(t, { rate_limit: LIMITS })
  const [a, b, c, d, e] = DEVICES
  const post = async (...frames: Uint8Array[]): Promise<number> => (await server.ingest(Buffer.concat(frames))).status
  t.same([await post(heartbeat(1, a)), await post(heartbeat(2, a))], [200, 200], 'device a: its burst')
  t.same([await post(heartbeat(1, b)), await post(heartbeat(2, b))], [200, 200], 'device b through the same address: a burst of its own')
  t.same([await post(heartbeat(1, c), heartbeat(1, d)), await post(heartbeat(2, c), heartbeat(2, d))], [200, 200], 'a gateway batch of c and d: one token of each')
  t.equal(await post(heartbeat(3, a)), 429, 'device a is over its budget')
  t.equal(await post(heartbeat(1, e), heartbeat(4, a)), 429, 'a batch with a in it waits for a')
  t.same([await post(heartbeat(1, e)), await post(heartbeat(2, e))], [200, 200], 'and took nothing from e')
  const garbage = async (): Promise<number> => (await server.ingest(Buffer.from('no frames here'))).status
  t.same([await garbage(), await garbage(), await garbage()], [200, 200, 429], 'a body without a readable frame counts against the client address')
})

t.test('X-Forwarded-For names the client only when a trusted proxy sends it', async t => {
  const forwarded = async (base: URL, path: string, xff: string | undefined, headers: Record<string, string> = {}): Promise<Response> =>
    await fetch(new URL(path, base), { headers: { ...(xff !== undefined ? { 'x-forwarded-for': xff } : {}), ...headers } })
  const wrong = { authorization: `Basic ${Buffer.from('admin:not the password').toString('base64')}` }

  const direct = await telemetryServer(t, { rate_limit: LIMITS, auth_failures: { burst: 2, per_second: 0.01 } })
  const spoofed = await Promise.all(['10.0.0.1', '10.0.0.2', '10.0.0.3'].map(async xff => (await forwarded(direct.base, '/auth/mode', xff)).status))
  t.same(spoofed.sort(), [200, 200, 429], 'no trusted proxy: a spoofed X-Forwarded-For changes nothing')
  const signIns = [await forwarded(direct.base, '/devices', '10.0.0.4', wrong), await forwarded(direct.base, '/devices', '10.0.0.5', wrong), await forwarded(direct.base, '/devices', '10.0.0.6', wrong)]
  t.same(signIns.map(r => r.status), [401, 401, 429], 'nor for the budget of password checks')
  t.same(await signIns[2].json(), { error: 'too many failed sign-ins from 127.0.0.1; retry in 100 s', code: 'BERTH_TOO_MANY_REQUESTS' }, 'counted against the socket address')

  const proxied = await telemetryServer(t, { rate_limit: { ...LIMITS, trusted_proxies: ['127.0.0.0/8', 'fd00::/8'] }, auth_failures: { burst: 2, per_second: 0.01 } })
  const mode = async (xff?: string): Promise<number> => (await forwarded(proxied.base, '/auth/mode', xff)).status
  t.same([await mode('10.0.0.1'), await mode('10.0.0.1'), await mode('10.0.0.1')], [200, 200, 429], 'behind a trusted proxy: one client\'s bucket')
  t.same([await mode('10.0.0.2'), await mode('10.0.0.2')], [200, 200], 'another client behind the same proxy has its own')
  t.equal(await mode('10.0.0.1, 127.0.0.9'), 429, 'read from the right, past the trusted hops: 10.0.0.1 again')
  t.same([await mode('127.0.0.7, 10.0.0.3'), await mode('10.0.0.2, 10.0.0.3')], [200, 200], 'a hop written by the client, left of the first untrusted one, is ignored')
  t.equal(await mode('10.0.0.3'), 429, 'so both were 10.0.0.3')
  t.same([await mode(), await mode(), await mode('not an address')], [200, 200, 429], 'no header, or a malformed one: the proxy\'s own address')
  const failed = [await forwarded(proxied.base, '/devices', '10.0.0.4', wrong), await forwarded(proxied.base, '/devices', '10.0.0.4', wrong), await forwarded(proxied.base, '/devices', '10.0.0.4', wrong)]
  t.same(failed.map(r => r.status), [401, 401, 429])
  t.same(await failed[2].json(), { error: 'too many failed sign-ins from 10.0.0.4; retry in 100 s', code: 'BERTH_TOO_MANY_REQUESTS' }, 'the budget of password checks is the forwarded client\'s')
  t.equal((await forwarded(proxied.base, '/devices', '10.0.0.5', wrong)).status, 401, 'another client still has its checks')

  await t.rejects(telemetryServer(t, { rate_limit: { trusted_proxies: ['10.0.0.0/33'] } }), { message: /\[ingest\]\.rate_limit\.trusted_proxies: "10\.0\.0\.0\/33" is neither an IP address nor a CIDR block/ })
})
