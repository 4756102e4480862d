// GET /export/{what}: the campaign's people, volunteers, donors, donations, shifts and their rosters,
// the public pages' views and sign-ups, send log and audit log as CSV or NDJSON (?format=), streamed as they are read. Each export has the roles of the server function
// that lists the same records, and shows each role the fields that function would (its module's record view); a saved
// list's filter runs as list-people runs it for the role (filter.ts).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { NotFound } from '../../../../kernel/index.js'
import { exportFormat, sendExport } from '../../../../kernel/runtime-api.js'
import { type AuditLog, hideAttribution, type PeopleView, type Role, type SessionAuth, type Table } from '../../module-kit.js'
import { type PageStats, RSVP_VIEW, summary, type EventBook } from '../events/index.js'
import { SEND_LOG_VIEW, type Messenger } from '../sending/index.js'
import { DONATION_VIEW, DONOR_VIEW, type Fundraising } from '../fundraising/index.js'
import { type PeopleDirectory, type Person, filterAs, matchesFilter, PERSON_VIEW, type ListFilter } from '../people/index.js'
import { VOLUNTEER_VIEW, type Volunteer } from '../volunteers/index.js'

export interface ExportSources {
  auth: SessionAuth
  people: PeopleDirectory
  /** The people table itself, read in batches. */
  peopleTable: Table<Person>
  volunteers: Table<Volunteer>
  fundraising: Fundraising
  events: EventBook
  /** Every public page's views, sign-ups and conversion. */
  pageStats: () => Promise<PageStats[]>
  messenger: Messenger
  audit: AuditLog
}

interface ExportQuery { format?: string, list_id?: string }
type Row = Record<string, unknown>

/** The fields of `view` a role sees, in the view's order. */
const visible = <T extends object>(view: PeopleView<T>, role: Role): string[] => Object.keys(view.fields).filter(field => view.sees(field as never, role))
const yesNo = (value: boolean): string => value ? 'yes' : 'no'

/** A person as a flat row: lists joined with "; ", consent as three yes/no columns, custom fields as custom:<name>: the shape import-csv reads back. */
function personRow (person: Partial<Person>): Row {
  const { tags, issues, roles, merged_from: merged, consent, custom, ...rest } = person
  return {
    ...rest,
    tags: tags?.join('; '),
    issues: issues?.join('; '),
    roles: roles?.join('; '),
    merged_from: merged?.join('; '),
    ...(consent === undefined ? {} : { consent_email: yesNo(consent.email), consent_sms: yesNo(consent.sms), do_not_contact: yesNo(consent.do_not_contact) }),
    ...Object.fromEntries(Object.entries(custom ?? {}).map(([key, value]) => [`custom:${key}`, value]))
  }
}

async function * mapped<T> (items: AsyncIterable<T>, map: (item: T) => Row | undefined): AsyncIterable<Row> {
  for await (const item of items) {
    const row = map(item)
    if (row !== undefined) yield row
  }
}

export function exportRoutes (sources: ExportSources): FastifyPluginAsync {
  const { auth, people, peopleTable, volunteers, fundraising, events, pageStats, messenger, audit } = sources
  return async app => {
    const roleOf = async (request: FastifyRequest): Promise<Role> => (await auth.current(request))?.role as Role

    app.get<{ Querystring: ExportQuery }>('/people', { config: { access: 'function', rolesOf: 'list-people' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const role = await roleOf(request)
      const saved: ListFilter = request.query.list_id === undefined ? {} : (await people.list(request.query.list_id)).filter
      const filter = filterAs(saved, role, 'export people')
      const fields = visible(PERSON_VIEW, role)
      // Custom field names make columns: a first pass over the people collects them (the rows are not kept).
      const custom = new Set<string>()
      if (fields.includes('custom')) for await (const { value } of peopleTable.range()) for (const key of Object.keys(value.custom ?? {})) custom.add(key)
      const columns = fields.flatMap(field => field === 'consent' ? ['consent_email', 'consent_sms', 'do_not_contact'] : field === 'custom' ? [...custom].sort().map(key => `custom:${key}`) : [field])
      const now = new Date()
      const rows = mapped(peopleTable.range(), ({ value: person }) => 'merged_into' in person || !matchesFilter(person, filter, now) ? undefined : personRow(PERSON_VIEW.show(person, role)))
      return await sendExport(reply, 'people', format, columns, rows)
    })

    app.get<{ Querystring: ExportQuery }>('/volunteers', { config: { access: 'function', rolesOf: 'list-volunteers' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const role = await roleOf(request)
      const columns = visible(VOLUNTEER_VIEW, role).flatMap(field => field === 'location' ? ['lat', 'lon'] : [field])
      const rows = mapped(volunteers.range(), ({ value }) => {
        const { location, skills, availability, ...rest } = VOLUNTEER_VIEW.show(value, role)
        return { ...rest, skills: skills?.join('; '), availability: availability?.join('; '), lat: location?.lat, lon: location?.lon }
      })
      return await sendExport(reply, 'volunteers', format, columns, rows)
    })

    app.get<{ Querystring: ExportQuery }>('/donors', { config: { access: 'function', rolesOf: 'list-donors' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const role = await roleOf(request)
      const donors = await fundraising.summaries(undefined)
      const rows = mapped((async function * () { yield * donors })(), donor => DONOR_VIEW.show(donor, role))
      return await sendExport(reply, 'donors', format, visible(DONOR_VIEW, role), rows)
    })

    app.get<{ Querystring: ExportQuery }>('/donations', { config: { access: 'function', rolesOf: 'list-donations' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const role = await roleOf(request)
      const attribution = role === 'admin' || role === 'staff' ? ['recorded_by'] : []
      const rows = mapped(fundraising.allDonations(), donation => hideAttribution(DONATION_VIEW.show(donation, role), role) as Row)
      return await sendExport(reply, 'donations', format, [...visible(DONATION_VIEW, role), ...attribution], rows)
    })

    app.get<{ Querystring: ExportQuery }>('/shifts', { config: { access: 'function', rolesOf: 'list-events' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const titles = new Map((await events.events()).map(event => [event.event_id, event.title]))
      const columns = ['event_id', 'title', 'shift_id', 'starts_at', 'ends_at', 'capacity', 'skills', 'cancelled', 'confirmed_count', 'free', 'waitlist_count']
      const shifts = await events.shifts()
      const rows = mapped((async function * () { yield * shifts })(), shift => ({ ...summary(shift), title: titles.get(shift.event_id), skills: shift.skills.join('; '), cancelled: yesNo(shift.cancelled) }))
      return await sendExport(reply, 'shifts', format, columns, rows)
    })

    app.get<{ Querystring: ExportQuery }>('/rsvps', { config: { access: 'function', rolesOf: 'shift-roster' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const role = await roleOf(request)
      async function * seats (): AsyncIterable<Row> {
        for (const shift of await events.shifts()) {
          for (const entry of (await events.roster(shift.shift_id)).entries) yield { event_id: shift.event_id, shift_id: shift.shift_id, starts_at: shift.starts_at, ...hideAttribution(RSVP_VIEW.show(entry, role), role) as Row }
        }
      }
      const attribution = role === 'admin' || role === 'staff' ? ['added_by'] : []
      return await sendExport(reply, 'rsvps', format, ['event_id', 'shift_id', 'starts_at', ...visible(RSVP_VIEW, role), ...attribution], seats())
    })

    app.get<{ Querystring: ExportQuery }>('/public-pages', { config: { access: 'function', rolesOf: 'public-page-stats' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const columns = ['page', 'id', 'title', 'path', 'published', 'views', 'signups', 'conversion']
      const pages = await pageStats()
      const rows = mapped((async function * () { yield * pages })(), page => ({ ...page, published: yesNo(page.published), conversion: page.conversion ?? '' }))
      return await sendExport(reply, 'public-pages', format, columns, rows)
    })

    app.get<{ Querystring: ExportQuery }>('/send-log', { config: { access: 'function', rolesOf: 'list-send-log' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const role = await roleOf(request)
      const rows = mapped(messenger.log(), entry => SEND_LOG_VIEW.show(entry, role))
      return await sendExport(reply, 'send-log', format, visible(SEND_LOG_VIEW, role), rows)
    })

    app.get<{ Querystring: ExportQuery & { table?: string } }>('/audit', { config: { access: 'function', rolesOf: 'audit-log' } }, async (request, reply) => {
      const format = exportFormat(request.query.format)
      const columns = ['audit_id', 'at', 'by', 'role', 'function', 'table', 'key', 'change', 'before', 'after']
      return await sendExport(reply, 'audit', format, columns, audit.entries({ table: request.query.table }) as AsyncIterable<Row>)
    })

    app.get('/*', { config: { access: 'open' } }, async request => {
      throw new NotFound(`no export ${request.url.split('?')[0]}: people, volunteers, donors, donations, shifts, rsvps, public-pages, send-log or audit`)
    })
  }
}
