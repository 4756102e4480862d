// Listeners belong to plugins: a plugin declares a fastify or a raw listener (with its port in its own
// section if it likes), the kernel binds and closes it, and only its owner and dependants may use it.
import t from 'tap'
import { createServer, request } from 'node:http'
import { createServer as createNetServer } from 'node:net'
import { definePlugin, type AnyPlugin } from '../../kernel/index.js'
import { testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'

/** Resolves when the slow request has reached the edge server. */
let slowArrived: () => void = () => {}

/** A plugin driving its own node:http server on a raw listener whose port lives in [edge].http_port. */
const edge = definePlugin({
  name: 'edge',
  version: '1.0.0',
  config: Type => Type.Object({ http_port: Type.Integer({ minimum: 0, maximum: 65535, default: 6893 }) }, { additionalProperties: false }),
  listeners: [{ name: 'edge-http', port: 6893, kind: 'raw', portKey: 'http_port' }],
  setup (ctx) {
    const server = createServer((req, res) => {
      if (req.url === '/slow') {
        // Answers only when the kernel begins to stop: an in-flight request the close must drain.
        ctx.stopping.addEventListener('abort', () => { setTimeout(() => { res.end('drained') }, 50) })
        slowArrived()
        return
      }
      res.writeHead(req.url === '/' ? 200 : 404, { 'content-type': 'text/plain' }).end(`edge ${req.url ?? ''}`)
    })
    ctx.serve('edge-http', server)
  }
})

t.test('a raw listener: the owner\'s server, bound on the port of its own section, counted, drained and closed', async t => {
  // [edge].http_port = 0 in place of the declared 6893: the port bound is any free one, read back from the kernel.
  const kernel = await testKernel(t, { plugins: [edge], config: { edge: { http_port: 0 } } })
  const url = kernel.url('edge-http')
  const port = Number(url.port)
  t.ok(port > 0 && port !== 6893, `bound as [edge].http_port says (port ${port})`)
  t.equal(await (await fetch(url)).text(), 'edge /')
  t.equal((await fetch(new URL('/nope', url))).status, 404)
  const scrape = await pollUntil(async () => {
    const text = await kernel.exposition('edge-http')
    return text.body.includes('status="404"') && text.body
  }, { what: 'the raw listener\'s answers to be counted' })
  t.match(scrape, /^berth_http_requests_total\{listener="edge-http",status="200"\} 1$/m)

  const arrived = new Promise<void>(resolve => { slowArrived = resolve })
  const slow = new Promise<string>((resolve, reject) => {
    request(new URL('/slow', url), response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve(body) })
    }).on('error', reject).end()
  })
  await arrived
  await kernel.stop()
  t.equal(await slow, 'drained', 'the request in flight was answered before the listener closed')
  const probe = createNetServer()
  await new Promise<void>((resolve, reject) => { probe.once('error', reject).listen(port, '127.0.0.1', resolve) })
  probe.close()
  t.pass('the port is free again')
})

t.test('a port in use names the key that sets it; [server.listeners] keeps only the host of such a listener', async t => {
  const blocker = createNetServer()
  await new Promise<void>(resolve => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { blocker.close() })
  const port = (blocker.address() as { port: number }).port
  const kernel = await testKernel(t, { noStart: true, plugins: [edge], config: { edge: { http_port: port } } })
  await t.rejects(kernel.start(), { message: `edge-http listener: port ${port} on 127.0.0.1 is already in use (set [edge].http_port)` })
  await t.rejects(testKernel(t, { plugins: [edge], config: { server: { listeners: { 'edge-http': { host: '127.0.0.1', port: 1 } } } } }),
    { message: 'config: [server].listeners.edge-http.port: unknown key' })
})

t.test('only the owner, its dependants and (for control) everyone may use a listener', async t => {
  const owner = definePlugin({ name: 'owner', version: '1', listeners: [{ name: 'shop', port: 6894 }], setup (ctx) { ctx.http('shop', async app => { app.get('/a', async () => 'owner') }) } })
  const friend = definePlugin({ name: 'friend', version: '1', dependsOn: ['owner'], setup (ctx) { ctx.http('shop', async app => { app.get('/b', async () => 'friend') }) } })
  const stranger = definePlugin({ name: 'stranger', version: '1', setup (ctx) { ctx.http('shop', async () => {}) } })
  const kernel = await testKernel(t, { plugins: [owner, friend] })
  t.equal(await (await fetch(new URL('/b', kernel.url('shop')))).text(), 'friend')

  const refused = await testKernel(t, { noStart: true, plugins: [owner, stranger] })
  await t.rejects(refused.start(), { message: 'plugin "stranger" failed during setup: plugin "stranger": the shop listener belongs to plugin "owner", which "stranger" does not depend on' })
  const serveFastify = definePlugin({ name: 'wrong', version: '1', listeners: [{ name: 'wrong', port: 6895 }], setup (ctx) { ctx.serve('wrong', createServer()) } })
  await t.rejects((await testKernel(t, { noStart: true, plugins: [serveFastify] })).start(), { message: /the wrong listener is a fastify listener; mount routes with ctx\.http\(\)/ })
  const mountRaw = definePlugin({ name: 'raw', version: '1', listeners: [{ name: 'raw', port: 6896, kind: 'raw' }], setup (ctx) { ctx.http('raw', async () => {}) } })
  await t.rejects((await testKernel(t, { noStart: true, plugins: [mountRaw] })).start(), { message: /the raw listener is raw; hand it a server with ctx\.serve\(\)/ })
  const serveOthers = definePlugin({ name: 'borrower', version: '1', dependsOn: ['raw-owner'], setup (ctx) { ctx.serve('raw', createServer()) } })
  const rawOwner = definePlugin({ name: 'raw-owner', version: '1', listeners: [{ name: 'raw', port: 6896, kind: 'raw' }] })
  await t.rejects((await testKernel(t, { noStart: true, plugins: [rawOwner, serveOthers] })).start(), { message: /only the owner of the raw listener may serve it/ })
})

t.test('declarations are checked when plugins load', async t => {
  const twice = (name: string): AnyPlugin => definePlugin({ name, version: '1', listeners: [{ name: 'shared', port: 7000 }] })
  await t.rejects(testKernel(t, { plugins: [twice('one'), twice('two')] }), { name: 'PluginLoadError', message: 'plugin "two" declares listener "shared", which plugin "one" already declares' })
  const control = definePlugin({ name: 'usurper', version: '1', listeners: [{ name: 'control', port: 1 }] })
  await t.rejects(testKernel(t, { plugins: [control] }), { message: 'plugin "usurper" declares listener "control", which the kernel already declares' })
  const badPort = definePlugin({ name: 'badport', version: '1', listeners: [{ name: 'x', port: 70000 }] })
  await t.rejects(testKernel(t, { plugins: [badPort] }), { message: 'plugin "badport" declares listener "x" with port 70000, which is not a TCP port' })
  const noKey = definePlugin({ name: 'nokey', version: '1', listeners: [{ name: 'y', port: 1, kind: 'raw', portKey: 'missing' }] })
  await t.rejects(testKernel(t, { plugins: [noKey] }), { message: 'plugin "nokey" keeps the port of listener "y" in [nokey].missing, which its schema does not define as an integer' })
})
