// Transfer rate of a signed update over the QEMU example's emulated UART (docs/firmware-updates.md):
// the bootloader and application of `make qemu-updatable` run in qemu-system-arm with the factory image
// 1.0.0, their UART0 on a TCP connection to the test's stand-in for the gateway
// (test/support/update-standin.ts), which offers a signed 2.0.0; the clock runs from the device's first
// request to its result (every block asked for, written into the slot, the SHA-256 and signature
// checked). Each round is a fresh emulation; the figures are the image's bytes per second of that time
// and the time from one request to the next (the block's round trip: 48 bytes out, up to 558 in).
// Each round runs three times, in turn: both ends of the TCP connection sending without Nagle's algorithm
// (QEMU's nodelay=on, the stand-in's setNoDelay; QEMU writes the UART's bytes one at a time), with it,
// and through the real path: `berth gateway` on QEMU's UART (a TCP server, nodelay) fetching the image
// from a `berth server` with range requests. Through the gateway, the clock is the server's: from its
// OTA log's "download started" (the gateway's first range request) to "downloaded and verified" (the
// device's result, reported by the gateway).
// Run: npm run build:ts && node --import=tsx bench/uart-update.ts
//   (needs arm-none-eabi-gcc and qemu-system-arm; the server and gateway are this build's dist/; BENCH_ROUNDS, default 3)
import { spawn, type ChildProcess } from 'node:child_process'
import { createPublicKey } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ADMIN_PASSWORD_FILE } from '../plugins/ingest/commands.js'
import { rawPublicKey } from '../plugins/ingest/ota-image.js'
import { probablyFreePort } from '../test/support/net.js'
import { buildUpdatable, FACTORY, runUpdatable, UpdateStandin, type UpdatableBuild } from '../test/support/update-standin.js'
import { pollUntil } from '../test/support/poll.js'
import { startServer, stopServer } from './berth-server.js'
import { envInt, markdownTable, median } from './stats.js'

const CLI = fileURLToPath(new URL('../dist/kernel/cli/cli.js', import.meta.url))
const API_KEY = 'bench-uart-update-key'

/** Stop a child and wait for it. */
async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

/**
 * One round through `berth gateway` and `berth server`: the seconds from the gateway's first range
 * request for the image to the device's verified result, by the server's OTA log.
 */
async function throughGateway (build: UpdatableBuild, factory: string, v2: Buffer): Promise<number> {
  const server = await startServer({
    plugins: 'ingest',
    cli: CLI,
    env: { INGEST_API_KEY: API_KEY },
    toml: ['[ingest]', `ota_public_key = "${rawPublicKey(createPublicKey(build.privateKey)).toString('hex')}"`]
  })
  const children: ChildProcess[] = []
  try {
    const admin = `Basic ${Buffer.from(`admin:${readFileSync(join(server.dir, '.berth', ADMIN_PASSWORD_FILE), 'utf8').trim()}`).toString('base64')}`
    const api = async <T>(method: string, path: string, body?: Buffer | object): Promise<T> => {
      const response = await fetch(new URL(path, server.url), {
        method,
        headers: { authorization: admin, 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json' },
        body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body)
      })
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
      return await response.json() as T
    }
    const port = await probablyFreePort()
    children.push(spawn('qemu-system-arm', ['-M', 'mps2-an385', '-nographic', '-monitor', 'none', '-semihosting-config', 'enable=on,target=native',
      '-kernel', build.bootloader, '-device', `loader,file=${factory},addr=0x${FACTORY.toString(16)}`, '-serial', `tcp:127.0.0.1:${port},server=on,wait=off,nodelay=on`], { stdio: 'ignore' }))
    const spool = mkdtempSync(join(tmpdir(), 'berth-uart-update-spool-'))
    children.push(spawn(process.execPath, [CLI, 'gateway', '--serial', `tcp:127.0.0.1:${port}`, '--url', server.url.href, '--api-key', API_KEY, '--spool', spool, '--no-ble', '--no-usb'], { stdio: 'ignore' }))
    const device = await pollUntil(async () => (await api<{ devices: Array<{ id: string, software_version: string | null }> }>('GET', '/devices')).devices.find(d => d.software_version === '1.0.0')?.id,
      { timeout: 60_000, what: 'the device\'s telemetry through the gateway' })
    const { id } = await api<{ id: string }>('POST', '/ota/images?software_type=qemu-updatable&version=2.0.0', v2)
    await api('POST', '/ota/releases', { image: id })
    const at = (entries: Array<{ at: number, summary: string }>, pattern: RegExp): number | undefined => entries.find(e => pattern.test(e.summary))?.at
    const [started, verified] = await pollUntil(async () => {
      const { entries } = await api<{ entries: Array<{ at: number, kind: string, summary: string }> }>('GET', `/devices/${device}/timeline?limit=1000`)
      const ota = entries.filter(e => e.kind === 'ota')
      const pair = [at(ota, /^OTA: download(ed| started) 2\.0\.0, bytes 0–/), at(ota, /^OTA: 2\.0\.0 downloaded and verified/)]
      return pair[0] !== undefined && pair[1] !== undefined ? pair as [number, number] : undefined
    }, { timeout: 120_000, interval: 50, what: '2.0.0 downloaded and verified through the gateway' })
    rmSync(spool, { recursive: true, force: true })
    return (verified - started) / 1000
  } finally {
    for (const child of children) await stop(child)
    await stopServer(server)
  }
}

const rounds = envInt('BENCH_ROUNDS', 3)
const dir = mkdtempSync(join(tmpdir(), 'berth-uart-update-'))
try {
  const build = await buildUpdatable(dir)
  const factory = join(dir, 'factory.img')
  writeFileSync(factory, await build.image('1.0.0'))
  const v2 = await build.image('2.0.0')
  const rows: string[][] = []
  const rates = new Map<boolean, number[]>([[true, []], [false, []]])
  const gateway: number[] = []
  for (let round = 1; round <= rounds; round++) for (const nodelay of [true, false]) {
    const standin = await UpdateStandin.listen(nodelay)
    const { qemu } = await runUpdatable(build.bootloader, factory, standin.port, nodelay)
    try {
      const times: number[] = []
      standin.policy = state => state.version === '1.0.0' ? { image: v2, version: '2.0.0' } : undefined
      // The stand-in's own record has no times: note when each request and the result arrive.
      let started = 0
      let last = 0
      const gaps: number[] = []
      await pollUntil(() => {
        const now = performance.now()
        if (standin.requests.length > times.length) {
          for (let i = times.length; i < standin.requests.length; i++) times.push(now)
          if (started === 0) started = now
          if (last !== 0) gaps.push(now - last)
          last = now
        }
        return standin.results.length > 0 ? now : undefined
      }, { timeout: 120_000, interval: 1, what: 'the result' })
      const seconds = (performance.now() - started) / 1000
      if (standin.results[0].status !== 1) throw new Error(`round ${round}: result status ${standin.results[0].status}`)
      const rate = v2.length / seconds
      rates.get(nodelay)?.push(rate)
      rows.push([String(round), nodelay ? 'stand-in, nodelay' : 'stand-in, Nagle', v2.length.toLocaleString('en'), String(standin.requests.length), seconds.toFixed(2), Math.round(rate).toLocaleString('en'), median(gaps).toFixed(1)])
    } finally {
      qemu.kill()
      await standin.close()
    }
    if (!nodelay) {
      const seconds = await throughGateway(build, factory, v2)
      gateway.push(v2.length / seconds)
      rows.push([String(round), 'berth gateway, nodelay', v2.length.toLocaleString('en'), '', seconds.toFixed(2), Math.round(v2.length / seconds).toLocaleString('en'), ''])
    }
  }
  console.log(markdownTable(['round', 'path', 'image bytes', 'requests', 'seconds', 'bytes/s', 'request to request, median ms'], rows))
  for (const [nodelay, values] of rates) console.log(`median, stand-in ${nodelay ? 'with nodelay' : 'with Nagle\'s algorithm'}: ${Math.round(median(values)).toLocaleString('en')} bytes/s`)
  console.log(`median through berth gateway: ${Math.round(median(gateway)).toLocaleString('en')} bytes/s`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
