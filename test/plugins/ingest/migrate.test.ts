// `berth telemetry migrate --to <url>`: the embedded store's telemetry copied into PostgreSQL shows the
// same through the API of a server on that database (devices, keys, series, groups, OTA targets, marks),
// and a second copy adds nothing.
import t from 'tap'
import { join } from 'node:path'
import { migrateTelemetry } from '../../../plugins/ingest/storage/copy.js'
import { MIGRATIONS } from '../../../plugins/ingest/storage/migrations/index.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { requirePostgres } from '../../support/postgres.js'
import { tempDir } from '../../support/tmp.js'
import { telemetryServer, type TelemetryServer } from './harness.js'
import { SAMPLES } from './samples.js'

const DEVICE = 'ee00000000000001'
const SEALED = 'ee00000000000002'

/** What the API shows of the fleet, as the viewer. */
async function shown (server: TelemetryServer): Promise<unknown[]> {
  const get = async (path: string): Promise<unknown> => await (await server.api('GET', path, 'viewer')).json()
  return await Promise.all(['/devices', '/groups', '/ota/targets', ...['faults', 'metrics', 'reboots', 'traces'].map(series => `/devices/${DEVICE}/${series}`), `/devices/${SEALED}`].map(get))
}

t.test('the embedded store copied into PostgreSQL shows the same, and copies again without adding anything', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const stateDir = tempDir(t)
  const embedded = await telemetryServer(t, {}, undefined, { state_dir: stateDir })
  const chunks = SAMPLES.map((payload, sequence) => encodeChunk({ device: DEVICE, sequence, payload }))
  t.equal((await embedded.ingest(Buffer.concat(chunks))).json.accepted, SAMPLES.length)
  t.equal((await embedded.api('POST', '/groups', 'admin', { name: 'lab', description: 'bench' })).status, 201)
  t.equal((await embedded.api('POST', '/ota/targets', 'admin', { software_type: 'main', version: '2.0.0', group: 'lab' })).status, 201)
  const sealed = await (await embedded.api('POST', '/devices/register', 'admin', { id: SEALED, group: 'lab', encrypted: true })).json() as { key: string }
  const before = await shown(embedded)
  await embedded.kernel.stop()

  const lines: string[] = []
  const report = await migrateTelemetry(stateDir, url, join(stateDir, 'elf'), line => { lines.push(line) })
  t.match(report, { devices: 2, device_keys: 1, chunk_marks: SAMPLES.length, groups: 1, ota_targets: 1 })
  t.ok(lines.includes(`schema: migrations ${MIGRATIONS.map(m => m.version).join(', ')} applied`), 'the schema was migrated first')
  const again = await migrateTelemetry(stateDir, url, join(stateDir, 'elf'), () => {})
  t.same(Object.values(again).filter(rows => rows > 0), [], 'a second copy adds nothing')

  const shared = await telemetryServer(t, { database_url: url })
  t.same(await shown(shared), before, 'the API shows the same')
  const resent = await shared.ingest(Buffer.concat(chunks))
  t.same(resent.json.frames.map(f => f.status), SAMPLES.map(() => 'duplicate'), 'the chunks stored before are duplicates')
  const key = Buffer.from(sealed.key, 'hex')
  const sealedChunk = await shared.ingest(encodeChunk({ device: SEALED, sequence: 1, payload: SAMPLES[5], key }))
  t.equal(sealedChunk.json.frames[0].status, 'accepted', 'a sealed chunk opens with the copied key')
})
