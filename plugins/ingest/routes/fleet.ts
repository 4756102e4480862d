// The fleet overview, device groups and OTA firmware targets: read by every user, written by
// provisioners, deleted by admins.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { BadRequest, Conflict, NotFound } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { GROUP_NAME, GroupName, OTA_TARGET_ID, OtaTargetId } from '../keys.js'
import { fleetBands } from '../fleet-views.js'
import { cachedOverview } from '../overview.js'
import { keyPage, type ListQuery } from '../series-query.js'
import type { Group, OtaTarget } from '../store.js'
import type { Telemetry } from '../telemetry.js'

const GroupBody = Type.Object({ name: GroupName, description: Type.Optional(Type.String({ maxLength: 1024 })) }, { additionalProperties: false })
const GroupUpdate = Type.Object({ description: Type.String({ maxLength: 1024 }) }, { additionalProperties: false })
const NameParams = Type.Object({ name: GroupName })
const OtaBody = Type.Object({
  software_type: Type.String({ minLength: 1, maxLength: 64 }),
  version: Type.String({ minLength: 1, maxLength: 64 }),
  group: Type.Optional(Type.Union([GroupName, Type.Null()])),
  build_id: Type.Optional(Type.Union([Type.String({ pattern: '^[0-9a-f]{8,128}$' }), Type.Null()])),
  url: Type.Optional(Type.Union([Type.String({ format: 'uri' }), Type.Null()]))
}, { additionalProperties: false })
const IdParams = Type.Object({ id: OtaTargetId })

export function fleetRoutes (app: FastifyInstance, t: Telemetry): void {
  /** An OTA body with its absent fields as null; its group must exist. */
  const otaFields = async ({ group = null, build_id: buildId = null, url = null, ...rest }: Static<typeof OtaBody>): Promise<Omit<OtaTarget, 'id' | 'created_at'>> => {
    if (group !== null && await t.storage.group(group) === undefined) throw new BadRequest(`group "${group}" does not exist`)
    return { group, build_id: buildId, url, ...rest }
  }
  const overview = cachedOverview(t.storage)
  app.get('/fleet/overview', { config: { telemetryAccess: 'viewer' } }, async () => await overview())
  app.get<{ Querystring: { key?: string, group?: string, from?: string, to?: string, points?: string } }>('/fleet/metrics/bands', { config: { telemetryAccess: 'viewer' } }, async request => await fleetBands(t.storage, request.query))

  app.get<{ Querystring: ListQuery }>('/groups', { config: { telemetryAccess: 'viewer' } }, async request => {
    const { items, next_cursor: next } = await keyPage(after => t.storage.groups(after), g => g.name, request.query, { pattern: GROUP_NAME, name: 'a group name' })
    return { groups: items, next_cursor: next }
  })

  app.post<{ Body: Static<typeof GroupBody> }>('/groups', { config: { telemetryAccess: 'provisioner' }, schema: { body: GroupBody } }, async (request, reply) => {
    const { name, description = '' } = request.body
    const now = Date.now()
    const group: Group = { name, description, created_at: now, updated_at: now }
    const created = await t.storage.createGroup(group)
    if (!created) throw new Conflict(`group "${name}" already exists`)
    return await reply.code(201).send(group)
  })

  app.put<{ Params: Static<typeof NameParams>, Body: Static<typeof GroupUpdate> }>('/groups/:name', {
    config: { telemetryAccess: 'provisioner' }, schema: { params: NameParams, body: GroupUpdate }
  }, async request => {
    const current = await t.storage.group(request.params.name)
    if (current === undefined) throw new NotFound(`group "${request.params.name}" does not exist`)
    const group = { ...current, description: request.body.description, updated_at: Date.now() }
    await t.storage.putGroup(group)
    return group
  })

  app.delete<{ Params: Static<typeof NameParams> }>('/groups/:name', { config: { telemetryAccess: 'admin' }, schema: { params: NameParams } }, async (request, reply) => {
    const { name } = request.params
    if (await t.storage.group(name) === undefined) throw new NotFound(`group "${name}" does not exist`)
    const members = await t.storage.groupMembers(name)
    if (members > 0) throw new Conflict(`group "${name}" still has ${members} device(s)`)
    await t.storage.removeGroup(name)
    return await reply.code(204).send()
  })

  app.get<{ Querystring: ListQuery }>('/ota/targets', { config: { telemetryAccess: 'viewer' } }, async request => {
    const { items, next_cursor: next } = await keyPage(after => t.storage.otaTargets(after), o => o.id, request.query, { pattern: OTA_TARGET_ID, name: 'an OTA target id' })
    return { targets: items, next_cursor: next }
  })

  app.post<{ Body: Static<typeof OtaBody> }>('/ota/targets', { config: { telemetryAccess: 'provisioner' }, schema: { body: OtaBody } }, async (request, reply) => {
    const target = { id: randomUUID(), ...await otaFields(request.body), created_at: Date.now() }
    await t.storage.putOtaTarget(target)
    return await reply.code(201).send(target)
  })

  app.put<{ Params: Static<typeof IdParams>, Body: Static<typeof OtaBody> }>('/ota/targets/:id', {
    config: { telemetryAccess: 'provisioner' }, schema: { params: IdParams, body: OtaBody }
  }, async request => {
    const current = await t.storage.otaTarget(request.params.id)
    if (current === undefined) throw new NotFound(`OTA target ${request.params.id} does not exist`)
    const target = { ...current, ...await otaFields(request.body) }
    await t.storage.putOtaTarget(target)
    return target
  })

  app.delete<{ Params: Static<typeof IdParams> }>('/ota/targets/:id', { config: { telemetryAccess: 'admin' }, schema: { params: IdParams } }, async (request, reply) => {
    if (await t.storage.otaTarget(request.params.id) === undefined) throw new NotFound(`OTA target ${request.params.id} does not exist`)
    await t.storage.removeOtaTarget(request.params.id)
    return await reply.code(204).send()
  })
}
