// What the kernel gives a plugin that runs its raw listener on several threads: the address bound
// with SO_REUSEPORT when the owner asks (another socket with reusePort binds it too, one without is
// refused), the host and port bound (`ctx.bound`, the configured host), and whether a stop is a
// restart in place (`ctx.restarting`), true only when a new kernel follows in the process.
import t from 'tap'
import { createServer as createHttpServer } from 'node:http'
import { createServer, type Server } from 'node:net'
import pino from 'pino'
import { definePlugin } from '../../kernel/index.js'
import { ServerHost } from '../../kernel/host.js'
import { loopbackListeners } from '../support/kernel.js'
import { through } from '../support/load.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

const stops: boolean[] = []
let bound: { host: string, port: number } | undefined

const shared = definePlugin({
  name: 'shared',
  version: '1.0.0',
  listeners: [{ name: 'shared-http', port: 0, kind: 'raw' }],
  async setup (ctx) {
    ctx.serve('shared-http', createHttpServer((_req, res) => { res.end('ok') }), { reusePort: true })
    ctx.onClose(() => { stops.push(ctx.restarting) })
    return {}
  },
  async start (ctx) {
    bound = ctx.bound('shared-http')
  }
})

/** Bind host:port with or without reusePort; resolves with the error code, or 'bound'. */
async function bind (host: string, port: number, reusePort: boolean): Promise<string> {
  const server: Server = createServer()
  return await new Promise(resolve => {
    server.once('error', (err: NodeJS.ErrnoException) => { resolve(err.code ?? err.message) })
    server.listen({ host, port, reusePort }, () => { server.close(); resolve('bound') })
  })
}

t.test('a raw listener bound with reusePort, its bound address, and restarting at stop', async t => {
  const stateDir = tempDir(t)
  const host = new ServerHost({
    cwd: stateDir,
    config: { server: { state_dir: stateDir, listeners: loopbackListeners([shared]) } },
    env: {},
    plugins: [shared],
    logger: pino({ level: 'silent' })
  }, { fatal: err => { t.fail(String(err)) } })
  t.teardown(async () => { await host.stop() })
  const first = await host.start()
  const url = first.url('shared-http')
  t.same(bound, { host: '127.0.0.1', port: Number(url.port) }, 'the configured host and the port bound')
  t.equal(await bind('127.0.0.1', Number(url.port), true), 'bound', 'another socket with reusePort binds the same address')
  t.equal(await bind('127.0.0.1', Number(url.port), false), 'EADDRINUSE', 'one without it is refused')
  await host.restart()
  await pollUntil(() => host.kernel !== first && host.kernel.state === 'running', { what: 'the restart' })
  t.equal((await through(url, 'x')).body, 'ok', 'the same address after the restart')
  await host.stop()
  t.same(stops, [true, false], 'restarting at the restart in place, not at the stop')
})
