// Crash issues: the fleet's faults grouped by signature (crash-issues.ts). A filtered, sorted list with
// cursors; an issue's page (its versions, the devices it hit most, its occurrences by hour, its latest
// faults with their status registers in words); its faults and devices page by page; and its status,
// set by provisioners and admins.
import type { FastifyInstance } from 'fastify'
import { BadRequest, NotFound } from '../../../kernel/index.js'
import { Type, type Static } from '../../../kernel/schema.js'
import { ISSUE_STATUSES, withStatus, type CrashIssue, type IssueMember, type IssueStatus } from '../crash-issues.js'
import { withCoredumpSummary, type CoredumpSummary } from '../coredump.js'
import { decodeFault } from '../fault-status.js'
import { decodeKeyCursor, encodeCursor, parseLimit, parseTime, type ListQuery } from '../series-query.js'
import { DEVICE_ID } from '../keys.js'
import type { IssueFaultKey, TelemetryStorage } from '../storage/contract.js'
import type { StoredFault } from '../store.js'
import type { Telemetry } from '../telemetry.js'

const ISSUE_ID = /^[0-9a-f]{16}$/
const IdParams = Type.Object({ id: Type.String({ pattern: ISSUE_ID.source }) })
const StatusBody = Type.Object({ status: Type.Union(ISSUE_STATUSES.map(s => Type.Literal(s))) }, { additionalProperties: false })

const SORTS = ['last_seen', 'first_seen', 'count', 'device_count'] as const
type Sort = typeof SORTS[number]

export interface IssueListQuery extends ListQuery {
  status?: string
  software_version?: string
  device?: string
  q?: string
  sort?: string
}

const HOUR_MS = 3_600_000
/** Devices and faults shown on an issue's page; the rest page through their own routes. */
const PAGE_PREVIEW = 20
/** Most hours an issue's chart covers. */
const MAX_CHART_HOURS = 24 * 90

/**
 * A fault as the API shows it: its status registers in words beside the numbers; no stack or backtrace
 * shown as empty ones; its coredump, when it has one, summed up (its route gives the regions).
 */
export const shownFault = (fault: StoredFault): Omit<StoredFault, 'coredump'> & { decoded: ReturnType<typeof decodeFault>, coredump?: CoredumpSummary } => ({
  ...withCoredumpSummary(fault), stack: fault.stack ?? '', backtrace: fault.backtrace ?? [], decoded: decodeFault(fault)
})

/** A list's cursor: the last issue's sort value and id. */
const listCursor = (key: unknown[]): boolean => key.length === 2 && Number.isSafeInteger(key[0]) && typeof key[1] === 'string' && ISSUE_ID.test(key[1])
/** An issue's faults' cursor: [received_at, device, sequence]. */
const faultCursor = (key: unknown[]): boolean => key.length === 3 && Number.isSafeInteger(key[0]) && typeof key[1] === 'string' && DEVICE_ID.test(key[1]) && Number.isSafeInteger(key[2])

/** Issues by `sort`, highest first, ties by id. */
const bySort = (sort: Sort) => (a: CrashIssue, b: CrashIssue): number => b[sort] - a[sort] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** After the cursor's position in that order. */
const afterCursor = (sort: Sort, [value, id]: [number, string]) => (issue: CrashIssue): boolean => issue[sort] < value || (issue[sort] === value && issue.id > id)

/** The issues the list's filters keep, in its sort's order; 400 for a bad filter or sort. */
export async function findIssues (storage: TelemetryStorage, query: Omit<IssueListQuery, 'limit' | 'cursor'>): Promise<{ sort: Sort, issues: CrashIssue[] }> {
  const { status, software_version: version, device, q } = query
  const sort = (query.sort ?? 'last_seen') as Sort
  if (!SORTS.includes(sort)) throw new BadRequest(`sort must be one of ${SORTS.join(', ')}, got "${sort}"`)
  if (status !== undefined && !(ISSUE_STATUSES as readonly string[]).includes(status)) throw new BadRequest(`status must be one of ${ISSUE_STATUSES.join(', ')}, got "${status}"`)
  if (q !== undefined && q.length > 128) throw new BadRequest('q must be at most 128 characters')
  const within = async (kind: 'version' | 'device', member: string | undefined): Promise<Set<string> | undefined> =>
    member === undefined ? undefined : new Set(await storage.issuesWith(kind, member))
  const [inVersion, onDevice] = [await within('version', version), await within('device', device)]
  const needle = q?.toLowerCase()
  const issues = (await storage.issues()).filter(i =>
    (status === undefined || i.status === status) &&
    (inVersion === undefined || inVersion.has(i.id)) &&
    (onDevice === undefined || onDevice.has(i.id)) &&
    (needle === undefined || i.title.toLowerCase().includes(needle) || i.signature.toLowerCase().includes(needle))
  )
  return { sort, issues: issues.sort(bySort(sort)) }
}

export function issueRoutes (app: FastifyInstance, t: Telemetry): void {
  const issue = async (id: string): Promise<CrashIssue> => {
    const found = await t.storage.issue(id)
    if (found === undefined) throw new NotFound(`crash issue ${id} does not exist`)
    return found
  }

  app.get<{ Querystring: IssueListQuery }>('/issues', { config: { telemetryAccess: 'viewer' } }, async request => {
    const { sort, issues } = await findIssues(t.storage, request.query)
    const limit = parseLimit(request.query.limit)
    const { cursor } = request.query
    const after = cursor !== undefined && cursor !== '' ? afterCursor(sort, decodeKeyCursor(cursor, listCursor, 'the same list')) : () => true
    const matching = issues.filter(after)
    const page = matching.slice(0, limit)
    const last = page[page.length - 1]
    return { issues: page, next_cursor: matching.length > limit ? encodeCursor([last[sort], last.id]) : null }
  })

  app.get<{ Params: Static<typeof IdParams>, Querystring: { from?: string, to?: string } }>('/issues/:id', {
    config: { telemetryAccess: 'viewer' }, schema: { params: IdParams }
  }, async request => {
    const found = await issue(request.params.id)
    const to = parseTime('to', request.query.to, Date.now())
    const from = parseTime('from', request.query.from, to - 7 * 24 * HOUR_MS)
    if (from >= to) throw new BadRequest('from must be before to')
    if (to - from > MAX_CHART_HOURS * HOUR_MS) throw new BadRequest(`from and to may be at most ${MAX_CHART_HOURS / 24} days apart`)
    const [versions, devices, hours, faults] = await Promise.all([
      t.storage.issueMembers(found.id, 'version'),
      t.storage.issueMembers(found.id, 'device'),
      t.storage.issueMembers(found.id, 'hour'),
      t.storage.issueFaults(found.id, undefined, PAGE_PREVIEW)
    ])
    const counted = (m: IssueMember): { count: number, last_seen: number } => ({ count: m.count, last_seen: m.last_seen })
    return {
      issue: found,
      versions: versions.map(m => ({ version: m.member, ...counted(m) })).sort((a, b) => b.count - a.count),
      devices: devices.map(m => ({ device: m.member, ...counted(m) })).sort((a, b) => b.count - a.count || b.last_seen - a.last_seen).slice(0, PAGE_PREVIEW),
      occurrences: hourly(hours, from, to),
      faults: faults.map(shownFault)
    }
  })

  app.get<{ Params: Static<typeof IdParams>, Querystring: ListQuery }>('/issues/:id/faults', {
    config: { telemetryAccess: 'viewer' }, schema: { params: IdParams }
  }, async request => {
    await issue(request.params.id)
    const limit = parseLimit(request.query.limit)
    const { cursor } = request.query
    const before = cursor !== undefined && cursor !== '' ? decodeKeyCursor<IssueFaultKey>(cursor, faultCursor, "this issue's faults") : undefined
    const faults = await t.storage.issueFaults(request.params.id, before, limit + 1)
    const page = faults.slice(0, limit)
    const last = page[page.length - 1]
    return { faults: page.map(shownFault), next_cursor: faults.length > limit ? encodeCursor([last.received_at, last.device, last.sequence]) : null }
  })

  app.get<{ Params: Static<typeof IdParams>, Querystring: ListQuery }>('/issues/:id/devices', {
    config: { telemetryAccess: 'viewer' }, schema: { params: IdParams }
  }, async request => {
    await issue(request.params.id)
    const limit = parseLimit(request.query.limit)
    const { cursor } = request.query
    const members = (await t.storage.issueMembers(request.params.id, 'device')).filter(m => cursor === undefined || cursor === '' || m.member > cursor)
    const page = members.slice(0, limit)
    return { devices: page.map(m => ({ device: m.member, count: m.count, last_seen: m.last_seen })), next_cursor: members.length > limit ? page[page.length - 1].member : null }
  })

  app.patch<{ Params: Static<typeof IdParams>, Body: Static<typeof StatusBody> }>('/issues/:id', {
    config: { telemetryAccess: 'provisioner' }, schema: { params: IdParams, body: StatusBody }
  }, async request => {
    const by = request.principal?.name ?? 'unknown'
    const changed = await t.storage.changeIssue(request.params.id, current => withStatus(current, request.body.status as IssueStatus, by, Date.now()))
    if (changed === undefined) throw new NotFound(`crash issue ${request.params.id} does not exist`)
    request.log.info({ issue: changed.id, status: changed.status, by }, 'crash issue status changed')
    return changed
  })
}

/** An issue's occurrences in each hour from `from` to `to` (hours without one counted 0). */
function hourly (hours: readonly IssueMember[], from: number, to: number): Array<{ hour: number, count: number }> {
  const counts = new Map(hours.map(m => [Number(m.member), m.count]))
  const first = Math.floor(from / HOUR_MS) * HOUR_MS
  const buckets: Array<{ hour: number, count: number }> = []
  for (let hour = first; hour < to; hour += HOUR_MS) buckets.push({ hour, count: counts.get(hour) ?? 0 })
  return buckets
}
