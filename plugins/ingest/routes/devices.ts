// Devices: list, register (with an AES-128-CCM key when asked), read, delete, and each device's
// faults, metrics, reboots and traces by time range, and its timeline of them.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { BadRequest, NotFound } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { newDevice, type TelemetryEvent } from '../apply.js'
import { keyPage, metricPoints, readSeries, type ListQuery, type RangeQuery } from '../series-query.js'
import { DEVICE_ID, DeviceId, GroupName } from '../keys.js'
import type { Device } from '../store.js'
import type { Telemetry } from '../telemetry.js'
import { timeline } from '../timeline.js'
import { sortedDevices } from '../fleet-views.js'
import { shownFault } from './issues.js'
import { removeOtaEvents } from '../ota-log.js'

const Registration = Type.Object({
  id: DeviceId,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  group: Type.Optional(Type.Union([GroupName, Type.Null()])),
  encrypted: Type.Optional(Type.Boolean({ description: 'true issues a new key (returned once); false removes the key.' }))
}, { additionalProperties: false })

const IdParams = Type.Object({ id: DeviceId })

export interface DeviceFilters {
  group?: string
  software_version?: string
  state?: string
  q?: string
}

const DEVICE_STATES = ['online', 'offline', 'never_seen']

/** As the fleet overview counts them: never seen (registered, no chunk yet), offline, or online. */
function stateOf (device: Device): string {
  return device.last_seen === null ? 'never_seen' : device.offline ? 'offline' : 'online'
}

/** The devices list's filters: group, firmware version, online/offline, and a search in id, name and serial. */
export function deviceFilter (query: DeviceFilters): (device: Device) => boolean {
  const { group, software_version: version, state, q } = query
  if (state !== undefined && !DEVICE_STATES.includes(state)) throw new BadRequest(`state must be online, offline or never_seen, got "${state}"`)
  if (q !== undefined && q.length > 128) throw new BadRequest('q must be at most 128 characters')
  const needle = q?.toLowerCase()
  return device => (group === undefined || device.group === group) &&
    (version === undefined || device.software_version === version) &&
    (state === undefined || stateOf(device) === state) &&
    (needle === undefined || device.id.includes(needle) || device.name.toLowerCase().includes(needle) || (device.serial?.toLowerCase().includes(needle) ?? false))
}

export function deviceRoutes (app: FastifyInstance, t: Telemetry): void {
  const device = async (id: string): Promise<Device> => {
    const found = await t.storage.device(id)
    if (found === undefined) throw new NotFound(`device ${id} does not exist`)
    return found
  }

  app.get<{ Querystring: DeviceFilters & ListQuery & { sort?: string, order?: string, metric?: string } }>('/devices', { config: { telemetryAccess: 'viewer' } }, async request => {
    if (request.query.sort !== undefined || request.query.metric !== undefined) return await sortedDevices(t.storage, request.query, deviceFilter(request.query))
    const { items, next_cursor: next } = await keyPage(after => t.storage.devices(after), d => d.id, request.query, { pattern: DEVICE_ID, name: 'a device id' }, deviceFilter(request.query))
    return { devices: items, next_cursor: next }
  })

  app.post<{ Body: Static<typeof Registration> }>('/devices/register', { config: { telemetryAccess: 'provisioner' }, schema: { body: Registration } }, async (request, reply) => {
    const { id, name, group, encrypted } = request.body
    if (group !== undefined && group !== null && await t.storage.group(group) === undefined) throw new BadRequest(`group "${group}" does not exist`)
    const now = Date.now()
    const key = encrypted === true ? randomBytes(16) : undefined
    const existing = await t.storage.device(id)
    const events: TelemetryEvent[] = []
    const saved = await t.storage.changeDevice(id, current => {
      const next: Device = {
        ...(current ?? newDevice(id, now)),
        registered: true,
        ...(name !== undefined ? { name } : {}),
        ...(group !== undefined ? { group } : {}),
        ...(encrypted !== undefined ? { encrypted } : {})
      }
      if (current === undefined) events.push({ kind: 'device.registered', device: id, at: now })
      return { device: next, key: key ?? (encrypted === false ? null : undefined) }
    })
    t.publish(events)
    return await reply.code(existing === undefined ? 201 : 200).send({ device: saved, ...(key !== undefined ? { key: key.toString('hex') } : {}) })
  })

  app.get<{ Params: Static<typeof IdParams> }>('/devices/:id', { config: { telemetryAccess: 'viewer' }, schema: { params: IdParams } }, async request => await device(request.params.id))

  app.delete<{ Params: Static<typeof IdParams> }>('/devices/:id', { config: { telemetryAccess: 'admin' }, schema: { params: IdParams } }, async (request, reply) => {
    const { id } = request.params
    if (!await t.storage.deleteDevice(id)) throw new NotFound(`device ${id} does not exist`)
    await removeOtaEvents(t.storage, id)
    return await reply.code(204).send()
  })

  const series = (path: string, read: (id: string, query: RangeQuery & Record<string, string | undefined>) => Promise<unknown>): void => {
    app.get<{ Params: Static<typeof IdParams>, Querystring: RangeQuery & Record<string, string | undefined> }>(`/devices/:id/${path}`, {
      config: { telemetryAccess: 'viewer' }, schema: { params: IdParams }
    }, async request => {
      await device(request.params.id)
      return await read(request.params.id, request.query)
    })
  }
  series('faults', async (id, q) => {
    const page = await readSeries(t.storage, 'faults', id, q)
    return { ...page, items: page.items.map(shownFault) }
  })
  series('timeline', async (id, q) => await timeline(t.storage, id, q))
  series('reboots', async (id, q) => await readSeries(t.storage, 'reboots', id, q))
  series('traces', async (id, q) => await readSeries(t.storage, 'traces', id, q))
  series('heartbeats', async (id, q) => await readSeries(t.storage, 'heartbeats', id, q))
  series('metrics/points', async (id, q) => await metricPoints(t.storage, id, q))
  series('metrics', async (id, q) => {
    if (q.kind !== undefined && !['gauge', 'increment', 'observe'].includes(q.kind)) throw new BadRequest(`kind must be gauge, increment or observe, got "${q.kind}"`)
    return await readSeries(t.storage, 'metrics', id, q, m => (q.kind === undefined || m.kind === q.kind) && (q.key === undefined || m.key === q.key))
  })
}
