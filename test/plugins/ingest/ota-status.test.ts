// What devices report of their slots (POST /ota/status, device key): slot states kept and shown to
// viewers (GET /devices/{id}/slots), reports on the device's timeline once however often repeated,
// bad bodies refused, roles both ways; and reverts counted against the release: a device that reverted
// is offered it no more, and the release halts itself at its halt_reverts, saying why.
import t from 'tap'
import type { Release } from '../../../plugins/ingest/ota-releases.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { API_KEY, basic, telemetryServer, type TelemetryServer } from './harness.js'

const DEVICES = ['0a00000000000001', '0a00000000000002', '0a00000000000003']
const OLD = 'c'.repeat(64)

async function status (server: TelemetryServer, body: unknown, auth: Record<string, string> = { 'x-api-key': API_KEY }): Promise<{ status: number, json: Record<string, unknown> }> {
  const response = await fetch(new URL('/ota/status', server.base), { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) })
  return { status: response.status, json: await response.json() as Record<string, unknown> }
}

/** A `state` report: slot 0 runs 1.0.0, slot 1 holds `image` in `state`. */
const state = (device: string, slot1: string, image: string | null, event?: { kind: string, slot: number, reason?: string }): Record<string, unknown> => ({
  device,
  running_slot: slot1 === 'testing' || slot1 === 'confirmed' ? 1 : 0,
  slots: [{ slot: 0, state: slot1 === 'confirmed' ? 'empty' : 'confirmed', version: slot1 === 'confirmed' ? null : '1.0.0', image: slot1 === 'confirmed' ? null : OLD }, { slot: 1, state: slot1, version: image === null ? null : '1.1.0', image }],
  download: null,
  ...(event !== undefined ? { event } : {})
})

t.test('slot states, reports on the timeline, and a release halted by reverts', async t => {
  const server = await telemetryServer(t)
  for (const device of DEVICES) {
    const info = encodeChunk({ device, sequence: 1, payload: { type: 'DeviceInfo', record: { serial: 'SN', hardware_version: 'evt', software_type: 'main', software_version: '1.0.0', build_id: 'b'.repeat(16) } } })
    t.equal((await server.ingest(info)).json.accepted, 1)
  }
  const image = await (await fetch(new URL('/ota/images?software_type=main&version=1.1.0', server.base), { method: 'POST', headers: { authorization: basic('provisioner'), 'content-type': 'application/octet-stream' }, body: Buffer.alloc(500, 1) })).json() as { id: string }
  const release = await (await server.api('POST', '/ota/releases', 'provisioner', { image: image.id, halt_reverts: 2 })).json() as Release
  t.equal(release.halt_reverts, 2)
  const offered = async (device: string): Promise<number> => (await fetch(new URL(`/ota/update?device=${device}`, server.base), { headers: { 'x-api-key': API_KEY } })).status
  t.same(await Promise.all(DEVICES.map(offered)), [200, 200, 200], 'each device is offered the release')

  // Roles: the device key reports; users may not. Viewers read slots; the device key may not.
  const [first, second, third] = DEVICES
  t.equal((await status(server, state(first, 'pending', image.id), { authorization: basic('admin') })).status, 401, 'a user may not report (the device key is needed)')
  t.equal((await status(server, state(first, 'pending', image.id), {})).status, 401)
  t.same(await status(server, state(first, 'pending', image.id)), { status: 200, json: { recorded: [], halted: [] } }, 'the device key reports')
  t.equal(await offered(first), 204, 'a device that holds the image, to be tested, is offered nothing')
  t.equal((await fetch(new URL(`/devices/${first}/slots`, server.base), { headers: { 'x-api-key': API_KEY } })).status, 401, 'the device key may not read slots')
  const slots = await (await server.api('GET', `/devices/${first}/slots`, 'viewer')).json() as Record<string, unknown>
  t.match(slots, { device: first, running_slot: 0, slots: [{ slot: 0, state: 'confirmed', version: '1.0.0', image: OLD }, { slot: 1, state: 'pending', version: '1.1.0', image: image.id }], download: null })
  t.match(await (await server.api('GET', `/devices/${second}/slots`, 'viewer')).json(), { running_slot: null, slots: [], reported_at: null }, 'a device that never reported')
  t.equal((await server.api('GET', '/devices/ffffffffffffffff/slots', 'viewer')).status, 404)

  const refused: Array<[unknown, string]> = [
    [{ device: first }, 'give the device\'s slots (with running_slot), or a download\'s result'],
    [{ ...state(first, 'pending', image.id), running_slot: undefined }, 'slots and running_slot come together'],
    [state(first, 'pending', image.id, { kind: 'revert', slot: 2 }), 'invalid body: event/slot must be <= 1'],
    [{ ...state(first, 'pending', image.id), slots: [{ slot: 1, state: 'pending', version: null, image: null }, { slot: 1, state: 'empty', version: null, image: null }] }, 'each slot once'],
    [state(first, 'sideways', image.id), 'invalid body: slots/1/state must be equal to one of the allowed values'],
    [{ device: first, result: { image: 'xyz', status: 'verified' } }, 'invalid body: result/image must match pattern']
  ]
  for (const [body, error] of refused) {
    const answer = await status(server, body)
    t.equal(answer.status, 400, error)
    t.match(answer.json.error, error)
  }
  t.equal((await status(server, state('ffffffffffffffff', 'pending', image.id))).status, 404, 'an unknown device')

  // The first device: verified, then reverted; said once however often its state repeats it.
  t.same((await status(server, { device: first, result: { image: image.id, status: 'verified' } })).json, { recorded: ['verified'], halted: [] })
  t.same((await status(server, state(first, 'bad', image.id, { kind: 'revert', slot: 1 }))).json, { recorded: ['revert'], halted: [] })
  t.same((await status(server, state(first, 'bad', image.id, { kind: 'revert', slot: 1 }))).json, { recorded: [], halted: [] }, 'the same report again')
  t.equal(await offered(first), 204, 'a device that reverted the image is offered it no more')
  t.equal(await offered(second), 200, 'one revert of two: the release goes on')
  // The third confirms; the second refuses, then reverts: the second revert halts the release.
  t.same((await status(server, state(third, 'confirmed', image.id, { kind: 'confirmed', slot: 1 }))).json, { recorded: ['confirmed'], halted: [] })
  t.same((await status(server, { device: second, result: { image: image.id, status: 'bad_signature' } })).json, { recorded: ['refused'], halted: [] })
  t.same((await status(server, state(second, 'empty', null, { kind: 'refused', slot: 1 }))).json, { recorded: [], halted: [] }, 'the state after it, its slot left empty, says the same')
  t.same((await status(server, state(second, 'bad', image.id, { kind: 'revert', slot: 1, reason: 'watchdog' }))).json, { recorded: ['revert'], halted: [release.id] })
  const { release: halted } = await (await server.api('GET', `/ota/releases/${release.id}`, 'viewer')).json() as { release: Release }
  t.same([halted.state, halted.reason, halted.reverted], ['halted', 'halted: 2 reverts of 3 devices offered version 1.1.0 (it halts at 2)', [first, second]])

  const summaries = async (device: string): Promise<string[]> => ((await (await server.api('GET', `/devices/${device}/timeline`, 'viewer')).json()) as { entries: Array<{ kind: string, summary: string }> }).entries.filter(e => e.kind === 'ota').map(e => e.summary)
  t.same(await summaries(first), [
    `OTA: offered 1.1.0 (release ${release.id.slice(0, 8)})`,
    'OTA: 1.1.0 downloaded and verified, to be tested at the next boot',
    'OTA: 1.1.0 reverted in slot 1: it did not confirm itself before a reset; the other slot boots'
  ])
  t.same((await summaries(second)).slice(1), ['OTA: 1.1.0 refused: bad signature', 'OTA: 1.1.0 reverted in slot 1: watchdog; the other slot boots'])
  t.same((await summaries(third)).slice(1), ['OTA: 1.1.0 confirmed in slot 1'])
  const { problems } = await (await server.api('GET', `/devices/${second}/slots`, 'viewer')).json() as { problems: Array<{ event: string, reason?: string }> }
  t.match(problems, [{ event: 'revert', slot: 1, reason: 'watchdog' }, { event: 'refused', slot: null, reason: 'bad signature' }], 'its slots come with its latest reverts and refusals, newest first')
  t.equal(problems.length, 2)
})
