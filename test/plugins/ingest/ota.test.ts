// OTA releases through the API: images uploaded by provisioners only (one image a version, size limit,
// content type); a staged release offered to the devices its cohort and stage hold, as devices ask
// with their key; the image downloaded whole and in ranges (resumed, past the end: 416); advance,
// pause, resume and abort by provisioners, not viewers; a release advanced on its schedule; and a
// release that halts itself when its new version crashes more than the old one by its factor.
import t from 'tap'
import { createHash } from 'node:crypto'
import { bucketOf, type Release } from '../../../plugins/ingest/ota-releases.js'
import { checkReleases } from '../../../plugins/ingest/routes/ota.js'
import type { ChunkPayload, FaultRecord } from '../../../plugins/ingest/wire/payloads.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { pollUntil } from '../../support/poll.js'
import { API_KEY, basic, telemetryServer, type TelemetryServer, type TestRole } from './harness.js'

const FLEET = Array.from({ length: 40 }, (_, n) => `f0${n.toString(16).padStart(14, '0')}`)
const FAULT: FaultRecord = { pc: 0x08000a01, lr: 0x08000123, sp: 0x20001ff0, psr: 0, cfsr: 1 << 17, hfsr: 0, mmfar: 0, bfar: 0, uptime_ms: 1000 }
const info = (version: string): ChunkPayload => ({ type: 'DeviceInfo', record: { serial: 'SN', hardware_version: 'evt', software_type: 'main', software_version: version, build_id: 'b'.repeat(16) } })

const sequences = new Map<string, number>()
async function send (server: TelemetryServer, device: string, payloads: ChunkPayload[]): Promise<void> {
  const frames = payloads.map(payload => {
    const sequence = (sequences.get(device) ?? 0) + 1
    sequences.set(device, sequence)
    return encodeChunk({ device, sequence, payload })
  })
  const { json } = await server.ingest(Buffer.concat(frames))
  if (json.accepted !== payloads.length) throw new Error(`not accepted: ${JSON.stringify(json)}`)
}

/** What the update check answers a device: the version offered, or null (204). */
async function offer (server: TelemetryServer, device: string): Promise<string | null> {
  const response = await fetch(new URL(`/ota/update?device=${device}`, server.base), { headers: { 'x-api-key': API_KEY } })
  if (response.status === 204) return null
  if (response.status !== 200) throw new Error(`update check: ${response.status} ${await response.text()}`)
  return (await response.json() as { version: string }).version
}

const post = async (server: TelemetryServer, path: string, role: TestRole, body?: unknown): Promise<Response> => await server.api('POST', path, role, body)

t.test('images, a staged release, downloads, actions and a halt', async t => {
  const server = await telemetryServer(t, { ota_image_max_bytes: 4096, ota_check_seconds: 1 })
  const image = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251))
  const sha256 = createHash('sha256').update(image).digest('hex')
  const raw = async (version: string, bytes: Buffer, role: TestRole, type = 'application/octet-stream'): Promise<Response> =>
    await fetch(new URL(`/ota/images?software_type=main&version=${version}`, server.base), { method: 'POST', headers: { authorization: basic(role), 'content-type': type }, body: bytes })
  t.equal((await raw('1.1.0', image, 'viewer')).status, 403, 'a viewer may not upload')
  const created = await raw('1.1.0', image, 'provisioner')
  t.equal(created.status, 201)
  t.match(await created.json(), { id: sha256, sha256, size: 1000, version: '1.1.0', uploaded_by: 'provisioner' })
  t.equal((await raw('1.1.0', image, 'provisioner')).status, 200, 'the same image again: as it was')
  t.equal((await raw('1.1.0', Buffer.from('other'), 'provisioner')).status, 409, 'another image under a version taken')
  t.equal((await raw('1.2.0', Buffer.alloc(5000), 'provisioner')).status, 413, 'over ota_image_max_bytes')
  t.equal((await raw('1.2.0', image, 'provisioner', 'text/plain')).status, 415)
  t.same((await (await server.api('GET', '/ota/images', 'viewer')).json() as { images: Array<{ id: string }> }).images.map(i => i.id), [sha256])

  for (const device of FLEET) await send(server, device, [info('1.0.0')])
  const response = await post(server, '/ota/releases', 'provisioner', { image: sha256, stages: [25, 100] })
  t.equal(response.status, 201)
  const release = await response.json() as Release
  t.equal((await post(server, '/ota/releases', 'viewer', { image: sha256 })).status, 403, 'a viewer may not release')
  for (const [body, what] of [[{ image: sha256, stages: [50, 25, 100] }, 'stages not ascending'], [{ image: sha256, stages: [10, 50] }, 'stages not ending at 100'], [{ image: sha256, group: 'nope' }, 'an unknown group'], [{ image: '0'.repeat(64) }, 'an unknown image']] as const) {
    t.ok([400, 404].includes((await post(server, '/ota/releases', 'provisioner', body)).status), `refused: ${what}`)
  }
  const inStage = FLEET.filter(d => bucketOf(d, `stage:${release.id}`) < 25)
  const offered = (await Promise.all(FLEET.map(async d => await offer(server, d)))).map((v, i) => v === null ? null : FLEET[i]).filter(d => d !== null)
  t.same(offered, inStage, `the first stage offers the devices its 25% holds (${inStage.length} of ${FLEET.length})`)
  t.ok(inStage.length > 0 && inStage.length < FLEET.length)
  t.equal((await fetch(new URL(`/ota/update?device=${FLEET[0]}`, server.base))).status, 401, 'a device key is needed')
  t.equal((await fetch(new URL('/ota/update?device=dddddddddddddddd', server.base), { headers: { 'x-api-key': API_KEY } })).status, 404)
  t.equal((await fetch(new URL('/ota/update?device=nope', server.base), { headers: { 'x-api-key': API_KEY } })).status, 400)

  // The download: whole, a range, resumed, past the end.
  const url = new URL(`/ota/images/${sha256}/download`, server.base)
  const whole = await fetch(url, { headers: { 'x-api-key': API_KEY } })
  t.same([whole.status, whole.headers.get('accept-ranges'), whole.headers.get('x-content-sha256')], [200, 'bytes', sha256])
  t.ok(Buffer.from(await whole.arrayBuffer()).equals(image), 'the image whole')
  const part = await fetch(url, { headers: { 'x-api-key': API_KEY, range: 'bytes=10-19' } })
  t.same([part.status, part.headers.get('content-range')], [206, 'bytes 10-19/1000'])
  t.ok(Buffer.from(await part.arrayBuffer()).equals(image.subarray(10, 20)), 'ten bytes of it')
  const resumed = await fetch(url, { headers: { 'x-api-key': API_KEY, range: 'bytes=600-' } })
  t.ok(Buffer.from(await resumed.arrayBuffer()).equals(image.subarray(600)), 'a broken transfer resumed')
  const past = await fetch(url, { headers: { 'x-api-key': API_KEY, range: 'bytes=5000-' } })
  t.same([past.status, past.headers.get('content-range')], [416, 'bytes */1000'])
  t.equal((await fetch(url, { headers: { 'x-api-key': API_KEY, range: 'bytes=0-9', 'if-range': '"other"' } })).status, 200, 'If-Range of another image: the whole of this one')
  t.equal((await fetch(url)).status, 401)
  t.equal((await server.api('GET', `/ota/images/${sha256}/download`, 'viewer')).status, 200, 'a viewer may download')

  // The offer's URL names the device: its offers and downloads go into its timeline.
  const device = inStage[0]
  const { url: offerUrl } = await (await fetch(new URL(`/ota/update?device=${device}`, server.base), { headers: { 'x-api-key': API_KEY } })).json() as { url: string }
  t.equal(offerUrl, `/ota/images/${sha256}/download?device=${device}`)
  // Whole, but the device kept only its first 132 bytes (its flash write failed): it asks again from 132, then from 600.
  for (const range of ['bytes=0-', 'bytes=132-599', 'bytes=600-']) await (await fetch(new URL(offerUrl, server.base), { headers: { 'x-api-key': API_KEY, range } })).arrayBuffer()
  const { entries } = await (await server.api('GET', `/devices/${device}/timeline`, 'viewer')).json() as { entries: Array<{ kind: string, summary: string }> }
  t.same(entries.filter(e => e.kind === 'ota').map(e => e.summary), [
    `OTA: offered 1.1.0 (release ${release.id.slice(0, 8)})`,
    'OTA: download of 1.1.0 broke off: bytes 0–999 of 1000 sent, the device kept bytes 0–131 (it asked again from byte 132)',
    'OTA: download resumed 1.1.0, bytes 132–599 of 1000',
    'OTA: download resumed 1.1.0, bytes 600–999 of 1000'
  ], 'the device\'s timeline: offered once however often it checks, then each download with the bytes the device kept of it')
  t.equal((await fetch(new URL(`/ota/images/${sha256}/download?device=nope`, server.base), { headers: { 'x-api-key': API_KEY } })).status, 400, 'a malformed device id')

  // Actions.
  t.equal((await post(server, `/ota/releases/${release.id}/advance`, 'viewer')).status, 403, 'a viewer may not advance')
  t.equal((await (await post(server, `/ota/releases/${release.id}/advance`, 'provisioner')).json() as Release).stage, 1)
  t.same(await Promise.all(FLEET.map(async d => await offer(server, d))), FLEET.map(() => '1.1.0'), 'the last stage offers the whole cohort')
  t.equal((await (await post(server, `/ota/releases/${release.id}/pause`, 'provisioner')).json() as Release).state, 'paused')
  t.equal(await offer(server, FLEET[0]), null, 'paused: nothing offered')
  t.equal((await post(server, `/ota/releases/${release.id}/pause`, 'provisioner')).status, 409, 'a paused release is not paused again')
  t.equal((await (await post(server, `/ota/releases/${release.id}/resume`, 'provisioner')).json() as Release).state, 'active')
  await send(server, FLEET[0], [info('1.1.0')])
  t.equal(await offer(server, FLEET[0]), null, 'a device on the new version is offered nothing')
  t.equal(await offer(server, FLEET[1]), '1.1.0')
  t.equal((await server.api('DELETE', `/ota/images/${sha256}`, 'admin')).status, 409, 'an image a release offers is not deleted')
  t.equal((await (await post(server, `/ota/releases/${release.id}/abort`, 'provisioner')).json() as Release).state, 'aborted')
  t.equal(await offer(server, FLEET[1]), null, 'aborted: nothing offered')
  t.equal((await post(server, `/ota/releases/${release.id}/resume`, 'provisioner')).status, 409, 'an aborted release stays aborted')
  t.equal((await post(server, '/ota/releases/00000000-0000-4000-8000-000000000000/advance', 'provisioner')).status, 404)

  // On a schedule: a stage every minute.
  const scheduled = await (await post(server, '/ota/releases', 'provisioner', { image: sha256, stages: [10, 50, 100], advance_every_minutes: 1 })).json() as Release
  t.same((await checkReleases(server.service.telemetry, Date.now())).map(r => r.id), [], 'not due yet')
  const [stepped] = await checkReleases(server.service.telemetry, Date.now() + 61_000)
  t.same([stepped?.id, stepped?.stage], [scheduled.id, 1], 'advanced a minute later')
  await post(server, `/ota/releases/${scheduled.id}/abort`, 'provisioner')

  // A halt: the devices on the new version crash, the others hardly.
  const v2 = Buffer.from('version two image')
  const v2Image = await (await raw('2.0.0', v2, 'provisioner')).json() as { id: string }
  const risky = await (await post(server, '/ota/releases', 'provisioner', { image: v2Image.id, halt_factor: 2 })).json() as Release
  // The other versions' fault first: the release may halt at the first check after the new version's faults.
  await send(server, FLEET[10], [{ type: 'FaultRecord', record: FAULT }])
  for (const device of FLEET.slice(2, 6)) await send(server, device, [info('2.0.0'), { type: 'FaultRecord', record: FAULT }, { type: 'FaultRecord', record: FAULT }])
  const halted = await pollUntil(async () => {
    const { release: current } = await (await server.api('GET', `/ota/releases/${risky.id}`, 'viewer')).json() as { release: Release }
    return current.state === 'halted' ? current : undefined
  }, { timeout: 20_000, what: 'the release halted by its crash rate' })
  // The check may run before the last of the four devices is stored: each device brings two faults, and the other versions keep the rest of the fleet.
  const counts = /^halted: version 2\.0\.0 crashed 2\.00 faults a device \((\d+) on (\d+)\) since the release began, against 0\.03 faults a device \(1 on (\d+)\) on the other versions: more than 2× the old rate$/.exec(halted.reason ?? '')
  t.ok(counts !== null, `it says why (${halted.reason})`)
  const [faults, onNew, onOld] = (counts ?? []).slice(1).map(Number)
  t.ok(onNew >= 1 && onNew <= 4 && faults === 2 * onNew && onNew + onOld === FLEET.length, `with the counts of when it ran (${faults} on ${onNew}, 1 on ${onOld})`)
  t.equal(await offer(server, FLEET[20]), null, 'a halted release offers nothing')
  const { crash_rates: rates } = await (await server.api('GET', `/ota/releases/${risky.id}`, 'viewer')).json() as { crash_rates: { new: { faults: number } } }
  t.equal(rates.new.faults, 8)
})
