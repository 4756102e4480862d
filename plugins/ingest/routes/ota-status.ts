// What devices report of their firmware slots (docs/firmware-updates.md), through a gateway or on their
// own, with the device key: POST /ota/status keeps a device's latest slot states (GET
// /devices/{id}/slots shows them, with its latest reverts and refusals) and puts its reports in its
// OTA log, so they reach its timeline: a download verified or refused, a version confirmed, a revert.
// A revert counts against the newest release of its image: that device is offered it no more, and
// the release halts itself once its `halt_reverts` devices reverted it.
import type { FastifyInstance } from 'fastify'
import { BadRequest, NotFound } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { DeviceId } from '../keys.js'
import { deviceSlots, otaEvents, recordOtaEvent, recordSlots, SLOT_STATES, type DeviceSlots, type ReportedEvent } from '../ota-log.js'
import { revertHaltReason, type OtaImage, type Release } from '../ota-releases.js'
import type { Telemetry } from '../telemetry.js'
import { Label } from './ingest.js'

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' })
const SlotNumber = Type.Integer({ minimum: 0, maximum: 1 })
/** A download's result as the device's `result` frame gives it (status 1 to 5). */
export const RESULT_STATUSES = ['verified', 'bad_signature', 'bad_header', 'digest_mismatch', 'no_room'] as const
const RESULT_REASONS: Record<typeof RESULT_STATUSES[number], string | undefined> = {
  verified: undefined, bad_signature: 'bad signature', bad_header: 'truncated, or a bad header', digest_mismatch: 'its SHA-256 is not the one offered', no_room: 'no room for it'
}
/** One of `values`, refused in one line ("must be equal to one of the allowed values") rather than a line per value. */
const oneOf = <T extends string>(values: readonly T[]): ReturnType<typeof Type.Unsafe<T>> => Type.Unsafe<T>({ type: 'string', enum: [...values] })
/** The events a `state` report names with a slot. */
const SLOT_EVENTS = ['revert', 'refused', 'confirmed'] as const

const StatusBody = Type.Object({
  device: DeviceId,
  running_slot: Type.Optional(SlotNumber),
  slots: Type.Optional(Type.Array(Type.Object({
    slot: SlotNumber, state: oneOf(SLOT_STATES), version: Type.Union([Label, Type.Null()]), image: Type.Union([Sha256, Type.Null()])
  }, { additionalProperties: false }), { minItems: 1, maxItems: 2 })),
  download: Type.Optional(Type.Union([Type.Object({ image: Sha256, received: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }), Type.Null()])),
  event: Type.Optional(Type.Union([Type.Object({
    kind: oneOf(SLOT_EVENTS), slot: SlotNumber, reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))
  }, { additionalProperties: false }), Type.Null()])),
  result: Type.Optional(Type.Object({ image: Sha256, status: oneOf(RESULT_STATUSES) }, { additionalProperties: false }))
}, { additionalProperties: false })
type StatusBody = Static<typeof StatusBody>
const SlotsParams = Type.Object({ id: DeviceId })
/** The latest reverts and refusals GET /devices/{id}/slots gives beside the slots. */
const PROBLEMS_SHOWN = 10

export function otaStatusRoutes (app: FastifyInstance, t: Telemetry): void {
  app.post<{ Body: StatusBody }>('/ota/status', { config: { telemetryAccess: 'device' }, schema: { body: StatusBody } }, async request => {
    const body = request.body
    if ((body.slots === undefined) !== (body.running_slot === undefined)) throw new BadRequest('slots and running_slot come together')
    if (body.slots === undefined && body.result === undefined) throw new BadRequest('give the device\'s slots (with running_slot), or a download\'s result')
    if (body.slots !== undefined && new Set(body.slots.map(s => s.slot)).size !== body.slots.length) throw new BadRequest('each slot once')
    if (body.event !== undefined && body.event !== null && body.slots?.find(s => s.slot === body.event?.slot) === undefined) throw new BadRequest(`the event names slot ${body.event.slot}, which the report does not list`)
    if (await t.storage.device(body.device) === undefined) throw new NotFound(`device ${body.device} does not exist`)
    const now = Date.now()
    if (body.slots !== undefined && body.running_slot !== undefined) {
      const slots: DeviceSlots = { running_slot: body.running_slot, slots: [...body.slots].sort((a, b) => a.slot - b.slot), download: body.download ?? null, reported_at: now }
      await recordSlots(t.storage, body.device, slots)
    }
    const reported = await reportedEvents(t, body, now)
    const recorded: ReportedEvent[] = []
    for (const event of reported) if (await recordOtaEvent(t.storage, body.device, event)) recorded.push(event)
    const halted: Release[] = []
    for (const event of recorded) {
      if (event.event !== 'revert' || event.image === null) continue
      const release = await countRevert(t, body.device, event.image, now)
      if (release?.state === 'halted' && release.updated_at === now) halted.push(release)
    }
    t.publish(halted.map(r => ({ kind: 'ota.release' as const, release: r.id, state: r.state, stage: r.stage, percent: r.stages[r.stage], reason: r.reason, at: now })))
    return { recorded: recorded.map(e => e.event), halted: halted.map(r => r.id) }
  })

  app.get<{ Params: Static<typeof SlotsParams> }>('/devices/:id/slots', { config: { telemetryAccess: 'viewer' }, schema: { params: SlotsParams } }, async request => {
    const { id } = request.params
    if (await t.storage.device(id) === undefined) throw new NotFound(`device ${id} does not exist`)
    const slots = await deviceSlots(t.storage, id)
    const problems = (await otaEvents(t.storage, id)).filter(e => e.event === 'revert' || e.event === 'refused').slice(-PROBLEMS_SHOWN).reverse()
    return { device: id, running_slot: slots?.running_slot ?? null, slots: slots?.slots ?? [], download: slots?.download ?? null, reported_at: slots?.reported_at ?? null, problems }
  })
}

/** The events a report carries: its slot event (the slot's image and version), and a download's result. */
async function reportedEvents (t: Telemetry, body: StatusBody, at: number): Promise<ReportedEvent[]> {
  const events: ReportedEvent[] = []
  if (body.event !== undefined && body.event !== null) {
    const { kind, slot, reason } = body.event
    const inSlot = body.slots?.find(s => s.slot === slot)
    const image = inSlot?.image ?? null
    events.push({ event: kind, at, slot, version: inSlot?.version ?? await versionOf(t, image), image, ...(reason !== undefined ? { reason } : {}) })
  }
  if (body.result !== undefined) {
    const { image, status } = body.result
    const reason = RESULT_REASONS[status]
    events.push({ event: status === 'verified' ? 'verified' : 'refused', at, slot: null, version: await versionOf(t, image), image, ...(reason !== undefined ? { reason } : {}) })
  }
  return events
}

async function versionOf (t: Telemetry, image: string | null): Promise<string | null> {
  return image === null ? null : (await t.storage.document<OtaImage>('ota-image', image))?.version ?? null
}

/**
 * Count a device's revert of `image` against the newest release (not aborted) of that image, and halt
 * it when its reverts reach its `halt_reverts`. Returns the release as stored after, or undefined when
 * no release offers the image.
 */
async function countRevert (t: Telemetry, device: string, image: string, now: number): Promise<Release | undefined> {
  const release = (await t.storage.documents<Release>('ota-release')).filter(r => r.image === image && r.state !== 'aborted').sort((a, b) => b.created_at - a.created_at)[0]
  if (release === undefined) return undefined
  const offered = await devicesOffered(t, release.id)
  offered.add(device)
  return await t.storage.changeDocument<Release>('ota-release', release.id, current => {
    if (current === undefined || current.reverted?.includes(device) === true) return undefined
    const counted = { ...current, reverted: [...current.reverted ?? [], device] }
    const reason = revertHaltReason(counted, Math.max(offered.size, counted.reverted.length))
    return reason === undefined ? counted : { ...counted, state: 'halted', reason: `halted: ${reason}`, updated_at: now }
  })
}

/** The devices whose OTA log holds an offer of the release (each log keeps its newest 100 events). */
async function devicesOffered (t: Telemetry, release: string): Promise<Set<string>> {
  const offered = new Set<string>()
  for await (const device of t.storage.devices()) {
    if ((await otaEvents(t.storage, device.id)).some(e => e.event === 'offered' && e.release === release)) offered.add(device.id)
  }
  return offered
}
