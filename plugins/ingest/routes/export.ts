// Exports for spreadsheets and scripts: devices, crash issues, faults and metric samples as CSV or
// NDJSON (kernel/export-stream.ts), streamed as they are read, with the filters of the matching list
// routes.
import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { BadRequest, NotFound } from '../../../kernel/index.js'
import { exportFormat, sendExport } from '../../../kernel/runtime-api.js'
import { decodeFault } from '../fault-status.js'
import { DEVICE_ID } from '../keys.js'
import { parseTime } from '../series-query.js'
import type { Telemetry } from '../telemetry.js'
import { deviceFilter, type DeviceFilters } from './devices.js'
import { findIssues, type IssueListQuery } from './issues.js'

const DEVICE_COLUMNS = ['id', 'name', 'group', 'serial', 'hardware_version', 'software_type', 'software_version', 'build_id', 'registered', 'encrypted', 'created_at', 'last_seen', 'boot_count', 'offline']
const ISSUE_COLUMNS = ['id', 'title', 'signature', 'grouping', 'status', 'count', 'device_count', 'first_seen', 'last_seen', 'latest_version', 'resolved_version', 'regression', 'regressed_at', 'status_changed_at', 'status_changed_by']
const FAULT_COLUMNS = ['device', 'sequence', 'received_at', 'pc', 'lr', 'sp', 'psr', 'cfsr', 'hfsr', 'mmfar', 'bfar', 'uptime_ms', 'stack', 'software_version', 'build_id', 'symbol', 'backtrace', 'issue', 'causes']
const METRIC_COLUMNS = ['device', 'sequence', 'received_at', 'key', 'kind', 'value', 'uptime_ms']

interface ExportQuery { format?: string }

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
    const format = exportFormat(request.query.format)
    const keep = deviceFilter(request.query)
    return await sendExport(reply, 'devices', format, DEVICE_COLUMNS, filtered(t.storage.devices(), keep) as AsyncIterable<Record<string, unknown>>)
  })

  app.get<{ Querystring: ExportQuery & IssueListQuery }>('/export/issues', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = exportFormat(request.query.format)
    const { issues } = await findIssues(t.storage, request.query)
    return await sendExport(reply, 'issues', format, ISSUE_COLUMNS, Readable.from(issues) as AsyncIterable<Record<string, unknown>>)
  })

  app.get<{ Querystring: ExportQuery & { device?: string, from?: string, to?: string } }>('/export/faults', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = exportFormat(request.query.format)
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
    return await sendExport(reply, 'faults', format, FAULT_COLUMNS, faults())
  })

  app.get<{ Querystring: ExportQuery & { device?: string, key?: string, kind?: string, from?: string, to?: string } }>('/export/metrics', { config: { telemetryAccess: 'viewer' } }, async (request, reply) => {
    const format = exportFormat(request.query.format)
    const id = await device(request.query.device, true) as string
    const { key, kind } = request.query
    if (kind !== undefined && !['gauge', 'increment', 'observe'].includes(kind)) throw new BadRequest(`kind must be gauge, increment or observe, got "${kind}"`)
    const from = parseTime('from', request.query.from, 0)
    const to = parseTime('to', request.query.to, Number.MAX_SAFE_INTEGER)
    const samples = filtered(mapped(t.storage.series('metrics', [id, from], to + 1), entry => entry.value), m => (key === undefined || m.key === key) && (kind === undefined || m.kind === kind))
    return await sendExport(reply, `metrics-${id}`, format, METRIC_COLUMNS, samples as AsyncIterable<Record<string, unknown>>)
  })
}

async function * mapped<T, U> (items: AsyncIterable<T>, map: (item: T) => U): AsyncIterable<U> {
  for await (const item of items) yield map(item)
}
