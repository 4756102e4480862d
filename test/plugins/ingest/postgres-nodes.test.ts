// Several ingest nodes on one PostgreSQL database, each a `berth telemetry serve` process of its own:
// a simulated fleet posts through a `berth server` running the proxy, whose static route spreads the
// requests over the three nodes, while one node is killed with SIGKILL; every chunk acknowledged
// (stored or duplicate) is in the database exactly once. An offline alert is raised once by the three
// nodes, and still raised after the node that ran the offline check is killed. The fragments of one
// chunk spread over the nodes complete once, also with a node killed between them, and a gap longer
// than the time limit asks for the whole chunk again.
import t from 'tap'
import { createServer, request } from 'node:http'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { SCHEMA } from '../../../plugins/ingest/storage/postgres.js'
import type { RouteView } from '../../../plugins/proxy/control-routes.js'
import { deviceIds, simulatedPayload } from '../../../bench/telemetry-load.js'
import { boundUrls, exited, spawnCliForTest, untilAnswers, type RunningCli } from '../../support/cli.js'
import { through } from '../../support/load.js'
import { pollUntil } from '../../support/poll.js'
import { requirePostgres } from '../../support/postgres.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, framesOf } from './harness.js'

interface Test { teardown(fn: () => void | Promise<void>): void }

interface Node {
  index: number
  base: URL
  child: RunningCli
}

/** `berth telemetry serve` on the database at `url`, with `ingest` lines added to its [ingest] section. */
async function startNode (t: Test, index: number, url: string, ingest: readonly string[] = []): Promise<Node> {
  const dir = tempDir(t, `berth-node-${index}-`)
  // Ports 0: the telemetry listener's is read back from the server's log line.
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0',
    '[server.listeners.telemetry]', 'host = "127.0.0.1"', 'port = 0',
    '[ingest]', ...ingest].join('\n'))
  const child = spawnCliForTest(t, ['telemetry', 'serve'], {
    cwd: dir, env: { INGEST_API_KEY: API_KEY, INGEST_DATABASE_URL: url, BERTH_TELEMETRY_PORT: '0' }
  })
  const base = new URL((await boundUrls(child, `ingest node ${index}`)).telemetry.origin)
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

type Upstream = RouteView['upstreams'][number]

/** Where a request goes: a node, or the proxy with the static route's domain as Host. */
interface Target {
  base: URL
  host?: string
}

/** A `berth server` of the proxy (and the plugins it needs; no container engine) whose static route `ingest.test` leads to the nodes. */
async function startProxy (t: Test, nodes: readonly Node[]): Promise<{ target: Target, upstream: (node: Node) => Promise<Upstream> }> {
  const dir = tempDir(t, 'berth-proxy-')
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0',
    '[server.listeners.proxy-http]', 'host = "127.0.0.1"', '[server.listeners.proxy-https]', 'host = "127.0.0.1"',
    '[reconciler]', `docker_socket = "${join(dir, 'no-engine.sock')}"`,
    '[proxy]', 'health_interval_secs = 1',
    '[proxy.routes.ingest]', 'domain = "ingest.test"', `upstreams = [${nodes.map(node => `"${node.base.host}"`).join(', ')}]`, 'health_path = "/auth/mode"',
    '[acme]', 'directory = ""'].join('\n'))
  const child = spawnCliForTest(t, ['server'], { cwd: dir, env: { BERTH_PLUGINS: 'tokens,secrets,reconciler,proxy', PROXY_HTTP_PORT: '0' } })
  // Its ports are 0, read back from its log line.
  const urls = await boundUrls(child, 'the proxy\'s server', 30_000)
  const control = urls.control.origin
  const target = { base: new URL(urls['proxy-http'].origin), host: 'ingest.test' }
  await pollUntil(async () => {
    if (child.exitCode !== null) throw new Error(`the proxy's server exited: ${child.output()}`)
    return (await through(target.base, target.host, '/auth/mode')).status === 200
  }, { timeout: 30_000, what: 'the proxy to serve ingest.test' })
  const token = readFileSync(join(dir, '.berth', 'admin.token'), 'utf8').trim()
  /** The node as the proxy's routes API shows it (its requests in flight, whether it is in rotation). */
  const upstream = async (node: Node): Promise<Upstream> => {
    const answer = await fetch(`${control}/api/v1/proxy/routes`, { headers: { authorization: `Bearer ${token}` } })
    const { routes } = await answer.json() as { routes: RouteView[] }
    const found = routes[0].upstreams.find(u => u.container === node.base.host)
    if (found === undefined) throw new Error(`the proxy does not route to ${node.base.host}`)
    return found
  }
  return { target, upstream }
}

interface Answer { status: number, frames: Array<{ device: string, sequence: number, status: string }>, text: string }

async function post (target: Target, body: Uint8Array): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/octet-stream', 'x-api-key': API_KEY, ...(target.host !== undefined && { host: target.host }) }
    request(new URL('/ingest/chunks', target.base), { method: 'POST', headers }, response => {
      let text = ''
      response.on('data', (chunk: Buffer) => { text += chunk.toString() })
      response.on('error', reject)
      response.on('end', () => {
        const status = response.statusCode ?? 0
        resolve({ status, text, frames: status === 200 ? (JSON.parse(text) as { frames: Answer['frames'] }).frames : [] })
      })
    }).on('error', reject).end(body)
  })
}

const DEVICES = 40
const CHUNKS = 60
const FRAMES_PER_REQUEST = 6

t.test('a fleet posting through the proxy to three nodes, one killed mid-load: every acknowledged chunk stored exactly once', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const nodes = await Promise.all([0, 1, 2].map(async index => await startNode(t, index, url)))
  const proxy = await startProxy(t, nodes)
  const victim = nodes[1]
  const ids = deviceIds(DEVICES, 'ab000000')
  const total = DEVICES * CHUNKS
  /** `device:sequence` of every chunk answered stored or duplicate. */
  const acknowledged = new Set<string>()
  const outcomes = new Map<string, number>()
  /** Requests answered 502, 503 or 504 by the proxy, or whose connection failed: sent again. */
  let failed = 0
  const deadline = Date.now() + 40_000

  // Each device sends its chunks in order, one request at a time, to the proxy; a request answered 502,
  // 503 or 504 (the node died under it, or none could take it) or whose connection failed goes again,
  // the same body: what a device or `berth gateway` does. The proxy chooses the node.
  const device = async (index: number): Promise<void> => {
    const id = ids[index]
    for (let first = 0; first < CHUNKS; first += FRAMES_PER_REQUEST) {
      const sequences = Array.from({ length: Math.min(FRAMES_PER_REQUEST, CHUNKS - first) }, (_, i) => first + i)
      const body = Buffer.concat(sequences.map(sequence => encodeChunk({ device: id, sequence, payload: simulatedPayload(index, sequence) })))
      for (;;) {
        if (Date.now() > deadline) throw new Error(`device ${id} could not deliver chunks ${first}… in time`)
        const answer = await post(proxy.target, body).catch(() => undefined)
        if (answer === undefined || [502, 503, 504].includes(answer.status)) {
          failed++
          continue
        }
        if (answer.status !== 200) throw new Error(`device ${id}: answered ${answer.status}: ${answer.text}`)
        for (const frame of answer.frames) {
          outcomes.set(frame.status, (outcomes.get(frame.status) ?? 0) + 1)
          if (frame.status === 'accepted' || frame.status === 'duplicate') acknowledged.add(`${frame.device}:${frame.sequence}`)
        }
        break
      }
    }
  }
  // The kill, mid-load: once a third of the fleet's chunks are acknowledged, while the proxy has requests in the victim's hands.
  const kill = async (): Promise<number | string> => {
    await pollUntil(() => acknowledged.size >= total / 3, { timeout: 40_000, interval: 5, what: 'a third of the chunks to be acknowledged' })
    await pollUntil(async () => (await proxy.upstream(victim)).inflight >= 3, { timeout: 10_000, interval: 5, what: 'the victim to have requests in hand' })
    t.ok(acknowledged.size < total, `killed mid-load (${acknowledged.size} of ${total} chunks acknowledged)`)
    victim.child.kill('SIGKILL')
    return await exited(victim.child)
  }
  const [killed] = await Promise.all([kill(), ...ids.map(async (_, index) => { await device(index) })])
  t.equal(killed, 'SIGKILL', 'node 1 was killed with SIGKILL mid-load')
  t.ok(failed > 0, `requests in its hands when it died were answered 502 by the proxy and sent again (${failed})`)
  t.equal(acknowledged.size, total, `every chunk was acknowledged in the end (outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; ${failed} request(s) sent again)`)
  t.match(await proxy.upstream(victim), { inflight: 0, healthy: false }, 'the killed node is out of the rotation, nothing in flight to it')
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

t.test('the fragments of one chunk over three nodes: complete once, through a node killed between them, and asked for whole again after a gap longer than the time limit', async t => {
  const url = await requirePostgres(t)
  if (url === undefined) return
  const nodes = await Promise.all([0, 1, 2].map(async index => await startNode(t, index, url, ['fragments = { ttl_seconds = 2 }'])))
  const device = 'fa00000000000001'
  /** The frames of chunk `sequence`, each fragment a frame of its own. */
  const fragments = (sequence: number): Buffer[] =>
    framesOf(encodeChunk({ device, sequence, payload: { type: 'Trace', record: { uptime_ms: sequence, dropped: 0, data: Buffer.from(`trace line ${sequence} `.repeat(8)) } }, mtu: 32 }))
  const statusAt = async (node: Node, frame: Buffer): Promise<string> => (await post({ base: node.base }, frame)).frames[0]?.status ?? 'no answer'

  // Chunk 1: its fragments in turn at each node.
  const first = fragments(1)
  t.ok(first.length >= 4, `${first.length} fragments`)
  const answers = []
  for (const [i, frame] of first.entries()) answers.push(await statusAt(nodes[i % 3], frame))
  t.same(answers, [...Array(first.length - 1).fill('partial'), 'accepted'], 'partial at every node, complete at the one its last fragment reached')

  // Chunk 2: its first fragment at node 1, which is then killed; the rest at the others.
  const second = fragments(2)
  t.equal(await statusAt(nodes[1], second[0]), 'partial')
  nodes[1].child.kill('SIGKILL')
  await exited(nodes[1].child)
  for (const [i, frame] of second.slice(1).entries()) t.equal(await statusAt(nodes[i % 2 === 0 ? 0 : 2], frame), i === second.length - 2 ? 'accepted' : 'partial')

  // Chunk 3: a gap longer than ttl_seconds after its first fragment; the next asks for the whole chunk again.
  const third = fragments(3)
  t.equal(await statusAt(nodes[0], third[0]), 'partial')
  const refused = await pollUntil(async () => {
    const answer = (await post({ base: nodes[2].base }, third[1])).frames[0] as { status: string, reason?: string, retry?: boolean }
    return answer.status === 'rejected' && answer
  }, { what: 'the fragment after the time limit to be refused', timeout: 20_000 })
  t.match(refused, { retry: true, reason: /^the earlier fragments of this chunk \(\d+ of \d+\) were dropped, older than 2 s, before the rest came; send the whole chunk again$/ })
  const again = []
  for (const [i, frame] of third.entries()) again.push(await statusAt(nodes[i % 2 === 0 ? 2 : 0], frame))
  t.equal(again.at(-1), 'accepted', 'sent again whole, it is stored')

  const stored = await withDatabase(url, async client => (await client.query<{ sequence: number, n: number }>(
    'select sequence::int, count(*)::int as n from traces where device = $1 group by sequence order by sequence', [device])).rows)
  t.same(stored, [{ sequence: 1, n: 1 }, { sequence: 2, n: 1 }, { sequence: 3, n: 1 }], 'each chunk stored once')
})
