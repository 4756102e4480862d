// Faults that cannot be resolved are kept with the reason: no build id from the device, no ELF for
// its build, or no resolver on this host; the resolver's answers are cached per build and address.
// (The resolved path runs end to end in test/e2e/device.test.ts.)
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ingest from '../../../plugins/ingest/index.js'
import symbolication from '../../../plugins/symbolication/index.js'
import { Addr2line } from '../../../plugins/symbolication/addr2line.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import type { ChunkPayload } from '../../../plugins/ingest/wire/payloads.js'
import { testKernel } from '../../support/kernel.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, basic } from '../ingest/harness.js'
import { SAMPLES } from '../ingest/samples.js'

const info = (buildId: string): ChunkPayload => ({ type: 'DeviceInfo', record: { ...(SAMPLES[0].record as object), build_id: buildId } } as ChunkPayload)

t.test('unresolvable faults keep a clear reason', async t => {
  const kernel = await testKernel(t, {
    plugins: [ingest, symbolication],
    config: { ingest: { api_key: API_KEY, users: [{ name: 'viewer', role: 'viewer', password: (await import('../../../plugins/ingest/auth/passwords.js')).hashPassword('correct horse battery staple viewer') }] }, symbolication: { addr2line: 'no-such-addr2line' } }
  })
  const base = kernel.url('telemetry')
  const post = async (device: string, payloads: ChunkPayload[]): Promise<void> => {
    const body = Buffer.concat(payloads.map((payload, sequence) => encodeChunk({ device, sequence, payload })))
    const answer = await fetch(new URL('/ingest/chunks', base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body })
    t.match(await answer.json(), { rejected: 0 })
  }
  const symbol = async (device: string): Promise<string> => await pollUntil(async () => {
    const { items } = await (await fetch(new URL(`/devices/${device}/faults`, base), { headers: { authorization: basic('viewer') } })).json() as { items: Array<{ symbol: string | null }> }
    return items[0]?.symbol ?? undefined
  }, { what: `a symbol for ${device}'s fault` })
  await post('0000000000000001', [info(''), SAMPLES[2]])
  t.equal(await symbol('0000000000000001'), 'unsymbolicated: the device reported no build id')
  await post('0000000000000002', [info('ab'.repeat(20)), SAMPLES[2]])
  t.equal(await symbol('0000000000000002'), `unsymbolicated: no ELF uploaded for build ${'ab'.repeat(20)}`)
  // An ELF for the build, but no resolver installed.
  await kernel.service('ingest').telemetry.store.elves.put('ab'.repeat(20), { build_id: 'ab'.repeat(20), software_type: null, software_version: null, size: 1, file: '/nonexistent.elf', uploaded_at: 0 })
  kernel.events.emit('telemetry.event', { kind: 'elf', build_id: 'ab'.repeat(20), at: Date.now() })
  await pollUntil(async () => await symbol('0000000000000002') === 'unsymbolicated: no-such-addr2line is not installed', { what: 'the second attempt' })
  t.pass('a missing resolver is named')
})

t.test('the resolver: one run for several addresses, answers cached per build and address, a timeout', async t => {
  const dir = tempDir(t)
  const tool = join(dir, 'fake-addr2line')
  const runs = join(dir, 'runs')
  // A stand-in for the toolchain's addr2line with its output format (the real one runs in the e2e test).
  writeFileSync(tool, `#!/bin/sh\necho run >> ${runs}\nshift 4\nfor a in "$@"; do if [ "$a" = 0x10 ]; then echo main; echo /src/main.c:7; else echo '??'; echo '??:0'; fi; done\n`, { mode: 0o755 })
  const resolver = new Addr2line({ tool, timeoutMs: 5000, concurrency: 1, cacheEntries: 100 })
  t.same(await resolver.resolve('b1', '/x.elf', [0x10, 0x20]), ['main at /src/main.c:7', undefined])
  t.same(await resolver.resolve('b1', '/x.elf', [0x10]), ['main at /src/main.c:7'], 'from the cache')
  const { readFileSync } = await import('node:fs')
  t.equal(readFileSync(runs, 'utf8'), 'run\n', 'one run of the resolver')
  const slow = join(dir, 'slow')
  writeFileSync(slow, '#!/bin/sh\nsleep 5\n', { mode: 0o755 })
  await t.rejects(new Addr2line({ tool: slow, timeoutMs: 200, concurrency: 1, cacheEntries: 10 }).resolve('b', '/x.elf', [1]), { message: `${slow} took longer than 0.2 s` })
})
