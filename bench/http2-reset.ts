// HTTP/2 rapid reset against the proxy's HTTPS listener (bench/fixtures/proxy-server.js, a process of
// its own, its RSS read from /proc): the proxy's memory after ordinary HTTP/2 requests (the
// reference: as many streams, each answered) and after rounds of streams opened and reset at once
// (each connection closed by the proxy past its budget, the attacker opening the next), then after a
// pause, each read after a full garbage collection; and how many of the reset streams reached the
// upstream (forwarded before their reset was read).
// Run: npm run build && node dist/bench/http2-reset.js   (BENCH_STREAMS per phase, BENCH_ROUNDS attack rounds)
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { connect, type ClientHttp2Session } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { envInt, markdownTable } from './stats.js'
import { probablyFreePort } from '../test/support/net.js'
import { RESET_BATCH, resetBatch } from '../test/support/http2-reset.js'

const STREAMS = envInt('BENCH_STREAMS', 20_000)
const ROUNDS = envInt('BENCH_ROUNDS', 3)
const FIXTURE = fileURLToPath(new URL('./fixtures/proxy-server.js', import.meta.url))

async function pause (ms: number): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, ms))
}

/** The proxy's resident memory once it has collected its garbage. */
async function rssMiB (pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR2')
  await pause(300)
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
  return Math.round(kb / 102.4) / 10
}


function session (port: number): ClientHttp2Session {
  const client = connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
  client.on('error', () => undefined)
  return client
}

/** `count` ordinary GETs, 100 at a time on one connection. */
async function ordinary (port: number, count: number): Promise<void> {
  const client = session(port)
  for (let done = 0; done < count; done += 100) {
    await Promise.all(Array.from({ length: Math.min(100, count - done) }, async () => await new Promise<void>(resolve => {
      const stream = client.request({ ':path': '/' })
      stream.on('error', () => { resolve() })
      stream.on('close', () => { resolve() })
      stream.resume()
      stream.end()
    })))
  }
  client.close()
}

/** `count` streams opened and reset at once, on as many connections as the proxy makes it use; the connections used. */
async function attack (port: number, count: number): Promise<number> {
  let opened = 0
  let connections = 0
  while (opened < count) {
    const client = session(port)
    connections++
    await new Promise<void>(resolve => { client.once('connect', () => { resolve() }); client.once('close', () => { resolve() }) })
    let open = true
    while (opened < count && open) {
      open = await resetBatch(client, { ':path': '/' })
      opened += RESET_BATCH
    }
    client.destroy()
  }
  return connections
}

let reached = 0
const upstream = createServer((_req, res) => { reached++; res.end('ok') })
await new Promise<void>(resolve => upstream.listen(0, '127.0.0.1', resolve))
const [httpPort, httpsPort] = [await probablyFreePort(), await probablyFreePort()]
const proxy = spawn(process.execPath, ['--expose-gc', FIXTURE, String(httpPort), String(httpsPort), String((upstream.address() as AddressInfo).port)], { stdio: ['ignore', 'pipe', 'inherit'] })
await new Promise<void>(resolve => proxy.stdout.once('data', () => { resolve() }))
const pid = proxy.pid as number
const rows: string[][] = [['started', String(await rssMiB(pid)), '', '']]
await ordinary(httpsPort, STREAMS)
rows.push([`${STREAMS} ordinary requests (reference)`, String(await rssMiB(pid)), String(reached), '1'])
for (let round = 1; round <= ROUNDS; round++) {
  reached = 0
  const connections = await attack(httpsPort, STREAMS)
  await pause(500)
  rows.push([`attack round ${round}: ${STREAMS} reset streams`, String(await rssMiB(pid)), String(reached), String(connections)])
}
await pause(5000)
rows.push(['5 s later', String(await rssMiB(pid)), '', ''])
proxy.kill('SIGTERM')
upstream.close()
console.log(markdownTable(['phase', 'proxy RSS (MiB)', 'requests at the upstream', 'connections'], rows))
