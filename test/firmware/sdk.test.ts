// The C firmware SDK on the host (gcc, POSIX port): its unit tests; the golden vectors byte for byte
// (Avro, RLE, AES-CCM, fragments) and back; its CBOR decoded by the server's decoder; and whole upload
// sessions over HTTP, LoRa and BLE fragments, plain and encrypted, stored by a real server.
import t from 'tap'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { decodeChunk } from '../../plugins/ingest/wire/decoder.js'
import { requireComponent } from '../support/component.js'
import { hostToolchain, make, tapLines, writeVectorData } from '../support/firmware.js'
import { tempDir } from '../support/tmp.js'
import { API_KEY, telemetryServer } from '../plugins/ingest/harness.js'

const run = promisify(execFile)
const toolchain = await requireComponent(t, 'gcc', hostToolchain)

if (toolchain !== undefined) {
  const out = tempDir(t, 'berth-firmware-')
  await make('host-tests', out)

  t.test('unit tests of the SDK', async t => {
    const { stdout } = await run(join(out, 'unit'))
    const lines = tapLines(stdout)
    t.ok(lines.length >= 20, `${lines.length} checks ran`)
    for (const line of lines) t.ok(line.ok, line.name)
  })

  t.test('golden vectors: the C encoder writes them byte for byte and reads them back', async t => {
    const chosen = writeVectorData(join(out, 'vectors_data.c'))
    await make('vectors', out)
    const { stdout } = await run(join(out, 'vectors'), ['check'])
    const lines = tapLines(stdout)
    const layered = chosen.filter(v => (v.flags & 3) !== 0).length
    t.equal(lines.length, chosen.length + layered, `${chosen.length} vectors encoded, ${layered} opened and expanded`)
    for (const line of lines) t.ok(line.ok, line.name)
  })

  t.test('CBOR from the C encoder decodes on the server to the vectors\' records', async t => {
    const cbor = join(out, 'cbor')
    const chosen = writeVectorData(join(out, 'vectors_data.c'))
    await run('mkdir', ['-p', cbor])
    await run('cp', [join(out, 'vectors_data.c'), join(cbor, 'vectors_data.c')])
    await make('vectors', cbor, '-DBERTH_SERIALIZATION_CBOR=1')
    const { stdout } = await run(join(cbor, 'vectors'), ['print'])
    for (const line of stdout.trim().split('\n')) {
      const [name, hex] = line.split(' ')
      const vector = chosen.find(v => v.name === name)
      if (vector === undefined || vector.flags !== 0 || vector.mtu !== undefined) continue
      const frame = Buffer.from(hex, 'hex')
      t.equal(frame[4], 0x04, `${name}: flag bit 2 says CBOR`)
      const payload = frame.subarray(22, 22 + frame.readUInt16LE(20))
      const decoded = decodeChunk({ type: frame[3], flags: frame[4], device: frame.subarray(8, 16), sequence: frame.readUInt32LE(16) }, payload, undefined)
      const expected = vector.type === 'Trace' ? { ...vector.record, data: Buffer.from(vector.record.data as string, 'hex') } : vector.record
      t.match(decoded, { ok: true, payload: { type: vector.type, record: expected } }, `${name} in CBOR decodes to its record`)
    }
  })

  t.test('upload sessions over HTTP, LoRa and BLE fragments, plain and encrypted, stored by the server', async t => {
    const server = await telemetryServer(t)
    const [device, sealedDevice] = ['c0ffee0000000001', 'c0ffee0000000002']
    const registered = await server.api('POST', '/devices/register', 'provisioner', { id: sealedDevice, encrypted: true })
    const { key } = await registered.json() as { key: string }
    const { stdout } = await run(join(out, 'session'), ['127.0.0.1', server.base.port, API_KEY, device, sealedDevice, key])
    for (const line of tapLines(stdout)) t.ok(line.ok, line.name)
    t.equal(stdout.match(/"rejected":0,/g)?.length, 3, 'no frame of the three sessions was rejected')
    const json = async (path: string): Promise<Record<string, unknown>> => await (await server.api('GET', path, 'viewer')).json() as Record<string, unknown>
    t.match(await json(`/devices/${device}`), { serial: 'SN-C-0001', software_type: 'c-sdk-test', boot_count: 2 })
    t.match(await json(`/devices/${device}/reboots`), { items: [{ reason: 'power_on', boot_count: 1 }, { reason: 'hard_fault', boot_count: 2, pc: 0x08000a11, lr: 0x08000b23 }] })
    t.match(await json(`/devices/${device}/faults`), { items: [{ pc: 0x08000a11, lr: 0x08000b23, cfsr: 0x400, uptime_ms: 1234 }] })
    const metrics = await json(`/devices/${device}/metrics`) as { items: Array<{ key: string, kind: string, value: number }> }
    t.same(metrics.items.map(m => [m.key, m.kind, m.value]), [['battery_mv', 'gauge', 3650], ['tx_packets', 'increment', 7], ['loop_us', 'observe', 812]])
    t.match(await json(`/devices/${device}/traces`), { items: [{ text: 'boot ok\nsensor ready\n', dropped: 0 }] })
    t.match(await json(`/devices/${sealedDevice}/traces`), { items: [{ text: 'encrypted hello\n' }] }, 'the encrypted session was opened with the device\'s key')
  })
}
