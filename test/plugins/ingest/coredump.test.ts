// Coredumps through the API: a FaultRecord's regions stored with the fault, summed up in the fault list
// and the timeline, and given whole by GET /devices/{id}/faults/{received_at}/{sequence}/coredump to viewers (not to a
// device key, nor anonymously); a coredump past the server's bounds kept in part with the bytes dropped
// counted; faults without one, unknown faults and bad parameters answered with errors; and, with an ELF
// built by arm-none-eabi-gcc and uploaded, the named globals inside the regions with their values.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { COREDUMP_MAX_BYTES, COREDUMP_MAX_REGIONS, type CoredumpView } from '../../../plugins/ingest/coredump.js'
import { objectSymbols } from '../../../plugins/ingest/elf.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import type { ChunkPayload, CoredumpRegion, FaultRecord } from '../../../plugins/ingest/wire/payloads.js'
import { requireComponent } from '../../support/component.js'
import { armToolchain } from '../../support/firmware.js'
import { buildGlobalsElf, GLOBALS_DATA } from '../../support/globals-elf.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, basic, telemetryServer, type TelemetryServer } from './harness.js'

const run = promisify(execFile)
const DEVICE = 'c0de000000000001'
const REGISTERS: FaultRecord = { pc: 0x08000a01, lr: 0x08000123, sp: 0x20001ff0, psr: 0x61000000, cfsr: 1 << 17, hfsr: 1 << 30, mmfar: 0, bfar: 0, uptime_ms: 1000 }

interface ListedFault { sequence: number, received_at: number, coredump?: { regions: number, bytes: number, truncated: number, dropped: number } }

const info = (buildId: string): ChunkPayload => ({ type: 'DeviceInfo', record: { serial: 'SN-1', hardware_version: 'evt', software_type: 'main', software_version: '1.0.0', build_id: buildId } })
const fault = (coredump: CoredumpRegion[], truncated = 0): ChunkPayload => ({ type: 'FaultRecord', record: { ...REGISTERS, stack: Buffer.alloc(0), coredump, coredump_truncated: truncated } })
// Avro's bytes are Buffers.
const region = (address: number, length: number, fill = 0xab): CoredumpRegion => ({ address, data: Buffer.alloc(length, fill) })

async function send (server: TelemetryServer, sequence: number, payload: ChunkPayload): Promise<void> {
  const { status, json } = await server.ingest(encodeChunk({ device: DEVICE, sequence, payload }))
  if (status !== 200 || json.accepted !== 1) throw new Error(`chunk ${sequence} not accepted: ${status} ${JSON.stringify(json)}`)
}

/** The device's faults, newest last, by sequence number. */
async function faults (server: TelemetryServer): Promise<Map<number, ListedFault>> {
  const { items } = await (await server.api('GET', `/devices/${DEVICE}/faults?limit=1000`, 'viewer')).json() as { items: ListedFault[] }
  return new Map(items.map(item => [item.sequence, item]))
}

const coredumpPath = (f: ListedFault): string => `/devices/${DEVICE}/faults/${f.received_at}/${f.sequence}/coredump`

t.test('a coredump stored with its fault, read by viewers only', async t => {
  const server = await telemetryServer(t)
  await send(server, 1, info('c0ffee00c0ffee00'))
  const counter = Buffer.from([42, 0, 0, 0])
  await send(server, 2, fault([region(0x20001ff0, 64, 0x11), { address: 0x20000100, data: counter }], 12))
  await send(server, 3, { type: 'FaultRecord', record: REGISTERS })
  const listed = await faults(server)
  t.same(listed.get(2)?.coredump, { regions: 2, bytes: 68, truncated: 12, dropped: 0 }, 'the fault list sums it up')
  t.notOk('coredump' in (listed.get(3) ?? {}), 'a fault without one has none')
  const { entries } = await (await server.api('GET', `/devices/${DEVICE}/timeline`, 'viewer')).json() as { entries: Array<{ kind: string, sequence: number, record: ListedFault }> }
  t.same(entries.find(e => e.kind === 'fault' && e.sequence === 2)?.record.coredump, { regions: 2, bytes: 68, truncated: 12, dropped: 0 }, 'so does the timeline')

  const path = coredumpPath(listed.get(2) as ListedFault)
  const response = await server.api('GET', path, 'viewer')
  t.equal(response.status, 200, 'a viewer reads it')
  const view = await response.json() as CoredumpView & { build_id: string }
  t.same(view.regions, [
    { address: 0x20001ff0, length: 64, bytes: '11'.repeat(64) },
    { address: 0x20000100, length: 4, bytes: '2a000000' }
  ], 'its regions, in the device\'s order, as hex')
  t.equal(view.truncated, 12, 'the bytes the device cut')
  t.same(view.globals, [], 'no globals without symbols')
  t.equal(view.globals_unavailable, 'no ELF uploaded for build c0ffee00c0ffee00', 'and why')

  t.equal((await server.api('GET', path, null)).status, 401, 'anonymously: 401')
  const byDevice = await fetch(new URL(path, server.base), { headers: { 'x-api-key': API_KEY } })
  t.equal(byDevice.status, 401, 'with the device key: 401, it is no user\'s credential')
  t.match(await byDevice.json(), { error: String })

  const without = await server.api('GET', coredumpPath(listed.get(3) as ListedFault), 'viewer')
  t.equal(without.status, 404)
  t.match(await without.json(), { error: /has no coredump/ }, 'a fault without a coredump: 404, said so')
  const unknown = await server.api('GET', `/devices/${DEVICE}/faults/1/99/coredump`, 'viewer')
  t.equal(unknown.status, 404)
  t.match(await unknown.json(), { error: /has no fault received at 1 with sequence 99/ })
  const bad = await server.api('GET', `/devices/${DEVICE}/faults/now/2/coredump`, 'viewer')
  t.equal(bad.status, 400, 'a receive time that is not a number: 400')
  t.match(await bad.json(), { error: /received_at/ })
})

t.test('a coredump past the server\'s bounds is kept in part, what was dropped counted', async t => {
  const server = await telemetryServer(t)
  // Three regions of 8000 bytes: 16 KiB kept, the third cut after 384 bytes.
  await send(server, 1, fault([region(0x20000000, 8000), region(0x20010000, 8000), region(0x20020000, 8000)]))
  // More regions than are kept: 70 of one byte.
  await send(server, 2, fault(Array.from({ length: 70 }, (_, i) => region(0x20000000 + 4 * i, 1))))
  const listed = await faults(server)
  t.same(listed.get(1)?.coredump, { regions: 3, bytes: COREDUMP_MAX_BYTES, truncated: 0, dropped: 24000 - COREDUMP_MAX_BYTES }, 'bytes past the bound dropped and counted')
  const view = await (await server.api('GET', coredumpPath(listed.get(1) as ListedFault), 'viewer')).json() as CoredumpView
  t.same(view.regions.map(r => r.length), [8000, 8000, COREDUMP_MAX_BYTES - 16000], 'the last region kept is cut')
  t.equal(view.dropped, 24000 - COREDUMP_MAX_BYTES)
  t.same(listed.get(2)?.coredump, { regions: COREDUMP_MAX_REGIONS, bytes: COREDUMP_MAX_REGIONS, truncated: 0, dropped: 70 - COREDUMP_MAX_REGIONS }, 'regions past the bound dropped and counted')
})

const compiler = await requireComponent(t, 'arm-none-eabi-gcc', armToolchain)
if (compiler !== undefined) {
  t.test('named globals of the uploaded ELF inside the regions, with their values', async t => {
    const { path: elf, bytes } = await buildGlobalsElf(compiler, tempDir(t, 'berth-coredump-'))
    const symbols = new Map(objectSymbols(bytes).map(s => [s.name, s]))
    const { stdout } = await run('arm-none-eabi-nm', ['-S', elf])
    for (const line of stdout.split('\n').filter(l => / [dD] g_/.test(l))) {
      const [address, size, , name] = line.split(' ')
      t.same(symbols.get(name), { name, address: parseInt(address, 16), size: parseInt(size, 16) }, `${name} as nm reads it`)
    }
    const at = (name: string): number => symbols.get(name)?.address as number

    const server = await telemetryServer(t)
    const upload = await fetch(new URL('/ingest/elf', server.base), { method: 'POST', headers: { 'content-type': 'application/octet-stream', authorization: basic('provisioner') }, body: bytes })
    const { build_id: buildId } = await upload.json() as { build_id: string }
    t.equal(upload.status, 201)
    await send(server, 1, info(buildId))
    // The device's memory: every global, with values other than their initial ones; g_state cut short.
    const memory = Buffer.alloc(at('g_state') + 8 - GLOBALS_DATA)
    memory.writeUInt8(0xfe, at('g_u8') - GLOBALS_DATA)
    memory.writeUInt16LE(0xbeef, at('g_u16') - GLOBALS_DATA)
    memory.writeUInt32LE(42, at('g_counter') - GLOBALS_DATA)
    memory.writeBigUInt64LE(0xfedcba9876543210n, at('g_u64') - GLOBALS_DATA)
    await send(server, 2, fault([{ address: GLOBALS_DATA, data: memory }]))
    const listed = await faults(server)
    const view = await (await server.api('GET', coredumpPath(listed.get(2) as ListedFault), 'viewer')).json() as CoredumpView
    t.equal(view.globals_unavailable, undefined, 'the ELF was read')
    t.same(view.globals.map(g => [g.name, g.value]), [
      ['g_u8', 0xfe], ['g_u16', 0xbeef], ['g_counter', 42], ['g_u64', '18364758544493064720']
    ].sort((a, b) => at(a[0] as string) - at(b[0] as string)), 'each global wholly inside, its little-endian value (beyond 2^53 as a string); g_state, cut, left out')
    t.same(view.globals.find(g => g.name === 'g_counter'), { name: 'g_counter', address: at('g_counter'), size: 4, bytes: '2a000000', value: 42 })
  })
}
