// Exports for spreadsheets and scripts: devices, crash issues, faults and metric samples as CSV (a
// header row, RFC 4180 quoting by csv-stringify, text that would start a formula defused) or NDJSON
// (one JSON object a line, as stored), streamed as they are read (memory stays flat whatever the
// size), with the filters of the matching list routes.
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { stringify } from 'csv-stringify/sync'
import { BadRequest, NotFound } from '../../../kernel/index.js'
import { decodeFault } from '../fault-status.js'
import { DEVICE_ID } from '../keys.js'
import { parseTime } from '../series-query.js'
import type { Telemetry } from '../telemetry.js'
import { deviceFilter, type DeviceFilters } from './devices.js'
import { findIssues, type IssueListQuery } from './issues.js'

const FORMATS = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' } as const
type Format = keyof typeof FORMATS

const DEVICE_COLUMNS = ['id', 'name', 'group', 'serial', 'hardware_version', 'software_type', 'software_version', 'build_id', 'registered', 'encrypted', 'created_at', 'last_seen', 'boot_count', 'offline']
const ISSUE_COLUMNS = ['id', 'title', 'signature', 'grouping', 'status', 'count', 'device_count', 'first_seen', 'last_seen', 'latest_version', 'resolved_version', 'regression', 'regressed_at', 'status_changed_at', 'status_changed_by']
const FAULT_COLUMNS = ['device', 'sequence', 'received_at', 'pc', 'lr', 'sp', 'psr', 'cfsr', 'hfsr', 'mmfar', 'bfar', 'uptime_ms', 'stack', 'software_version', 'build_id', 'symbol', 'backtrace', 'issue', 'causes']
const METRIC_COLUMNS = ['device', 'sequence', 'received_at', 'key', 'kind', 'value', 'uptime_ms']

interface ExportQuery { format?: string }

function formatOf (query: ExportQuery): Format {
  const format = query.format ?? 'csv'
  if (!(format in FORMATS)) throw new BadRequest(`format must be csv or ndjson, got "${format}"`)
  return format as Format
}

/** Characters a spreadsheet reads as the start of a formula when a cell begins with one. */
const FORMULA_START = /^[=+\-@\t\r]/

/**
 * A CSV cell: empty for null, JSON for what is not a string, number or boolean. Text that a
 * spreadsheet would take for a formula (a device's name or serial is the device's to choose) gets a
 * leading apostrophe, as OWASP advises against CSV injection.
 */
function cell (value: unknown): string | number | boolean {
  if (value === null || value === undefined) return ''
  const plain = typeof value === 'object' ? JSON.stringify(value) : value as string | number | boolean
  return typeof plain === 'string' && FORMULA_START.test(plain) ? `'${plain}` : plain
}

/** Send `rows` as the export `name` in `format`, streamed. */
async function send (reply: FastifyReply, name: string, format: Format, columns: readonly string[], rows: AsyncIterable<Record<string, unknown>>): Promise<FastifyReply> {
  async function * lines (): AsyncIterable<string> {
    if (format === 'csv') yield stringify([columns])
    for await (const row of rows) yield format === 'csv' ? stringify([columns.map(c => cell(row[c]))]) : `${JSON.stringify(row)}\n`
  }
  const stamp = new Date().toISOString().replaceAll(':', '').slice(0, 17)
  return await reply
    .type(FORMATS[format])
    .header('content-disposition', `attachment; filename="berth-${name}-${stamp}.${format}"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(lines()))
}

async function * filtered<T> (items: AsyncIterable<T>, keep: (item: T) => boolean): AsyncIterable<T> {
  for await (const item of items) if (keep(item)) yield item
}

export function exportRoutes (app: FastifyInstance, t: Telemetry): void {
  const device = async (id: string | undefined, required: boolean): Promise<string | undefined> => {
    if (id === undefined || id === '') {
      if (required) throw new BadRequest('device is required (a device id)')
      return undefined
    }
    if (!DEVICE_ID.test(id)) throw new BadRequest(`device must be a device id (16 lowercase hex characters), got "${id.slice(0, 40)}"`)
    if (await t.storage.device(id) === undefined) throw new NotFound(`device ${id} does not exist`)
    return id
  }

  app.get<{ Querystring: ExportQuery & DeviceFilters }>('/export/devices', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = formatOf(request.query)
    const keep = deviceFilter(request.query)
    return await send(reply, 'devices', format, DEVICE_COLUMNS, filtered(t.storage.devices(), keep) as AsyncIterable<Record<string, unknown>>)
  })

  app.get<{ Querystring: ExportQuery & IssueListQuery }>('/export/issues', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = formatOf(request.query)
    const { issues } = await findIssues(t.storage, request.query)
    return await send(reply, 'issues', format, ISSUE_COLUMNS, Readable.from(issues) as AsyncIterable<Record<string, unknown>>)
  })

  app.get<{ Querystring: ExportQuery & { device?: string, from?: string, to?: string } }>('/export/faults', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = formatOf(request.query)
    const id = await device(request.query.device, false)
    const from = parseTime('from', request.query.from, 0)
    const to = parseTime('to', request.query.to, Number.MAX_SAFE_INTEGER)
    async function * faults (): AsyncIterable<Record<string, unknown>> {
      const source = id !== undefined
        ? mapped(t.storage.series('faults', [id, from], to + 1), entry => entry.value)
        : filtered(t.storage.faultsSince(from), f => f.received_at <= to)
      for await (const fault of source) {
        const frames = fault.backtrace ?? []
        // A CSV cell holds the frames as one line, innermost first.
        const backtrace = format === 'csv' ? frames.map(frame => frame.symbol).join(' < ') : frames
        yield { ...fault, stack: fault.stack ?? '', backtrace, causes: decodeFault(fault).causes.map(c => c.name).join(' ') }
      }
    }
    return await send(reply, 'faults', format, FAULT_COLUMNS, faults())
  })

  app.get<{ Querystring: ExportQuery & { device?: string, key?: string, kind?: string, from?: string, to?: string } }>('/export/metrics', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = formatOf(request.query)
    const id = await device(request.query.device, true) as string
    const { key, kind } = request.query
    if (kind !== undefined && !['gauge', 'increment', 'observe'].includes(kind)) throw new BadRequest(`kind must be gauge, increment or observe, got "${kind}"`)
    const from = parseTime('from', request.query.from, 0)
    const to = parseTime('to', request.query.to, Number.MAX_SAFE_INTEGER)
    const samples = filtered(mapped(t.storage.series('metrics', [id, from], to + 1), entry => entry.value), m => (key === undefined || m.key === key) && (kind === undefined || m.kind === kind))
    return await send(reply, `metrics-${id}`, format, METRIC_COLUMNS, samples as AsyncIterable<Record<string, unknown>>)
  })
}

async function * mapped<T, U> (items: AsyncIterable<T>, map: (item: T) => U): AsyncIterable<U> {
  for await (const item of items) yield map(item)
}
