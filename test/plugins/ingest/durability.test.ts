// Acknowledged chunks survive `kill -9`: stream to a real `berth server` child, kill it mid-stream, restart
// it on the same state directory (and database, on PostgreSQL) and find every chunk it acknowledged; an
// oversize body is refused with 413.
import t, { type Test } from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { boundUrls, exited, spawnCli } from '../../support/cli.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, backendSettings, type IngestResponse } from './harness.js'
import { SAMPLES } from './samples.js'

const DEVICES = ['d0000000000000a1', 'd0000000000000a2', 'd0000000000000a3', 'd0000000000000a4']
const FRAMES_PER_REQUEST = 8
/** Requests answered before the server is killed (while others are still waiting for their answer). */
const KILL_AFTER = 40
const MAX_BODY = 16384
const FAULT = SAMPLES.find(s => s.type === 'FaultRecord') ?? SAMPLES[0]

const chunk = (device: string, sequence: number): Uint8Array => encodeChunk({ device, sequence, payload: FAULT })

/**
 * `berth server` with only the ingest plugin in `dir`, its telemetry listener on 127.0.0.1 port 0; the
 * telemetry URL it was bound to is read back from its log line. SIGKILLed at test end.
 */
async function startBerth (t: Test, dir: string): Promise<{ child: ReturnType<typeof spawnCli>, telemetry: string }> {
  const child = spawnCli(['server'], { cwd: dir, env: { BERTH_PLUGINS: 'ingest', BERTH_TELEMETRY_PORT: '0' } })
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited(child)
    }
  })
  const telemetry = (await boundUrls(child, `berth server in ${dir}`, 20_000)).telemetry.origin
  await pollUntil(async () => {
    if (child.exitCode !== null) throw new Error(`berth server exited: ${child.output()}`)
    return (await fetch(`${telemetry}/auth/mode`)).ok
  }, { timeout: 20_000, what: `berth server in ${dir}` })
  return { child, telemetry }
}

t.test('every chunk acknowledged before a kill -9 is there after the restart; an oversize body gets 413', async t => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0',
    '[server.listeners.telemetry]', 'host = "127.0.0.1"',
    '[ingest]', `api_key = "${API_KEY}"`, `max_body_bytes = ${MAX_BODY}`,
    ...Object.entries(await backendSettings(t)).map(([key, value]) => `${key} = ${JSON.stringify(value)}`)
  ].join('\n'))
  // Each start binds a port of its own, read back from it.
  let telemetry = ''
  const post = async (body: Uint8Array): Promise<Response> => await fetch(`${telemetry}/ingest/chunks`, {
    method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': API_KEY }, body
  })

  const first = await startBerth(t, dir)
  telemetry = first.telemetry
  const acknowledged = new Map<string, number[]>(DEVICES.map(d => [d, []]))
  let answered = 0
  let inFlight = 0
  let inFlightAtKill = 0
  const stream = async (device: string): Promise<void> => {
    for (let sequence = 1; ; sequence += FRAMES_PER_REQUEST) {
      const body = Buffer.concat(Array.from({ length: FRAMES_PER_REQUEST }, (_, i) => chunk(device, sequence + i)))
      inFlight++
      let answer: IngestResponse
      try {
        answer = await (await post(body)).json() as IngestResponse
      } catch (err) {
        if (err instanceof TypeError && err.message === 'fetch failed') return // the server is gone
        throw err
      } finally {
        inFlight--
      }
      for (const frame of answer.frames) if (frame.status === 'accepted') acknowledged.get(device)?.push(frame.sequence ?? -1)
      answered++
      if (inFlightAtKill === 0 && answered >= KILL_AFTER && inFlight > 0) {
        inFlightAtKill = inFlight
        first.child.kill('SIGKILL')
      }
    }
  }
  await Promise.all(DEVICES.map(stream))
  if (inFlightAtKill === 0) first.child.kill('SIGKILL') // the streams ended without the kill: fail below, do not hang
  t.equal(await exited(first.child), 'SIGKILL')
  t.ok(inFlightAtKill > 0, `${inFlightAtKill} request(s) were waiting for an answer when the server was killed`)
  const total = [...acknowledged.values()].reduce((n, list) => n + list.length, 0)
  t.ok(total >= KILL_AFTER * FRAMES_PER_REQUEST, `${total} chunks acknowledged as accepted before the kill`)

  telemetry = (await startBerth(t, dir)).telemetry
  const authorization = `Basic ${Buffer.from(`admin:${readFileSync(join(dir, '.berth', 'telemetry-admin-password'), 'utf8').trim()}`).toString('base64')}`
  for (const [device, sequences] of acknowledged) {
    const page = await (await fetch(`${telemetry}/devices/${device}/faults?limit=1000`, { headers: { authorization } })).json() as { items: Array<{ sequence: number }>, next_cursor: string | null }
    const stored = page.items.map(f => f.sequence)
    t.equal(page.next_cursor, null, `${device}: one page holds all its faults`)
    t.same(sequences.filter(s => !stored.includes(s)), [], `${device}: all ${sequences.length} acknowledged chunks are stored`)
    t.equal(new Set(stored).size, stored.length, `${device}: each of its ${stored.length} stored chunks once`)
  }

  const resent = [...acknowledged].flatMap(([device, sequences]) => sequences.map(s => chunk(device, s)))
  const statuses: string[] = []
  for (let at = 0; at < resent.length; at += 100) {
    const answer = await (await post(Buffer.concat(resent.slice(at, at + 100)))).json() as IngestResponse
    statuses.push(...answer.frames.map(f => f.status))
  }
  t.same(statuses, Array(total).fill('duplicate'), 'every acknowledged chunk sent again is a duplicate')

  const oversize = await post(Buffer.alloc(MAX_BODY + 1))
  t.same([oversize.status, await oversize.json()], [413, { error: 'request body is too large', code: 'BERTH_PAYLOAD_TOO_LARGE' }])
})
