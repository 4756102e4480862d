// Several nodes and faults on PostgreSQL: a node's live stream shows what the others ingest (LISTEN/NOTIFY);
// two ingest nodes on one database given the same chunk at once store it once;
// changed content under a sequence either of them has seen is stored, never dropped as a duplicate;
// with the database stopped every request answers 503 with a code and Retry-After, nothing half
// stored, and once it is back the same bodies are accepted and everything acknowledged is there.
import t from 'tap'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { requireComponent } from '../../support/component.js'
import { ownPostgres, requirePostgres } from '../../support/postgres.js'
import { basic, readEvents, telemetryServer } from './harness.js'
import { SAMPLES } from './samples.js'

const FAULT = SAMPLES.find(s => s.type === 'FaultRecord') ?? SAMPLES[0]
const HEARTBEAT = SAMPLES.find(s => s.type === 'Heartbeat') ?? SAMPLES[0]

t.test('two nodes given the same chunk at once store it once; changed content at a seen sequence is stored', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const nodes = [await telemetryServer(t, { database_url: url }), await telemetryServer(t, { database_url: url })]
  const device = 'aa00000000000001'
  for (let sequence = 0; sequence < 20; sequence++) {
    const body = encodeChunk({ device, sequence, payload: FAULT })
    const answers = await Promise.all(nodes.map(async node => await node.ingest(body)))
    t.same(answers.map(a => a.status), [200, 200])
    t.same(answers.map(a => a.json.frames[0].status).sort(), ['accepted', 'duplicate'], `sequence ${sequence}: one node stored it, the other answered duplicate`)
  }
  const faults = await (await nodes[1].api('GET', `/devices/${device}/faults?limit=1000`, 'viewer')).json() as { items: Array<{ sequence: number }> }
  t.same(faults.items.map(f => f.sequence), Array.from({ length: 20 }, (_, i) => i), 'each chunk stored once')

  const changed = await nodes[1].ingest(encodeChunk({ device, sequence: 3, payload: HEARTBEAT }))
  t.match(changed.json.frames[0], { status: 'accepted', sequence_reused: true }, 'other content under a seen sequence is stored, on the node that did not see it first')
  const again = await nodes[0].ingest(encodeChunk({ device, sequence: 3, payload: HEARTBEAT }))
  t.match(again.json.frames[0], { status: 'duplicate' }, 'and is a duplicate on the other node afterwards')
})

t.test('the database stopped: 503 with a code and Retry-After; back: the same bodies are accepted, nothing acknowledged lost', async t => {
  const postgres = await requireComponent(t, 'postgresql-15', async () => await ownPostgres(t))
  if (postgres === undefined) return
  const server = await telemetryServer(t, { database_url: postgres.url() })
  const device = 'bb00000000000001'
  const first = await server.ingest(encodeChunk({ device, sequence: 1, payload: FAULT }))
  t.equal(first.json.frames[0].status, 'accepted')

  await postgres.stop()
  const body = encodeChunk({ device, sequence: 2, payload: FAULT })
  const refused = await fetch(new URL('/ingest/chunks', server.base), {
    method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': 'test-device-key-0123456789' }, body
  })
  t.equal(refused.status, 503, 'an ingest request answers 503')
  t.equal(refused.headers.get('retry-after'), '5', 'with Retry-After')
  t.match(await refused.json(), { error: /telemetry database cannot be reached/, code: 'BERTH_INGEST_STORAGE_UNAVAILABLE' })
  const read = await server.api('GET', '/devices', 'viewer')
  t.same([read.status, (await read.json() as { code: string }).code], [503, 'BERTH_INGEST_STORAGE_UNAVAILABLE'], 'so does a read')

  await postgres.start()
  const accepted = await server.ingest(body)
  t.same([accepted.status, accepted.json.frames[0].status], [200, 'accepted'], 'the refused body is accepted once the database is back')
  const faults = await (await server.api('GET', `/devices/${device}/faults`, 'viewer')).json() as { items: Array<{ sequence: number }> }
  t.same(faults.items.map(f => f.sequence), [1, 2], 'the chunk acknowledged before the stop and the one after')
})

t.test('the live stream of one node shows the events of the others', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const nodes = [await telemetryServer(t, { database_url: url }), await telemetryServer(t, { database_url: url })]
  const live = await fetch(new URL('/events/stream', nodes[1].base), { headers: { authorization: basic('viewer') } })
  const device = 'cc00000000000001'
  t.equal((await nodes[0].ingest(encodeChunk({ device, sequence: 7, payload: HEARTBEAT }))).json.frames[0].status, 'accepted')
  const heard = await readEvents(live, 2)
  t.same(heard.map(e => [e.event, e.data.sequence]), [['device.registered', undefined], ['chunk', 7]], 'registered and chunk, ingested on the other node')
})
