// Transfer rate of a signed update over the QEMU example's emulated UART (docs/firmware-updates.md):
// the bootloader and application of `make qemu-updatable` run in qemu-system-arm with the factory image
// 1.0.0, their UART0 on a TCP connection to the test's stand-in for the gateway
// (test/support/update-standin.ts), which offers a signed 2.0.0; the clock runs from the device's first
// request to its result (every block asked for, written into the slot, the SHA-256 and signature
// checked). Each round is a fresh emulation; the figures are the image's bytes per second of that time
// and the time from one request to the next (the block's round trip: 48 bytes out, up to 558 in).
// Each round runs twice, alternating: both ends of the TCP connection sending without Nagle's algorithm
// (QEMU's nodelay=on, the stand-in's setNoDelay; QEMU writes the UART's bytes one at a time), and with it.
// Run: node --import=tsx bench/uart-update.ts   (needs arm-none-eabi-gcc and qemu-system-arm; BENCH_ROUNDS, default 3)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildUpdatable, runUpdatable, UpdateStandin } from '../test/support/update-standin.js'
import { pollUntil } from '../test/support/poll.js'
import { envInt, markdownTable, median } from './stats.js'

const rounds = envInt('BENCH_ROUNDS', 3)
const dir = mkdtempSync(join(tmpdir(), 'berth-uart-update-'))
try {
  const build = await buildUpdatable(dir)
  const factory = join(dir, 'factory.img')
  writeFileSync(factory, await build.image('1.0.0'))
  const v2 = await build.image('2.0.0')
  const rows: string[][] = []
  const rates = new Map<boolean, number[]>([[true, []], [false, []]])
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
      rows.push([String(round), nodelay ? 'nodelay' : 'Nagle', v2.length.toLocaleString('en'), String(standin.requests.length), seconds.toFixed(2), Math.round(rate).toLocaleString('en'), median(gaps).toFixed(1)])
    } finally {
      qemu.kill()
      await standin.close()
    }
  }
  console.log(markdownTable(['round', 'TCP', 'image bytes', 'requests', 'seconds', 'bytes/s', 'request to request, median ms'], rows))
  for (const [nodelay, values] of rates) console.log(`median ${nodelay ? 'with nodelay' : 'with Nagle\'s algorithm'}: ${Math.round(median(values)).toLocaleString('en')} bytes/s`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
