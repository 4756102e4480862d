// Alert rules and their history: rules listed to viewers (destinations' secrets never shown), made and
// changed by provisioners (each destination checked by the outbound client: never a loopback, private
// or link-local address unless [server].outbound_allow says so), deleted by admins; the history of
// firings, resolutions and connectivity changes, newest first.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { BadRequest, NotFound } from '../../../kernel/index.js'
import { type OutboundClient } from '../../../kernel/runtime-api.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { COMPARISONS, listedRule, type AlertRecord, type AlertRule, type Comparison, type RuleCondition } from '../alert-rules.js'
import { GroupName } from '../keys.js'
import { parseLimit } from '../series-query.js'
import type { Telemetry } from '../telemetry.js'

// One object for every kind (a union with additionalProperties would have fastify strip fields across its branches); checked per kind below.
const Condition = Type.Object({
  kind: Type.Union([Type.Literal('metric'), Type.Literal('crash_rate'), Type.Literal('connectivity')]),
  key: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  op: Type.Optional(Type.Union(COMPARISONS.map(op => Type.Literal(op)))),
  value: Type.Optional(Type.Number()),
  group: Type.Optional(Type.Union([GroupName, Type.Null()])),
  min_percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  for_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 1440 })),
  issue: Type.Optional(Type.Union([Type.String({ pattern: '^[0-9a-f]{16}$' }), Type.Null()])),
  per_hour: Type.Optional(Type.Integer({ minimum: 1 }))
})
const Destination = Type.Object({
  url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('slack')])),
  secret: Type.Optional(Type.Union([Type.String({ minLength: 16, maxLength: 256 }), Type.Null()]))
})
const RuleBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  condition: Condition,
  cooldown_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_080 })),
  enabled: Type.Optional(Type.Boolean()),
  destinations: Type.Optional(Type.Array(Destination, { maxItems: 10 }))
})
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) })

/** The condition a body names, complete for its kind, or 400 naming what is missing. */
function conditionOf (body: Static<typeof Condition>): RuleCondition {
  const need = (fields: Array<keyof typeof body>): void => {
    const missing = fields.filter(f => body[f] === undefined)
    if (missing.length > 0) throw new BadRequest(`invalid body: a ${body.kind} rule needs condition.${missing.join(', condition.')}`)
  }
  if (body.kind === 'metric') {
    need(['key', 'op', 'value'])
    return { kind: 'metric', key: body.key as string, op: body.op as Comparison, value: body.value as number, group: body.group ?? null, min_percent: body.min_percent ?? 0, for_minutes: body.for_minutes ?? 0 }
  }
  if (body.kind === 'crash_rate') {
    need(['per_hour'])
    return { kind: 'crash_rate', issue: body.issue ?? null, per_hour: body.per_hour as number }
  }
  return { kind: 'connectivity', group: body.group ?? null }
}

export function alertRuleRoutes (app: FastifyInstance, t: Telemetry, outbound: OutboundClient): void {
  const ruleOf = async (body: Static<typeof RuleBody>, base: Pick<AlertRule, 'id' | 'created_at' | 'created_by'>): Promise<AlertRule> => {
    const condition = conditionOf(body.condition)
    for (const [i, { url }] of (body.destinations ?? []).entries()) {
      const problem = await outbound.check(url)
      if (problem !== undefined) throw new BadRequest(`destinations[${i}].url ${problem}`)
    }
    if ('group' in condition && condition.group !== null && await t.storage.group(condition.group) === undefined) throw new BadRequest(`group "${condition.group}" does not exist`)
    return {
      ...base, name: body.name, condition, cooldown_minutes: body.cooldown_minutes ?? 60, enabled: body.enabled ?? true,
      destinations: (body.destinations ?? []).map(d => ({ url: d.url, format: d.format ?? 'json', secret: d.secret ?? null })), updated_at: Date.now()
    }
  }

  app.get('/alerts/rules', { config: { telemetryAccess: 'viewer' } }, async () => ({ rules: (await t.storage.documents<AlertRule>('alert-rule')).sort((a, b) => a.created_at - b.created_at).map(listedRule) }))

  app.post<{ Body: Static<typeof RuleBody> }>('/alerts/rules', { config: { telemetryAccess: 'provisioner' }, schema: { body: RuleBody } }, async (request, reply) => {
    const rule = await ruleOf(request.body, { id: randomUUID(), created_at: Date.now(), created_by: request.principal?.name ?? 'unknown' })
    await t.storage.changeDocument<AlertRule>('alert-rule', rule.id, () => rule)
    return await reply.code(201).send(listedRule(rule))
  })

  app.put<{ Params: Static<typeof IdParams>, Body: Static<typeof RuleBody> }>('/alerts/rules/:id', { config: { telemetryAccess: 'provisioner' }, schema: { params: IdParams, body: RuleBody } }, async request => {
    const current = await t.storage.document<AlertRule>('alert-rule', request.params.id)
    if (current === undefined) throw new NotFound(`alert rule ${request.params.id} does not exist`)
    const rule = await ruleOf(request.body, current)
    await t.storage.changeDocument<AlertRule>('alert-rule', rule.id, () => rule)
    return listedRule(rule)
  })

  app.delete<{ Params: Static<typeof IdParams> }>('/alerts/rules/:id', { config: { telemetryAccess: 'admin' }, schema: { params: IdParams } }, async (request, reply) => {
    if (await t.storage.document<AlertRule>('alert-rule', request.params.id) === undefined) throw new NotFound(`alert rule ${request.params.id} does not exist`)
    await t.storage.changeDocument<AlertRule>('alert-rule', request.params.id, () => null)
    await t.storage.changeDocument('alert-state', request.params.id, () => null)
    return await reply.code(204).send()
  })

  app.get<{ Querystring: { rule?: string, limit?: string, cursor?: string } }>('/alerts/history', { config: { telemetryAccess: 'viewer' } }, async request => {
    const { rule, cursor } = request.query
    const limit = parseLimit(request.query.limit)
    const records = (await t.storage.documents<AlertRecord>('alert')).reverse()
      .filter(r => (rule === undefined || r.rule === rule) && (cursor === undefined || cursor === '' || r.id < cursor))
    const page = records.slice(0, limit)
    return { alerts: page, next_cursor: records.length > limit ? page[page.length - 1].id : null }
  })
}
