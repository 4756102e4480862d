// The idempotency rule: `duplicate` only for a chunk already stored with the same content; a chunk
// that reuses a stored sequence with other content, or (frame version 2) is a device's first
// transmission of a sequence an earlier boot used, is stored. Retransmissions of version 2 and every
// copy of version 1 are duplicates when their content is the same, whole or in fragments, sealed or not.
import t from 'tap'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import type { ChunkPayload } from '../../../plugins/ingest/wire/payloads.js'
import { markWith, chunkDigest } from '../../../plugins/ingest/chunk-marks.js'
import { seenKey } from '../../../plugins/ingest/store.js'
import { onPostgres, telemetryServer, type TelemetryServer } from './harness.js'

const powerOn: ChunkPayload = { type: 'RebootReason', record: { reason: 'power_on', boot_count: 1, pc: 0, lr: 0 } }
const heartbeat = (uptime: number): ChunkPayload => ({ type: 'Heartbeat', record: { uptime_ms: uptime, boot_count: 1 } })

async function list (server: TelemetryServer, device: string, series: string): Promise<Array<Record<string, unknown>>> {
  return ((await (await server.api('GET', `/devices/${device}/${series}`, 'viewer')).json()) as { items: Array<Record<string, unknown>> }).items
}

t.test('version 1: the same bytes are a duplicate; other content under a stored sequence is stored', async t => {
  const server = await telemetryServer(t)
  const device = '1d00000000000001'
  const first = encodeChunk({ device, sequence: 7, payload: heartbeat(1000) })
  t.match((await server.ingest(first)).json.frames[0], { status: 'accepted' })
  const again = (await server.ingest(first)).json.frames[0]
  t.match(again, { status: 'duplicate' }, 'a copy')
  t.notOk('sequence_reused' in again)
  const other = (await server.ingest(encodeChunk({ device, sequence: 7, payload: powerOn }))).json.frames[0]
  t.match(other, { status: 'accepted', sequence_reused: true }, 'other content under the same sequence is never dropped')
  t.equal((await list(server, device, 'reboots')).length, 1, 'and is stored')
  t.match((await server.ingest(encodeChunk({ device, sequence: 7, payload: heartbeat(1000) }))).json.frames[0], { status: 'duplicate' }, 'both contents are remembered')
  t.match((await server.ingest(encodeChunk({ device, sequence: 7, payload: powerOn }))).json.frames[0], { status: 'duplicate' })
})

t.test('version 2: a first transmission under a stored sequence is a new boot, a retransmission a copy', async t => {
  const server = await telemetryServer(t)
  const device = '1d00000000000002'
  const boot = (retransmission = false): Uint8Array => encodeChunk({ device, sequence: 1, payload: powerOn, version: 2, retransmission })
  t.match((await server.ingest(boot())).json.frames[0], { status: 'accepted' })
  t.match((await server.ingest(boot(true))).json.frames[0], { status: 'duplicate' }, 'the retransmission of a stored chunk')
  t.match((await server.ingest(boot())).json.frames[0], { status: 'accepted', sequence_reused: true }, 'the same bytes sent first by a later boot')
  t.match((await server.ingest(boot(true))).json.frames[0], { status: 'duplicate' })
  const changed = encodeChunk({ device, sequence: 1, payload: heartbeat(5), version: 2, retransmission: true })
  t.match((await server.ingest(changed)).json.frames[0], { status: 'accepted', sequence_reused: true }, 'a retransmission with other content is stored')
  const reboots = await list(server, device, 'reboots')
  t.equal(reboots.length, 2, 'both power-on reboots are stored')
  t.not(reboots[0].received_at, reboots[1].received_at, 'each under a time of its own')

  const twice = (await server.ingest(Buffer.concat([encodeChunk({ device, sequence: 9, payload: powerOn, version: 2 }), encodeChunk({ device, sequence: 9, payload: powerOn, version: 2 })]))).json
  t.match(twice, { accepted: 2 }, 'two boots in one request (a gateway forwarding what it spooled)')
  t.equal((await list(server, device, 'reboots')).length, 4)
  const metrics = await (await server.api('GET', '/metrics/prometheus', 'viewer')).text()
  t.match(metrics, /^berth_ingest_sequence_reuses_total 3$/m, 'each reuse is counted')
})

t.test('version 2 fragments and sealed chunks: the retransmission bit changes neither the reassembly nor the seal', async t => {
  const server = await telemetryServer(t)
  const device = '1d00000000000003'
  const registered = await (await server.api('POST', '/devices/register', 'provisioner', { id: device, encrypted: true })).json() as { key: string }
  const key = Buffer.from(registered.key, 'hex')
  const trace: ChunkPayload = { type: 'Trace', record: { uptime_ms: 10, dropped: 0, data: Buffer.from('a log line long enough to need several fragments\n') } }
  const chunk = (retransmission: boolean): Buffer[] => {
    const bytes = Buffer.from(encodeChunk({ device, sequence: 3, payload: trace, key, mtu: 16, version: 2, retransmission }))
    const frames: Buffer[] = []
    for (let at = 0; at < bytes.length; at += 26 + bytes.readUInt16LE(at + 20)) frames.push(bytes.subarray(at, at + 26 + bytes.readUInt16LE(at + 20)))
    return frames
  }
  const plain = chunk(false)
  const flagged = chunk(true)
  t.ok(plain.length > 2, `${plain.length} fragments`)
  t.match((await server.ingest(Buffer.concat(plain.slice(0, 2)))).json, { partial: 2 })
  const rest = await server.ingest(Buffer.concat([flagged[1], ...flagged.slice(2)]))
  t.match(rest.json.frames.at(-1), { status: 'accepted' }, 'flagged and unflagged fragments of one chunk reassemble and open')
  t.equal((await list(server, device, 'traces'))[0].text, 'a log line long enough to need several fragments\n')
  const resent = await server.ingest(Buffer.concat(flagged))
  t.match(resent.json.frames.at(-1), { status: 'duplicate' }, 'the sealed chunk retransmitted whole is a copy')
  const reboot = await server.ingest(Buffer.concat([encodeChunk({ device, sequence: 3, payload: powerOn, key, version: 2 })]))
  t.match(reboot.json.frames[0], { status: 'accepted', sequence_reused: true }, 'a new boot reusing the sequence, sealed')
})

t.test('a mark from before digests were kept still answers a copy as a duplicate, and retention removes both kinds', { skip: onPostgres() && 'marks from before digests were kept exist in LMDB stores only' }, async t => {
  const server = await telemetryServer(t)
  const device = '1d00000000000004'
  const { store } = server.service.telemetry
  const old = Date.now() - 86_400_000 // a day: within retention (which also runs once at start)
  await store.seen.put(seenKey(device, 11), old)
  await store.seen.put(seenKey(device, 12), markWith(undefined, chunkDigest(6, 0, new Uint8Array(1)), old))
  await store.devices.put(device, { id: device, name: device, group: null, serial: null, hardware_version: null, software_type: null, software_version: null, build_id: null, registered: true, encrypted: false, created_at: old, last_seen: null, boot_count: null, offline: false })
  t.match((await server.ingest(encodeChunk({ device, sequence: 11, payload: heartbeat(1) }))).json.frames[0], { status: 'duplicate' })
  await server.service.applyRetention(Date.now() + 400 * 86_400_000)
  t.equal(store.seen.get(seenKey(device, 11)), undefined, 'the old time-only mark is gone')
  t.equal(store.seen.get(seenKey(device, 12)), undefined, 'the old mark with digests is gone')
  t.match((await server.ingest(encodeChunk({ device, sequence: 11, payload: heartbeat(1) }))).json.frames[0], { status: 'accepted' }, 'after retention the sequence is stored again')
})
