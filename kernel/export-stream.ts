// Streamed exports for spreadsheets and scripts, shared by the plugins that offer them: CSV (a header
// row, RFC 4180 quoting by csv-stringify, text that would start a formula defused) or NDJSON (one
// JSON object a line), sent as the rows are read so memory stays flat whatever the size.
import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { stringify } from 'csv-stringify/sync'
import { BadRequest } from './errors.js'

export const EXPORT_FORMATS = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' } as const
export type ExportFormat = keyof typeof EXPORT_FORMATS

/** The `format` query parameter: csv (the default) or ndjson; 400 otherwise. */
export function exportFormat (format: string | undefined): ExportFormat {
  const chosen = format ?? 'csv'
  if (!Object.hasOwn(EXPORT_FORMATS, chosen)) throw new BadRequest(`format must be csv or ndjson, got "${chosen}"`)
  return chosen as ExportFormat
}

/** Characters a spreadsheet reads as the start of a formula when a cell begins with one. */
const FORMULA_START = /^[=+\-@\t\r]/
/** A phone number in E.164 form: `+` and 7 to 15 digits, no operator or call in it, so no formula to defuse. */
const E164 = /^\+\d{7,15}$/

/**
 * A CSV cell: empty for null, JSON for what is not a string, number or boolean. Text that a
 * spreadsheet would take for a formula gets a leading apostrophe, as OWASP advises against CSV
 * injection; a phone number in E.164 form is written as it is.
 */
export function exportCell (value: unknown): string | number | boolean {
  if (value === null || value === undefined) return ''
  const plain = typeof value === 'object' ? JSON.stringify(value) : value as string | number | boolean
  return typeof plain === 'string' && FORMULA_START.test(plain) && !E164.test(plain) ? `'${plain}` : plain
}

/** Send `rows` as the export `name` in `format` (an attachment named with the time), streamed. */
export async function sendExport (reply: FastifyReply, name: string, format: ExportFormat, columns: readonly string[], rows: AsyncIterable<Record<string, unknown>>): Promise<FastifyReply> {
  async function * lines (): AsyncIterable<string> {
    if (format === 'csv') yield stringify([columns])
    for await (const row of rows) yield format === 'csv' ? stringify([columns.map(c => exportCell(row[c]))]) : `${JSON.stringify(row)}\n`
  }
  const stamp = new Date().toISOString().replaceAll(':', '').slice(0, 17)
  return await reply
    .type(EXPORT_FORMATS[format])
    .header('content-disposition', `attachment; filename="berth-${name}-${stamp}.${format}"`)
    .header('cache-control', 'no-store')
    .send(Readable.from(lines()))
}
