// Stopping under load: keep-alive clients busy on a listener see no reset. Every request that reached
// the server is answered (the last one of each connection with `Connection: close`); after the stop,
// new connections are refused, which clients see as such. Requests in flight at the stop finish; an
// idle kept-alive connection is closed once idle for stop_idle_grace_ms.
import t from 'tap'
import { Pool } from 'undici'
import { setTimeout as delay } from 'node:timers/promises'
import { definePlugin } from '../../kernel/index.js'
import { testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'

const CLIENTS = 16
/** Requests the slow route is serving now. */
let serving = 0

const slow = definePlugin({
  name: 'slow',
  version: '1',
  setup (ctx) {
    ctx.http('control', async app => {
      app.get<{ Querystring: { ms?: string } }>('/slow', async request => {
        serving++
        try {
          await delay(Number(request.query.ms ?? 5))
        } finally {
          serving--
        }
        return { ok: true }
      })
    })
  }
})

/** Errors that mean a request reached a connection the server then cut (not a refused new connection). */
const isReset = (err: unknown): boolean => {
  const code = (err as { code?: string }).code ?? ''
  return code !== 'ECONNREFUSED' && code !== 'UND_ERR_CLOSED' && code !== 'UND_ERR_DESTROYED'
}

t.test(`${CLIENTS} keep-alive clients under load: the stop resets none of them`, async t => {
  const kernel = await testKernel(t, { plugins: [slow], config: { server: { stop_idle_grace_ms: 1000 } } })
  const pool = new Pool(kernel.url('control').origin, { connections: CLIENTS, keepAliveTimeout: 60_000, pipelining: 1 })
  t.teardown(async () => { await pool.destroy() })
  let answered = 0
  let refused = 0
  const resets: string[] = []
  let stopped = false
  const client = async (): Promise<void> => {
    while (!stopped) {
      try {
        const { statusCode, body } = await pool.request({ path: '/slow?ms=2', method: 'GET' })
        await body.text()
        if (statusCode === 200) answered++
      } catch (err) {
        if (isReset(err)) resets.push(`${(err as { code?: string }).code ?? ''} ${(err as Error).message}`)
        else refused++
        if (!isReset(err)) return
      }
    }
  }
  const clients = Array.from({ length: CLIENTS }, client)
  await pollUntil(() => answered >= 500, { what: 'load on every connection' })
  await kernel.stop()
  await pollUntil(() => refused >= CLIENTS, { what: 'every client to find the server gone' })
  stopped = true
  await Promise.all(clients)
  t.same(resets, [], 'no request was cut off')
  t.ok(answered > 500, `${answered} requests answered`)
})

t.test('requests in flight at the stop are answered, then the connections close', async t => {
  const kernel = await testKernel(t, { plugins: [slow] })
  const pool = new Pool(kernel.url('control').origin, { connections: CLIENTS, keepAliveTimeout: 60_000 })
  t.teardown(async () => { await pool.destroy() })
  // Warm the connections so each request goes on a kept one.
  await Promise.all(Array.from({ length: CLIENTS }, async () => { await (await pool.request({ path: '/slow?ms=50', method: 'GET' })).body.text() }))
  const inFlight = Array.from({ length: CLIENTS }, async () => {
    const { statusCode, headers, body } = await pool.request({ path: '/slow?ms=300', method: 'GET' })
    await body.text()
    return `${statusCode} ${String(headers.connection)}`
  })
  await pollUntil(() => serving === CLIENTS, { what: 'every request being served' })
  await kernel.stop()
  t.same(await Promise.all(inFlight), Array.from({ length: CLIENTS }, () => '200 close'), 'each answered, the last of its connection')
})

t.test('an idle kept-alive connection is closed at stop once idle for stop_idle_grace_ms, not before', async t => {
  for (const grace of [50, 600]) {
    const kernel = await testKernel(t, { plugins: [slow], config: { server: { stop_idle_grace_ms: grace } } })
    const pool = new Pool(kernel.url('control').origin, { connections: 1, keepAliveTimeout: 60_000 })
    const { body } = await pool.request({ path: '/slow', method: 'GET' })
    await body.text()
    const closed = new Promise(resolve => { pool.once('disconnect', resolve) })
    const started = performance.now()
    await kernel.stop()
    await closed
    const waited = performance.now() - started
    t.ok(waited >= grace - 5, `grace ${grace} ms: the idle connection was closed after ${Math.round(waited)} ms`)
    if (grace > 50) t.ok(waited >= 500, 'a longer grace keeps the connection open longer')
    await pool.destroy()
  }
})
