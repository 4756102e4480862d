// Several ingest nodes on one PostgreSQL database, each a `berth telemetry serve` process of its own:
// a simulated fleet posts to them in turn while one node is killed with SIGKILL, and every chunk
// acknowledged (stored or duplicate) is in the database exactly once; an offline alert is raised once
// by the three nodes, and still raised after the node that ran the offline check is killed.
import t from 'tap'
import { createServer } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { SCHEMA } from '../../../plugins/ingest/storage/postgres.js'
import { deviceIds, simulatedPayload } from '../../../bench/telemetry-load.js'
import { exited, spawnCliForTest, untilAnswers, type RunningCli } from '../../support/cli.js'
import { freePort } from '../../support/net.js'
import { pollUntil } from '../../support/poll.js'
import { requirePostgres } from '../../support/postgres.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY } from './harness.js'

interface Test { teardown(fn: () => void | Promise<void>): void }

interface Node {
  index: number
  base: URL
  child: RunningCli
}

/** `berth telemetry serve` on the database at `url`, with `ingest` lines added to its [ingest] section. */
async function startNode (t: Test, index: number, url: string, ingest: readonly string[] = []): Promise<Node> {
  const dir = tempDir(t, `berth-node-${index}-`)
  const [control, telemetry] = [await freePort(), await freePort()]
  writeFileSync(join(dir, 'cluster.toml'), ['[server]', 'log_level = "warn"',
    '[server.listeners.control]', 'host = "127.0.0.1"', `port = ${control}`,
    '[server.listeners.telemetry]', 'host = "127.0.0.1"', `port = ${telemetry}`,
    '[ingest]', ...ingest].join('\n'))
  const child = spawnCliForTest(t, ['telemetry', 'serve'], {
    cwd: dir, env: { INGEST_API_KEY: API_KEY, INGEST_DATABASE_URL: url, BERTH_TELEMETRY_PORT: String(telemetry) }
  })
  const base = new URL(`http://127.0.0.1:${telemetry}`)
  await untilAnswers(child, new URL('/auth/mode', base), `ingest node ${index}`)
  return { index, base, child }
}

/** Queries on the database as the nodes see it (schema `ingest`). */
async function withDatabase<T> (url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${SCHEMA}` })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

interface Answer { status: number, frames: Array<{ device: string, sequence: number, status: string }> }

async function post (node: Node, body: Uint8Array): Promise<Answer> {
  const response = await fetch(new URL('/ingest/chunks', node.base), {
    method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': API_KEY }, body
  })
  const text = await response.text()
  return { status: response.status, frames: response.status === 200 ? (JSON.parse(text) as { frames: Answer['frames'] }).frames : [] }
}

const DEVICES = 40
const CHUNKS = 60
const FRAMES_PER_REQUEST = 6

t.test('a fleet posting to three nodes, one killed mid-load: every acknowledged chunk stored exactly once', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const nodes = await Promise.all([0, 1, 2].map(async index => await startNode(t, index, url)))
  const victim = nodes[1]
  const ids = deviceIds(DEVICES, 'ab000000')
  const total = DEVICES * CHUNKS
  /** `device:sequence` of every chunk answered stored or duplicate. */
  const acknowledged = new Set<string>()
  const outcomes = new Map<string, number>()
  let turn = 0
  let killed: Promise<number | string> | undefined
  let refusedByVictim = 0
  /** Requests the victim has been given and not answered. */
  let victimBusy = 0
  const deadline = Date.now() + 40_000

  // Each device sends its chunks in order, one request at a time; a request that gets no 200 (the node died
  // under it, or a 503) goes again, the same body, to the next node: what a device or `berth gateway` does.
  const device = async (index: number): Promise<void> => {
    const id = ids[index]
    for (let first = 0; first < CHUNKS; first += FRAMES_PER_REQUEST) {
      const sequences = Array.from({ length: Math.min(FRAMES_PER_REQUEST, CHUNKS - first) }, (_, i) => first + i)
      const body = Buffer.concat(sequences.map(sequence => encodeChunk({ device: id, sequence, payload: simulatedPayload(index, sequence) })))
      for (;;) {
        if (Date.now() > deadline) throw new Error(`device ${id} could not deliver chunks ${first}… in time`)
        const node = nodes[turn++ % nodes.length]
        if (node === victim && killed !== undefined) continue
        let answer: Answer
        if (node === victim) victimBusy++
        try {
          answer = await post(node, body)
        } catch {
          if (node === victim) refusedByVictim++
          continue
        } finally {
          if (node === victim) victimBusy--
        }
        if (answer.status !== 200) continue
        for (const frame of answer.frames) {
          outcomes.set(frame.status, (outcomes.get(frame.status) ?? 0) + 1)
          if (frame.status === 'accepted' || frame.status === 'duplicate') acknowledged.add(`${frame.device}:${frame.sequence}`)
        }
        // The kill, mid-load: once a third of the fleet's chunks are acknowledged, while the victim has requests in hand.
        if (killed === undefined && acknowledged.size >= total / 3 && victimBusy >= 3) {
          victim.child.kill('SIGKILL')
          killed = exited(victim.child)
        }
        break
      }
    }
  }
  await Promise.all(ids.map(async (_, index) => { await device(index) }))
  t.equal(await killed, 'SIGKILL', 'node 1 was killed with SIGKILL mid-load')
  t.ok(refusedByVictim > 0, `requests in its hands when it died went again to the others (${refusedByVictim})`)
  t.equal(acknowledged.size, total, `every chunk was acknowledged in the end (outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; ${refusedByVictim} request(s) lost with the killed node)`)
  t.equal(outcomes.get('rejected') ?? 0, 0, 'nothing rejected')

  const stored = await withDatabase(url, async client => {
    const marks = (await client.query<{ device: string, sequence: number, n: number }>(
      'select device, sequence::int, count(*)::int as n from chunk_marks where device like $1 group by device, sequence', ['ab000000%'])).rows
    // A chunk stored twice would have two receive times under its (device, sequence) in some series.
    const twice = (await client.query<{ device: string, sequence: number }>(`
      select device, sequence::int from (
        select device, sequence, received_at from faults union select device, sequence, received_at from metrics
        union select device, sequence, received_at from reboots union select device, sequence, received_at from traces
      ) s where device like $1 group by device, sequence having count(distinct received_at) > 1`, ['ab000000%'])).rows
    const series = (await client.query<{ n: number }>(`
      select count(*)::int as n from (
        select device, sequence from faults union select device, sequence from metrics
        union select device, sequence from reboots union select device, sequence from traces
      ) s where device like $1`, ['ab000000%'])).rows[0].n
    return { marks, twice, series }
  })
  const marked = new Set(stored.marks.map(m => `${m.device}:${m.sequence}`))
  t.same([...acknowledged].filter(key => !marked.has(key)), [], 'every acknowledged chunk has its idempotency mark')
  t.same(stored.marks.filter(m => m.n !== 1), [], 'each (device, sequence) marked once: one content, stored once')
  t.equal(stored.marks.length, total, 'and nothing beyond the fleet’s chunks')
  t.same(stored.twice, [], 'no chunk’s records stored twice (one receive time per device and sequence)')
  // Of the six record types, four write series (faults, metrics, reboots, traces); device info and heartbeats update the device.
  const kinds = Array.from({ length: CHUNKS }, (_, sequence) => simulatedPayload(0, sequence).type)
  t.equal(stored.series, DEVICES * kinds.filter(type => type !== 'DeviceInfo' && type !== 'Heartbeat').length, 'every series chunk is there')
})

t.test('three nodes raise an offline alert once; after the node that ran the check is killed, the others still raise them', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const alerts: Array<{ node: number, device: string }> = []
  const hook = createServer((request, response) => {
    let body = ''
    request.on('data', (d: Buffer) => { body += d.toString() })
    request.on('end', () => {
      const alert = JSON.parse(body) as { alert: string, device: string }
      if (alert.alert === 'device.offline') alerts.push({ node: Number(request.url?.split('/').at(-1)), device: alert.device })
      response.end()
    })
  })
  await new Promise<void>(resolve => hook.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { hook.close() })
  const port = (hook.address() as { port: number }).port
  const nodes = await Promise.all([0, 1, 2].map(async index => await startNode(t, index, url, [
    'offline_after_seconds = 1', 'offline_check_seconds = 1', `alert_webhooks = ["http://127.0.0.1:${port}/alerts/${index}"]`
  ])))
  const lastCheck = async (): Promise<number> => await withDatabase(url, async client =>
    (await client.query<{ at: number }>("select at::float8 as at from scheduled_jobs where name = 'offline-check'")).rows[0]?.at ?? 0)
  /** Wait until the offline check has run `runs` more times (any node), so that a second alert would have come. */
  const checksPass = async (runs: number): Promise<void> => {
    for (let run = 0; run < runs; run++) {
      const before = await lastCheck()
      await pollUntil(async () => await lastCheck() > before, { timeout: 10_000, interval: 100, what: 'the offline check to run again' })
    }
  }
  const heartbeat = (device: string, sequence: number): Uint8Array => encodeChunk({ device, sequence, payload: { type: 'Heartbeat', record: { uptime_ms: 1000, boot_count: 1 } } })

  const first = 'ac00000000000001'
  t.equal((await post(nodes[0], heartbeat(first, 1))).frames[0]?.status, 'accepted')
  const raised = await pollUntil(() => alerts.find(a => a.device === first), { timeout: 20_000, what: `the offline alert of ${first}` })
  await checksPass(3)
  t.equal(alerts.filter(a => a.device === first).length, 1, 'the alert is raised once, by one of the three nodes')

  const holder = nodes[raised.node]
  holder.child.kill('SIGKILL')
  t.equal(await exited(holder.child), 'SIGKILL', `node ${raised.node}, which ran the check, killed`)
  const survivors = nodes.filter(node => node !== holder)
  const second = 'ac00000000000002'
  t.equal((await post(survivors[0], heartbeat(second, 1))).frames[0]?.status, 'accepted')
  const later = await pollUntil(() => alerts.find(a => a.device === second), { timeout: 20_000, what: `the offline alert of ${second}` })
  t.not(later.node, raised.node, 'raised by a node still running')
  await checksPass(3)
  t.equal(alerts.filter(a => a.device === second).length, 1, 'once')
  t.equal(alerts.filter(a => a.device === first).length, 1, 'and the first device is not alerted again')
})
