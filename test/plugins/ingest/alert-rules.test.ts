// Alert rules: the state machine (held for a while before firing, resolved, a cooldown against
// flapping); and through the API with a webhook receiver on loopback: rules made by provisioners (not
// viewers) and deleted by admins, secrets never listed, bad rules refused; a metric rule across a group
// firing with a signed JSON webhook and a Slack-compatible one, resolving, and held back by its cooldown
// when it fires again; a crash-rate rule; a connectivity rule on four devices going offline (one
// notification naming them) and one coming
// back; and the history, newest first.
import t from 'tap'
import { createHmac } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { NEW_STATE, step, type AlertRecord } from '../../../plugins/ingest/alert-rules.js'
import type { ChunkPayload } from '../../../plugins/ingest/wire/payloads.js'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { pollUntil } from '../../support/poll.js'
import { telemetryServer, type TelemetryServer } from './harness.js'

const MIN = 60_000

t.test('a condition fires once it has held long enough, resolves, and a cooldown holds back a flapping one', async t => {
  let s = NEW_STATE
  const at = (held: boolean, now: number): ReturnType<typeof step> => { const r = step(s, held, now, 10 * MIN, 30 * MIN); s = r.state; return r }
  t.same([at(true, 0).transition, at(true, 9 * MIN).transition], [null, null], 'not yet: it must hold 10 minutes')
  t.match(at(true, 10 * MIN), { transition: 'firing', notify: true })
  t.match(at(true, 11 * MIN), { transition: null }, 'still firing: no second notification')
  t.match(at(false, 12 * MIN), { transition: 'resolved', notify: false })
  at(true, 13 * MIN)
  t.match(at(true, 23 * MIN), { transition: 'firing', notify: false }, 'firing again within the cooldown: recorded, not notified')
  at(false, 24 * MIN)
  at(true, 50 * MIN)
  t.match(at(true, 60 * MIN), { transition: 'firing', notify: true }, 'after the cooldown, notified again')
  t.match(at(false, 61 * MIN), { transition: 'resolved' })
  t.same(step(NEW_STATE, true, 0, 0, 0).transition, 'firing', 'with no wait, at once')
})

/** A webhook receiver on loopback keeping each POST's headers and body. */
async function receiver (t: { teardown: (fn: () => void) => void }): Promise<{ url: string, posts: Array<{ path: string, headers: IncomingHttpHeaders, body: string }> }> {
  const posts: Array<{ path: string, headers: IncomingHttpHeaders, body: string }> = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (piece: Buffer) => { body += piece.toString() })
    request.on('end', () => { posts.push({ path: request.url ?? '', headers: request.headers, body }); response.end('ok') })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts }
}

const sequences = new Map<string, number>()
async function send (server: TelemetryServer, device: string, payload: ChunkPayload): Promise<void> {
  const sequence = (sequences.get(device) ?? 0) + 1
  sequences.set(device, sequence)
  const { json } = await server.ingest(encodeChunk({ device, sequence, payload }))
  if (json.accepted !== 1) throw new Error(JSON.stringify(json))
}
const battery = (mv: number): ChunkPayload => ({ type: 'Metrics', record: { uptime_ms: 1000, entries: [{ key: 'battery_mv', kind: 'gauge', value: mv, uptime_ms: 1000 }] } })
const FAULT: ChunkPayload = { type: 'FaultRecord', record: { pc: 0x08000a01, lr: 0, sp: 0, psr: 0, cfsr: 1 << 17, hfsr: 0, mmfar: 0, bfar: 0, uptime_ms: 1 } }

t.test('rules through the API: metric, crash rate and connectivity, delivered, signed, with history', async t => {
  // The receiver is on loopback, which a destination reaches only when the operator allows it.
  const server = await telemetryServer(t, {}, undefined, { outbound_allow: ['127.0.0.1'] })
  const hooks = await receiver(t)
  const SECRET = 'a-webhook-secret-of-the-receiver'
  const FIELD = ['fa00000000000001', 'fa00000000000002', 'fa00000000000003', 'fa00000000000004']
  t.equal((await server.api('POST', '/groups', 'provisioner', { name: 'field' })).status, 201)
  for (const id of FIELD) t.equal((await server.api('POST', '/devices/register', 'provisioner', { id, group: 'field' })).status, 201)

  const metricRule = {
    name: 'batteries low in the field',
    condition: { kind: 'metric', key: 'battery_mv', op: '<', value: 3300, group: 'field', min_percent: 50, for_minutes: 0 },
    cooldown_minutes: 60,
    destinations: [{ url: `${hooks.url}/json`, secret: SECRET }, { url: `${hooks.url}/slack`, format: 'slack' }]
  }
  t.equal((await server.api('POST', '/alerts/rules', 'viewer', metricRule)).status, 403, 'a viewer may not make rules')
  const created = await server.api('POST', '/alerts/rules', 'provisioner', metricRule)
  t.equal(created.status, 201)
  const rule = await created.json() as { id: string, destinations: Array<Record<string, unknown>> }
  t.same(rule.destinations, [{ url: `${hooks.url}/json`, format: 'json', signed: true }, { url: `${hooks.url}/slack`, format: 'slack', signed: false }], 'the secret is never shown')
  t.notMatch(await (await server.api('GET', '/alerts/rules', 'viewer')).text(), SECRET, 'nor listed')
  for (const [body, what] of [
    [{ name: 'x', condition: { kind: 'metric', op: '<', value: 1 } }, 'a metric rule without its key'],
    [{ name: 'x', condition: { kind: 'crash_rate' } }, 'a crash-rate rule without per_hour'],
    [{ name: 'x', condition: { kind: 'connectivity', group: 'nowhere' } }, 'an unknown group'],
    [{ name: 'x', condition: { kind: 'connectivity' }, destinations: [{ url: 'ftp://127.0.0.1/' }] }, 'a destination that is not HTTP'],
    [{ name: 'x', condition: { kind: 'connectivity' }, destinations: [{ url: `${hooks.url}/`, secret: 'short' }] }, 'a secret under 16 characters']
  ] as const) {
    const response = await server.api('POST', '/alerts/rules', 'provisioner', body)
    t.equal(response.status, 400, `refused: ${what}`)
    t.type((await response.json() as { error?: unknown }).error, 'string')
  }

  // Two of four field devices under 3300 mV: 50%, the rule fires.
  for (const [i, mv] of [3200, 3250, 3500, 3600].entries()) await send(server, FIELD[i], battery(mv))
  const [fired] = await server.service.evaluateAlerts()
  t.match(fired, { kind: 'firing', rule: rule.id, notified: true, summary: /^battery_mv < 3300 on 2 of 4 devices of group field \(50\.0%/ })
  const json = await pollUntil(() => hooks.posts.find(p => p.path === '/json'), { what: 'the JSON webhook' })
  const expected = createHmac('sha256', SECRET).update(`${json.headers['x-berth-timestamp'] as string}.${json.body}`).digest('hex')
  t.equal(json.headers['x-berth-signature'], `sha256=${expected}`, 'signed with HMAC-SHA256 of the timestamp and the body')
  t.match(JSON.parse(json.body), { alert: 'rule', kind: 'firing', rule_name: 'batteries low in the field' })
  const slack = await pollUntil(() => hooks.posts.find(p => p.path === '/slack'), { what: 'the Slack webhook' })
  t.match(JSON.parse(slack.body), { text: /^:rotating_light: \*batteries low in the field\* firing: battery_mv < 3300/ }, 'Slack-compatible text')
  t.same(await server.service.evaluateAlerts(), [], 'still firing: nothing new')
  await send(server, FIELD[0], battery(3700))
  t.match(await server.service.evaluateAlerts(), [{ kind: 'resolved', notified: false }], 'one of four low: resolved')
  await send(server, FIELD[0], battery(3100))
  t.match(await server.service.evaluateAlerts(), [{ kind: 'firing', notified: false }], 'firing again within the cooldown: recorded, not delivered')
  t.equal(hooks.posts.length, 2, 'two deliveries in all')

  // Crash rate: two faults in the hour.
  const crash = await (await server.api('POST', '/alerts/rules', 'provisioner', { name: 'crashing', condition: { kind: 'crash_rate', per_hour: 2 }, destinations: [{ url: `${hooks.url}/crash` }] })).json() as { id: string }
  await send(server, FIELD[2], FAULT)
  t.same((await server.service.evaluateAlerts()).filter(r => r.rule === crash.id), [], 'one fault: under the rate')
  await send(server, FIELD[3], FAULT)
  t.match((await server.service.evaluateAlerts()).filter(r => r.rule === crash.id), [{ kind: 'firing', summary: '2 faults in the last hour (the rule: ≥ 2)' }])

  // Connectivity: offline, back online, offline again within the cooldown.
  const link = await (await server.api('POST', '/alerts/rules', 'provisioner', { name: 'field link', condition: { kind: 'connectivity', group: 'field' }, cooldown_minutes: 30, destinations: [{ url: `${hooks.url}/link` }] })).json() as { id: string }
  await server.service.checkOffline(Date.now() + 2 * 3_600_000)
  const offline = await pollUntil(async () => {
    const { alerts } = await (await server.api('GET', `/alerts/history?rule=${link.id}`, 'viewer')).json() as { alerts: AlertRecord[] }
    return alerts.length === 4 ? alerts : undefined
  }, { what: 'four devices offline' })
  t.ok(offline.every(a => a.kind === 'offline' && a.notified), 'each device going offline, recorded and notified')
  const grouped = await pollUntil(() => hooks.posts.find(p => p.path === '/link'), { what: 'the grouped notification' })
  t.match(JSON.parse(grouped.body), { alert: 'rule', rule: link.id, kind: 'offline', device: null, count: 4, summary: /^4 devices went offline: [0-9a-f]{16}, / }, 'as one notification of the four')
  t.same((JSON.parse(grouped.body) as { devices: string[] }).devices.sort(), offline.map(a => a.device).sort(), 'naming each')
  await send(server, FIELD[1], battery(3400))
  const latest = async (): Promise<AlertRecord | undefined> => {
    const { alerts } = await (await server.api('GET', `/alerts/history?rule=${link.id}&limit=1`, 'viewer')).json() as { alerts: AlertRecord[] }
    return alerts[0]
  }
  await pollUntil(async () => (await latest())?.kind === 'online', { what: 'back online' })
  t.equal(hooks.posts.filter(p => p.path === '/link').length, 1, 'coming back within the cooldown: recorded, not delivered')
  const { entries } = await (await server.api('GET', `/devices/${FIELD[1]}/timeline`, 'viewer')).json() as { entries: Array<{ kind: string, summary: string }> }
  t.match(entries.filter(e => e.kind === 'alert').map(e => e.summary), [/^alert field link: device .* went offline/, /^alert field link: device .* is back online$/], 'the device\'s alerts in its timeline, in order')

  const page = await (await server.api('GET', '/alerts/history?limit=3', 'viewer')).json() as { alerts: AlertRecord[], next_cursor: string }
  const rest = await (await server.api('GET', `/alerts/history?cursor=${page.next_cursor}`, 'viewer')).json() as { alerts: AlertRecord[] }
  const all = [...page.alerts, ...rest.alerts]
  t.ok(all.every((a, i) => i === 0 || a.at <= all[i - 1].at), 'the history newest first, by pages')
  t.equal(all.length, 3 + 1 + 4 + 1, 'every record: the metric rule\'s three, the crash rule\'s one, four offline, one online')
  t.equal((await server.api('DELETE', `/alerts/rules/${rule.id}`, 'provisioner')).status, 403, 'a provisioner may not delete a rule')
  t.equal((await server.api('DELETE', `/alerts/rules/${rule.id}`, 'admin')).status, 204)
  t.equal((await server.api('DELETE', `/alerts/rules/${rule.id}`, 'admin')).status, 404)
  t.equal((await server.api('PUT', `/alerts/rules/${crash.id}`, 'provisioner', { name: 'crashing often', condition: { kind: 'crash_rate', per_hour: 10 } })).status, 200)
  t.equal((await server.api('GET', '/alerts/history', null)).status, 401)
})

t.test('a destination may not make the server call its own or internal addresses', async t => {
  const server = await telemetryServer(t)
  const hooks = await receiver(t)
  const rule = (url: string): object => ({ name: 'probe', condition: { kind: 'connectivity' }, destinations: [{ url }] })
  for (const [url, reason] of [
    [`${hooks.url}/x`, /^destinations\[0\]\.url 127\.0\.0\.1 is a loopback, private, link-local or reserved address/],
    [`${server.kernel.url('control').origin}/api/v1/stop`, /is a loopback/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a loopback, private, link-local or reserved address/],
    ['http://10.0.0.1/hook', /10\.0\.0\.1 is a loopback/],
    [`http://localhost:${new URL(hooks.url).port}/x`, /^destinations\[0\]\.url localhost resolves to/]
  ] as const) {
    const response = await server.api('POST', '/alerts/rules', 'provisioner', rule(url))
    t.match([response.status, (await response.json() as { error: string }).error], [400, reason], `refused when saved: ${url}`)
  }
  t.same(hooks.posts, [], 'nothing was sent')
})
