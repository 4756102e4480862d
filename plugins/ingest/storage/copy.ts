// `berth telemetry migrate --to <url>`: the telemetry of the embedded store copied into PostgreSQL,
// table by table in batches; rows already there are kept, so a copy interrupted, or taken while a
// server still ran, can run again. Idempotency marks keep their contents (a mark from before contents
// were kept becomes one of no content: a copy of its chunk is then stored again, never dropped). ELF
// records take their file from the ELF directory along.
import { existsSync, readFileSync } from 'node:fs'
import { openPluginState } from '../../../kernel/runtime-api.js'
import { DIGEST_BYTES } from '../chunk-marks.js'
import { elfPath } from '../elf-files.js'
import { pendingKey, TelemetryStore } from '../store.js'
import { DEVICE_COLUMNS, ELF_COLUMNS, GROUP_COLUMNS, OTA_COLUMNS, PostgresStorage, SERIES, type Row } from './postgres.js'

/** Rows read from the store before they are written. */
const BATCH = 5000

/** What was copied: rows inserted by table (rows found there already are not counted). */
export type CopyReport = Record<string, number>

/** Copy every record of `from` into `to` (migrated already); `progress` hears each table as it is done. */
export async function copyToPostgres (from: TelemetryStore, to: PostgresStorage, elfDir: string, progress: (table: string, rows: number) => void = () => {}): Promise<CopyReport> {
  const report: CopyReport = {}
  const copy = async (table: string, columns: readonly string[], rows: Iterable<Row>): Promise<void> => {
    let batch: Row[] = []
    let inserted = 0
    for (const row of rows) {
      batch.push(row)
      if (batch.length === BATCH) {
        inserted += await to.importRows(table, columns, batch)
        batch = []
      }
    }
    if (batch.length > 0) inserted += await to.importRows(table, columns, batch)
    report[table] = inserted
    progress(table, inserted)
  }
  const values = function * <T> (db: { getRange: () => Iterable<{ value: T }> }): Generator<T> {
    for (const { value } of db.getRange()) yield value
  }
  await copy('devices', DEVICE_COLUMNS, values(from.devices) as Iterable<Row>)
  await copy('device_keys', ['device', 'key'], (function * () {
    for (const { key, value } of from.keys.getRange()) yield { device: key, key: Buffer.from(value) }
  })())
  await copy('chunk_marks', ['device', 'sequence', 'digest', 'at'], (function * () {
    for (const { key, value } of from.seen.getRange()) {
      const cut = key.lastIndexOf(':')
      const device = key.slice(0, cut)
      const sequence = Number(key.slice(cut + 1))
      if (typeof value === 'number') {
        yield { device, sequence, digest: Buffer.alloc(0), at: value }
        continue
      }
      // Newest first: each older content a millisecond earlier, so their order stays.
      for (let i = 0; i * DIGEST_BYTES < value.digests.length; i++) {
        yield { device, sequence, digest: Buffer.from(value.digests.subarray(i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES)), at: value.at - i }
      }
    }
  })())
  // Without their issue: the target counts them into its own crash issues when it next starts.
  await copy('faults', [...SERIES.faults.columns, 'pending'], (function * () {
    for (const { value } of from.faults.getRange()) {
      yield { ...value, stack: value.stack ?? '', backtrace: JSON.stringify(value.backtrace ?? []), issue: null, pending: from.pendingFaults.doesExist(pendingKey(value)) }
    }
  })())
  await copy('metrics', [...SERIES.metrics.columns, 'entry'], (function * () {
    for (const { key, value } of from.metrics.getRange()) yield { ...value, entry: key[3] ?? 0 }
  })())
  await copy('reboots', SERIES.reboots.columns, values(from.reboots) as Iterable<Row>)
  await copy('traces', SERIES.traces.columns, values(from.traces) as Iterable<Row>)
  await copy('heartbeats', SERIES.heartbeats.columns, values(from.heartbeats) as Iterable<Row>)
  await copy('groups', GROUP_COLUMNS, values(from.groups) as Iterable<Row>)
  await copy('ota_targets', OTA_COLUMNS, values(from.ota) as Iterable<Row>)
  // With the file from the ELF directory, for nodes that were not given it (null when it is missing there).
  await copy('elf_files', [...ELF_COLUMNS, 'bytes'], (function * () {
    for (const { value } of from.elves.getRange()) {
      const path = elfPath(elfDir, value)
      yield { ...value, bytes: existsSync(path) ? readFileSync(path) : null }
    }
  })())
  await copy('elf_versions', ['name', 'build_id'], (function * () {
    for (const { key, value } of from.versions.getRange()) yield { name: key, build_id: value }
  })())
  return report
}

/** The command: the ingest plugin's databases of `stateDir` into the database at `url` (its schema migrated first). */
export async function migrateTelemetry (stateDir: string, url: string, elfDir: string, say: (line: string) => void): Promise<CopyReport> {
  const state = openPluginState(stateDir, 'ingest')
  const to = new PostgresStorage(url, { max: 2 })
  try {
    const applied = await to.migrate()
    if (applied.length > 0) say(`schema: migrations ${applied.join(', ')} applied`)
    return await copyToPostgres(new TelemetryStore(state.store), to, elfDir, (table, rows) => { say(`${table}: ${rows} row(s) copied`) })
  } finally {
    await to.close()
    await state.close()
  }
}
