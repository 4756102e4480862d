// Connection limits: a client address over its cap is refused on every listener (fastify and raw)
// while another address is still served; the total cap holds across addresses and frees up as
// connections close; refusals are counted. The descriptor limit is raised to the hard one at start.
import t from 'tap'
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { connect, type Socket } from 'node:net'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { definePlugin } from '../../kernel/index.js'
import campaign from '../../plugins/campaign/index.js'
import ingest from '../../plugins/ingest/index.js'
import { CLI, exited, listenerUrlsIn } from '../support/cli.js'
import { testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

const raw = definePlugin({
  name: 'rawdemo',
  version: '1',
  listeners: [{ name: 'rawdemo', port: 0, kind: 'raw', description: 'a raw node:http server' }],
  setup (ctx) {
    ctx.serve('rawdemo', createServer((_request, response) => { response.end('raw ok') }))
  }
})

/** A connection from `from` (a loopback address) that stays open; resolves once connected. */
async function hold (port: number, from: string, sockets: Socket[]): Promise<Socket> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from }, () => { resolve(socket) })
    socket.once('error', reject)
    sockets.push(socket)
  })
}

/** Whether the server closed a new connection from `from` at once (refused), rather than keeping it. */
async function refused (port: number, from: string, sockets: Socket[]): Promise<boolean> {
  const socket = await hold(port, from, sockets)
  const closed = new Promise<boolean>(resolve => { socket.once('close', () => { resolve(true) }) })
  socket.on('error', () => {})
  // A kept connection answers a request; a refused one closes without an answer.
  socket.write('GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\n\r\n')
  const answered = new Promise<boolean>(resolve => { socket.once('data', () => { resolve(false) }) })
  return await Promise.race([closed, answered])
}

async function get (url: URL, from: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: from }, () => {
      socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    })
    let text = ''
    socket.on('data', (chunk: Buffer) => { text += chunk.toString() })
    socket.once('close', () => { resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0)) })
    socket.once('error', reject)
  })
}

t.test('over its cap an address is refused on every listener; other addresses are served; the total cap holds', async t => {
  const kernel = await testKernel(t, { plugins: [raw, ingest, campaign], config: { server: { connections_per_address: 20, connections_total: 50 } } })
  const control = kernel.url('control')
  const rawUrl = kernel.url('rawdemo')
  const sockets: Socket[] = []
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  for (let i = 0; i < 20; i++) await hold(Number(control.port), '127.0.0.2', sockets)
  t.ok(await refused(Number(control.port), '127.0.0.2', sockets), 'the 21st connection of 127.0.0.2 to control is closed at once')
  for (const name of ['rawdemo', 'telemetry', 'app']) t.ok(await refused(Number(kernel.url(name).port), '127.0.0.2', sockets), `and to ${name}: the cap spans listeners`)
  t.equal(await get(new URL('/api/v1/health/live', control), '127.0.0.1'), 200, 'another address is served on control')
  t.equal(await get(rawUrl, '127.0.0.1'), 200, 'on the raw listener')
  t.equal(await get(new URL('/auth/mode', kernel.url('telemetry')), '127.0.0.1'), 200, 'on telemetry')
  t.equal(await get(new URL('/assets/none.js', kernel.url('app')), '127.0.0.1'), 404, 'and on the campaign app (an answer: its 404)')

  for (let i = 0; i < 20; i++) await hold(Number(rawUrl.port), '127.0.0.3', sockets)
  const fourth: Socket[] = []
  for (let i = 0; i < 10; i++) await hold(Number(control.port), '127.0.0.4', fourth)
  t.ok(await refused(Number(control.port), '127.0.0.5', sockets), 'with 50 connections held, a new address is refused too')
  for (const socket of fourth) socket.destroy()
  await pollUntil(async () => await get(new URL('/api/v1/health/live', control), '127.0.0.5') === 200, { what: 'room again once connections closed' })

  const { body } = await kernel.exposition('control')
  t.match(body, /^berth_connections_refused_total\{cap="per_address"\} [2-9]\d*$/m)
  t.match(body, /^berth_connections_refused_total\{cap="total"\} [1-9]\d*$/m)
})

t.test('berth server raises its descriptor limit to the hard limit at start', async t => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), '[server]\nstate_dir = "state"\n[server.listeners.control]\nhost = "127.0.0.1"\nport = 0\n')
  const child = spawn('prlimit', ['--nofile=1024:4096', process.execPath, CLI, 'server'], { cwd: dir, env: { ...process.env, BERTH_PLUGINS: 'tokens' }, stdio: ['ignore', 'pipe', 'ignore'] })
  let log = ''
  child.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  t.teardown(async () => { if (child.exitCode === null) { child.kill('SIGKILL'); await exited(child) } })
  // The control port, bound as 0, is read back from the server's "berth server running" log line.
  const control = await pollUntil(() => listenerUrlsIn(log)?.control, { what: 'the server\'s listeners', timeout: 30_000 })
  await pollUntil(async () => (await fetch(new URL('/api/v1/health/live', control)).catch(() => undefined))?.ok === true, { what: 'the server', timeout: 30_000 })
  const limits = readFileSync(`/proc/${child.pid ?? 0}/limits`, 'utf8').split('\n').find(line => line.startsWith('Max open files')) ?? ''
  t.match(limits, /^Max open files\s+4096\s+4096\s+files/, 'started at 1024 of 4096, it runs with 4096')
  child.kill('SIGTERM')
  t.equal(await exited(child), 0)
})
