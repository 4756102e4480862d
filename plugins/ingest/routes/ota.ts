// OTA releases end to end: firmware images uploaded by provisioners (kept whole, named by their
// SHA-256; only images signed by the fleet's key when the server has it), releases of an image to a
// cohort in stages (ota-releases.ts) advanced, paused, resumed and aborted by provisioners, the
// device-facing "is there an update for me" (device key), and the image's download with HTTP range
// requests (range-parser), so a device resumes where a transfer broke off.
import { createHash, randomUUID, type KeyObject } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import parseRange from 'range-parser'
import { BadRequest, Conflict, NotFound, StartupError } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { DeviceId, GroupName } from '../keys.js'
import { fleetPublicKey, ImageError, verifyImage, type ImageHeader } from '../ota-image.js'
import { deviceSlots, recordOtaEvent } from '../ota-log.js'
import { advanced, crashRates, DEFAULT_HALT_REVERTS, due, haltReason, releaseFor, type OtaImage, type Release, type ReleaseState } from '../ota-releases.js'
import type { Telemetry } from '../telemetry.js'
import { binaryBody, Label } from './ingest.js'
import { otaStatusRoutes } from './ota-status.js'

const IMAGE_ID = '^[0-9a-f]{64}$'
const ImageParams = Type.Object({ id: Type.String({ pattern: IMAGE_ID }) })
const ImageQuery = Type.Object({ software_type: Label, version: Label }, { additionalProperties: false })
const ReleaseParams = Type.Object({ id: Type.String({ format: 'uuid' }) })
const ReleaseBody = Type.Object({
  image: Type.String({ pattern: IMAGE_ID }),
  group: Type.Optional(Type.Union([GroupName, Type.Null()])),
  percent: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'of the fleet (or the group): the cohort' })),
  stages: Type.Optional(Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 100 }), { minItems: 1, maxItems: 10, description: 'percent of the cohort at each stage, ascending, the last 100' })),
  advance_every_minutes: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10_080 }), Type.Null()])),
  halt_factor: Type.Optional(Type.Number({ minimum: 1, maximum: 100 })),
  halt_reverts: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'devices reverting the image that halt the release' }))
}, { additionalProperties: false })
const UpdateQuery = Type.Object({ device: DeviceId })
const DownloadQuery = Type.Object({ device: Type.Optional(DeviceId) })

/** What each action makes of a release, and the states it may start from. */
const ACTIONS: Record<string, { from: readonly ReleaseState[], to: (r: Release, now: number) => Release }> = {
  advance: { from: ['active', 'paused'], to: (r, now) => advanced(r, now) },
  pause: { from: ['active'], to: r => ({ ...r, state: 'paused' }) },
  resume: { from: ['paused', 'halted'], to: r => ({ ...r, state: 'active', reason: null }) },
  abort: { from: ['active', 'paused', 'halted'], to: r => ({ ...r, state: 'aborted' }) }
}

export function otaRoutes (app: FastifyInstance, t: Telemetry): void {
  const image = async (id: string): Promise<OtaImage> => {
    const found = await t.storage.document<OtaImage>('ota-image', id)
    if (found === undefined) throw new NotFound(`firmware image ${id} does not exist`)
    return found
  }
  const release = async (id: string): Promise<Release> => {
    const found = await t.storage.document<Release>('ota-release', id)
    if (found === undefined) throw new NotFound(`OTA release ${id} does not exist`)
    return found
  }

  const fleetKey = otaFleetKey(t.settings.ota_public_key)

  app.post<{ Querystring: Static<typeof ImageQuery> }>('/ota/images', {
    config: { telemetryAccess: 'provisioner' }, bodyLimit: t.settings.ota_image_max_bytes, schema: { querystring: ImageQuery }
  }, async (request, reply) => {
    const bytes = binaryBody(request, 'a firmware image')
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const { software_type: type, version } = request.query
    if (fleetKey !== undefined) checkSigned(bytes, fleetKey, type, version)
    const same = (await t.storage.documents<OtaImage>('ota-image')).find(i => i.software_type === type && i.version === version)
    if (same !== undefined && same.id !== sha256) throw new Conflict(`${type} ${version} is image ${same.id} already; a version is one image (delete it first, or give another version)`)
    if (same !== undefined) return same
    // The bytes first: a record names only an image that is there.
    await t.storage.putBlob(sha256, bytes)
    const record: OtaImage = { id: sha256, software_type: type, version, size: bytes.length, sha256, signed: fleetKey !== undefined, uploaded_at: Date.now(), uploaded_by: request.principal?.name ?? 'unknown' }
    await t.storage.changeDocument<OtaImage>('ota-image', sha256, () => record)
    return await reply.code(201).send(record)
  })

  app.get('/ota/images', { config: { telemetryAccess: 'viewer' } }, async () => ({ images: (await t.storage.documents<OtaImage>('ota-image')).sort((a, b) => b.uploaded_at - a.uploaded_at) }))

  app.delete<{ Params: Static<typeof ImageParams> }>('/ota/images/:id', { config: { telemetryAccess: 'admin' }, schema: { params: ImageParams } }, async (request, reply) => {
    const { id } = request.params
    await image(id)
    const using = (await t.storage.documents<Release>('ota-release')).filter(r => r.image === id && r.state !== 'aborted')
    if (using.length > 0) throw new Conflict(`image ${id} is offered by release ${using[0].id} (${using[0].state}); abort it first`)
    await t.storage.changeDocument<OtaImage>('ota-image', id, () => null)
    await t.storage.removeBlob(id)
    return await reply.code(204).send()
  })

  app.get<{ Params: Static<typeof ImageParams>, Querystring: Static<typeof DownloadQuery> }>('/ota/images/:id/download', {
    config: { telemetryAccess: 'device-or-viewer' }, schema: { params: ImageParams, querystring: DownloadQuery }
  }, async (request, reply) => {
    const record = await image(request.params.id)
    const bytes = await t.storage.blob(record.id)
    if (bytes === undefined) throw new NotFound(`the bytes of firmware image ${record.id} are gone`)
    const served = servedRange(request, record)
    // The offer's URL names the device: its download goes into its timeline.
    const { device } = request.query
    if (device !== undefined && served !== undefined && await t.storage.device(device) !== undefined) {
      await recordOtaEvent(t.storage, device, { event: 'download', at: Date.now(), version: record.version, image: record.id, from: served.start, to: served.end, size: record.size })
    }
    return await sendRange(reply, bytes, record, served)
  })

  app.post<{ Body: Static<typeof ReleaseBody> }>('/ota/releases', { config: { telemetryAccess: 'provisioner' }, schema: { body: ReleaseBody } }, async (request, reply) => {
    const { image: imageId, group = null, percent = 100, stages = [100], advance_every_minutes: every = null, halt_factor: haltFactor = 2, halt_reverts: haltReverts = DEFAULT_HALT_REVERTS } = request.body
    const offeredImage = await image(imageId)
    if (group !== null && await t.storage.group(group) === undefined) throw new BadRequest(`group "${group}" does not exist`)
    if (stages.some((s, i) => i > 0 && s <= stages[i - 1]) || stages[stages.length - 1] !== 100) throw new BadRequest(`stages must ascend and end at 100, got ${JSON.stringify(stages)}`)
    const now = Date.now()
    const created: Release = {
      id: randomUUID(), image: imageId, software_type: offeredImage.software_type, version: offeredImage.version, cohort: { group, percent }, stages, stage: 0,
      advance_every_minutes: every, halt_factor: haltFactor, halt_reverts: haltReverts, reverted: [], state: 'active', reason: null, created_at: now, created_by: request.principal?.name ?? 'unknown', stage_started_at: now, updated_at: now
    }
    await t.storage.changeDocument<Release>('ota-release', created.id, () => created)
    t.publish([{ kind: 'ota.release', release: created.id, state: created.state, stage: 0, percent: stages[0], reason: null, at: now }])
    return await reply.code(201).send(created)
  })

  app.get('/ota/releases', { config: { telemetryAccess: 'viewer' } }, async () => ({ releases: (await t.storage.documents<Release>('ota-release')).sort((a, b) => b.created_at - a.created_at) }))

  app.get<{ Params: Static<typeof ReleaseParams> }>('/ota/releases/:id', { config: { telemetryAccess: 'viewer' }, schema: { params: ReleaseParams } }, async request => {
    const found = await release(request.params.id)
    return { release: found, crash_rates: await releaseCrashRates(t, found) }
  })

  for (const [action, { from, to }] of Object.entries(ACTIONS)) {
    app.post<{ Params: Static<typeof ReleaseParams> }>(`/ota/releases/:id/${action}`, { config: { telemetryAccess: 'provisioner' }, schema: { params: ReleaseParams } }, async request => {
      const now = Date.now()
      let refused: string | undefined
      const changed = await t.storage.changeDocument<Release>('ota-release', request.params.id, current => {
        if (current === undefined) return undefined
        if (!from.includes(current.state)) {
          refused = `release ${current.id} is ${current.state}; ${action} applies to ${from.join(' or ')} releases`
          return undefined
        }
        return { ...to(current, now), updated_at: now, ...(action === 'pause' || action === 'abort' ? { reason: `${action === 'pause' ? 'paused' : 'aborted'} by ${request.principal?.name ?? 'unknown'}` } : {}) }
      })
      if (changed === undefined) throw new NotFound(`OTA release ${request.params.id} does not exist`)
      if (refused !== undefined) throw new Conflict(refused)
      t.publish([{ kind: 'ota.release', release: changed.id, state: changed.state, stage: changed.stage, percent: changed.stages[changed.stage], reason: changed.reason, at: now }])
      return changed
    })
  }

  app.get<{ Querystring: Static<typeof UpdateQuery> }>('/ota/update', { config: { telemetryAccess: 'device' }, schema: { querystring: UpdateQuery } }, async (request, reply) => {
    const device = await t.storage.device(request.query.device)
    if (device === undefined) throw new NotFound(`device ${request.query.device} does not exist`)
    const offer = releaseFor(await t.storage.documents<Release>('ota-release'), device)
    // A device with slots that holds the image already (to test, testing, confirmed) waits for its next boot.
    const held = (await deviceSlots(t.storage, device.id))?.slots.some(s => s.image === offer?.image && s.state !== 'empty' && s.state !== 'bad') === true
    if (offer === undefined || held) return await reply.code(204).send()
    const offeredImage = await image(offer.image)
    await recordOtaEvent(t.storage, device.id, { event: 'offered', at: Date.now(), release: offer.id, version: offer.version, image: offeredImage.id })
    return {
      release: offer.id, software_type: offer.software_type, version: offer.version, size: offeredImage.size, sha256: offeredImage.sha256,
      url: `/ota/images/${offeredImage.id}/download?device=${device.id}`
    }
  })

  otaStatusRoutes(app, t)
}

/** The fleet's public key of `[ingest].ota_public_key` (a path from the working directory), or undefined when it is empty. */
export function otaFleetKey (setting: string): KeyObject | undefined {
  try {
    return fleetPublicKey(setting, process.cwd())
  } catch (err) {
    if (err instanceof ImageError) throw new StartupError(`[ingest].ota_public_key: ${err.message}`)
    throw err
  }
}

/** Refuse an image the fleet's key did not sign, or whose header names another software type or version than the upload. */
function checkSigned (bytes: Buffer, key: KeyObject, type: string, version: string): void {
  let header: ImageHeader
  try {
    header = verifyImage(bytes, key)
  } catch (err) {
    if (err instanceof ImageError) throw new BadRequest(`not a firmware image signed by the fleet's key: ${err.message}`)
    throw err
  }
  if (header.softwareType !== type || header.version !== version) {
    throw new BadRequest(`the image's header says ${header.softwareType} ${header.version}, the upload ${type} ${version}`)
  }
}

/**
 * The scheduled look at the active releases: a release due for its next stage advances; one whose new
 * version crashes more than its halt factor allows halts, saying why. Returns what changed.
 */
export async function checkReleases (t: Telemetry, now = Date.now()): Promise<Release[]> {
  const changed: Release[] = []
  for (const candidate of await t.storage.documents<Release>('ota-release')) {
    if (candidate.state !== 'active') continue
    const reason = haltReason(candidate, await releaseCrashRates(t, candidate))
    const next = await t.storage.changeDocument<Release>('ota-release', candidate.id, current => {
      if (current === undefined || current.state !== 'active') return undefined
      if (reason !== undefined) return { ...current, state: 'halted', reason: `halted: ${reason}`, updated_at: now }
      return due(current, now) ? advanced(current, now) : undefined
    })
    if (next !== undefined && (next.state !== candidate.state || next.stage !== candidate.stage)) changed.push(next)
  }
  t.publish(changed.map(r => ({ kind: 'ota.release' as const, release: r.id, state: r.state, stage: r.stage, percent: r.stages[r.stage], reason: r.reason, at: now })))
  return changed
}

/** The crash rates a release is judged by, read from the fleet and the faults since it began. */
export async function releaseCrashRates (t: Telemetry, release: Release): Promise<ReturnType<typeof crashRates>> {
  const devices = []
  for await (const device of t.storage.devices()) if (device.software_type === release.software_type) devices.push(device)
  const faults = []
  for await (const fault of t.storage.faultsSince(release.created_at)) faults.push(fault)
  return crashRates(release, devices, faults)
}

/** The image whole, or the byte range the request asks for (206), or 416 when none can be served. */
/**
 * The bytes a download asks for, [start, end] inclusive: the whole image without a Range header (or
 * with one for another image, by If-Range, or one that is not a single byte range); undefined when
 * the range lies past the image's end.
 */
function servedRange (request: FastifyRequest, record: OtaImage): { start: number, end: number, partial: boolean } | undefined {
  const whole = { start: 0, end: record.size - 1, partial: false }
  const header = request.headers.range
  const ifRange = request.headers['if-range']
  if (header === undefined || (ifRange !== undefined && ifRange !== `"${record.sha256}"`)) return whole
  const ranges = parseRange(record.size, header, { combine: true })
  if (ranges === -1) return undefined
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return whole
  return { start: ranges[0].start, end: ranges[0].end, partial: true }
}

async function sendRange (reply: FastifyReply, bytes: Buffer, record: OtaImage, served: ReturnType<typeof servedRange>): Promise<FastifyReply> {
  reply.header('accept-ranges', 'bytes').header('etag', `"${record.sha256}"`).header('x-content-sha256', record.sha256).type('application/octet-stream')
  if (served === undefined) {
    return await reply.code(416).type('application/json; charset=utf-8').header('content-range', `bytes */${bytes.length}`)
      .send({ error: `the range ${String(reply.request.headers.range)} is past the image's ${bytes.length} bytes` })
  }
  if (!served.partial) return await reply.send(bytes)
  return await reply.code(206).header('content-range', `bytes ${served.start}-${served.end}/${bytes.length}`).send(bytes.subarray(served.start, served.end + 1))
}
