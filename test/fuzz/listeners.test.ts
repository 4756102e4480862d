// Hostile input against all three products in one kernel: a few thousand requests drawn from a seed
// (BERTH_FUZZ_SEED replays a run; BERTH_FUZZ_RUNS sets the requests per listener) from each
// listener's route table, with mutated parameters, queries, methods, headers and bodies, anonymous
// and as every role. No answer may be a 5xx; every error is {"error": string}, CBOR under the
// campaign's /api and JSON elsewhere; afterwards the server is healthy and serves normal requests.
// The container engine is absent on purpose (its socket path leads nowhere): what needs it answers
// 503 (or 502 from db create) "container engine unavailable", the one 5xx allowed, and everything
// before the engine (tokens, roles, validation) is exercised without the time a real engine adds.
import t from 'tap'
import fc from 'fast-check'
import { createHmac, randomInt } from 'node:crypto'
import { join } from 'node:path'
import { Agent } from 'undici'
import type { Kernel } from '../../kernel/index.js'
import { pathOf } from '../../kernel/runtime-api.js'
import devIdp from '../../plugins/dev-idp/index.js'
import backup from '../../plugins/backup/index.js'
import campaign from '../../plugins/campaign/index.js'
import { encodeCbor } from '../../plugins/campaign/cbor.js'
import type { ServerFunction } from '../../plugins/campaign/functions.js'
import cluster from '../../plugins/cluster/index.js'
import nodes from '../../plugins/nodes/index.js'
import databases from '../../plugins/databases/index.js'
import ingest from '../../plugins/ingest/index.js'
import { hashPassword } from '../../plugins/ingest/auth/passwords.js'
import { encodeChunk } from '../../plugins/ingest/wire/encoder.js'
import notifications from '../../plugins/notifications/index.js'
import reconciler from '../../plugins/reconciler/index.js'
import secrets from '../../plugins/secrets/index.js'
import symbolication from '../../plugins/symbolication/index.js'
import tokens from '../../plugins/tokens/index.js'
import webhooks from '../../plugins/webhooks/index.js'
import { scriptedLogin, withDevIdp } from '../support/campaign.js'
import { bodies, describe, encodeSegment, errorBodyProblem, fromSchema, hostileText, hostileValue, requests, send, type Drawn, type FuzzAnswer, type FuzzRequest, type ListenerModel } from '../support/fuzz.js'
import { adminToken, api, reconcilerSection, startKernel, testInstance, tokenFor } from '../support/orchestration.js'
import { closingPort } from '../support/net.js'
import { tempDir } from '../support/tmp.js'
import { DEVICE, SAMPLES } from '../plugins/ingest/samples.js'

/** A whole number from the environment, or `fallback` when the variable is not set. */
function fromEnv (name: string, fallback: number): number {
  const text = process.env[name]
  if (text === undefined) return fallback
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(text)}`)
  return Number(text)
}

const SEED = fromEnv('BERTH_FUZZ_SEED', randomInt(2 ** 31))
const DEFAULT_RUNS = 1000
const RUNS = fromEnv('BERTH_FUZZ_RUNS', DEFAULT_RUNS)
/** Sending stops after this long whatever the count (each listener's requests are sent one at a time). */
const SEND_BUDGET_MS = 45_000
const LISTENERS = ['control', 'telemetry', 'app'] as const
type ListenerName = typeof LISTENERS[number]

const API_KEY = 'fuzz-device-key-0123456789'
const HOOK_SECRET = 'a webhook secret of 16 characters or more'
const TELEMETRY_ROLES = ['admin', 'provisioner', 'viewer'] as const
const password = (role: string): string => `fuzz password of ${role}`
const basic = (role: string): string => `Basic ${Buffer.from(`${role}:${password(role)}`).toString('base64')}`
/**
 * The campaign's login routes, its unsubscribe page and its public pages (an event's, a form's and its
 * embed, the RSVP cancel and consent confirmation links) answer HTML pages, for the browser that
 * navigates there.
 */
const HTML_PAGES = ['/auth', '/auth/callback', '/unsubscribe', '/rsvp/cancel', '/consent/confirm']
const HTML_PAGE_PATTERNS = [/^\/e\/[^/]*$/, /^\/f\/[^/]*(\/embed)?$/]
const isHtmlPage = (path: string): boolean => HTML_PAGES.includes(path) || HTML_PAGE_PATTERNS.some(pattern => pattern.test(path))

async function fuzzKernel (): Promise<Kernel> {
  const cwd = tempDir(t)
  return await startKernel(t, {
    plugins: [tokens, secrets, reconciler, cluster, nodes, webhooks, backup, databases, notifications, devIdp, ingest, symbolication, campaign],
    cwd,
    config: {
      reconciler: reconcilerSection(testInstance(), { docker_socket: join(cwd, 'no-engine.sock') }),
      backup: { targets: [{ type: 'local', path: join(cwd, 'backups') }] },
      // A peer that closes every connection: each test alert fails at once.
      notifications: { retries: 0, webhooks: [{ url: `http://127.0.0.1:${await closingPort(t)}/hook`, secret: HOOK_SECRET }] },
      ingest: { api_key: API_KEY, users: TELEMETRY_ROLES.map(role => ({ name: role, role, password: hashPassword(password(role)) })) },
      // Sending is on, towards servers that close every connection: a send fails per recipient, it is not off (503).
      ...withDevIdp({ smtp_url: `smtp://127.0.0.1:${await closingPort(t)}`, mail_from: 'fuzz@campaign.test', sms_url: `http://127.0.0.1:${await closingPort(t)}/sms` })
    }
  })
}

/** Each listener's routes, callers, known parameter values and bodies; some records made first so the values exist. */
async function models (kernel: Kernel): Promise<Record<ListenerName, ListenerModel>> {
  const admin = adminToken(kernel)
  const secret = await api(kernel, 'PUT', '/api/v1/secrets/FUZZ_SECRET', { token: admin, body: { value: 'v' } })
  const hook = await api<{ id: string }>(kernel, 'POST', '/api/v1/webhooks', { token: admin, body: { repo: 'fuzz/repo', service_name: 'web', branch: 'main', secret: HOOK_SECRET } })
  if (secret.status !== 201 || hook.status !== 201) throw new Error(`seeding the control plane: ${secret.text} ${hook.text}`)
  const telemetry = kernel.url('telemetry')
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const answer = await fetch(new URL(path, telemetry), { method: 'POST', headers: { authorization: basic('admin'), 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (answer.status !== 201) throw new Error(`seeding ${path}: ${answer.status} ${await answer.text()}`)
    return await answer.json()
  }
  await post('/groups', { name: 'fuzz-group' })
  await post('/devices/register', { id: DEVICE, group: 'fuzz-group' })
  const target = await post('/ota/targets', { software_type: 'main', version: '1.0.0', group: 'fuzz-group' }) as { id: string }
  const frames = SAMPLES.map((payload, sequence) => Buffer.from(encodeChunk({ device: DEVICE, sequence, payload })))
  const chunks = await fetch(new URL('/ingest/chunks', telemetry), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body: Buffer.concat(frames) })
  if (chunks.status !== 200) throw new Error(`seeding chunks: ${chunks.status}`)

  const { registry, devIdp } = kernel.service('campaign')
  const sessions: Record<string, Record<string, string>> = {}
  for (const user of devIdp?.users ?? []) sessions[user.role] = { cookie: (await scriptedLogin(kernel.url('app'), user)).cookie }

  // Real frames with bytes flipped, cut short or repeated, from the device: the decoders see near misses.
  const frameUploads = fc.tuple(fc.constantFrom(...frames), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { maxLength: 3 }), fc.nat(), fc.boolean())
    .map(([frame, flips, cut, twice]): Drawn => {
      const bytes = Buffer.from(frame)
      for (const [at, mask] of flips) bytes[at % bytes.length] ^= mask
      const body = bytes.subarray(0, cut % 4 === 0 ? cut % bytes.length : bytes.length)
      return { method: 'POST', path: '/ingest/chunks', body: { type: 'application/octet-stream', body: twice ? Buffer.concat([body, body]) : body }, as: 'device' }
    })
  // The smallest ARM ELF the upload takes (a header alone), labelled with hostile names.
  const elf = Buffer.alloc(52)
  elf.writeUInt32BE(0x7f454c46, 0)
  elf.set([1, 1, 1], 4)
  elf.writeUInt16LE(40, 18)
  const elfUploads = fc.tuple(hostileText, hostileText, fc.constantFrom('device', 'provisioner')).map(([type, version, as]): Drawn =>
    ({ method: 'POST', path: `/ingest/elf?software_type=${encodeSegment(type)}&software_version=${encodeSegment(version)}`, body: { type: 'application/octet-stream', body: elf }, as }))
  // Server functions with arguments of their own schema, hostile at the leaves.
  // Mostly as admin, who may call every one; otherwise as anyone.
  const functionCalls = fc.tuple(fc.constantFrom(...registry.names), fc.constantFrom('admin', 'admin', undefined)).chain(([name, as]) => fromSchema((registry.get(name) as ServerFunction).args)
    .map((args): Drawn => ({ method: 'POST', path: `/api/${name}`, body: { type: 'application/cbor', body: encodeCbor(args) }, as })))
  // What operators send: tokens, secrets, service entries, canaries, scales, webhooks and signed
  // pushes, restores and databases, with hostile fields among the good ones.
  const json = (method: string, path: string, as: string) => (value: unknown): Drawn => ({ method, path, as, body: { type: 'application/json', body: Buffer.from(JSON.stringify(value)) } })
  const or = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<T | unknown> => fc.oneof({ weight: 2, arbitrary: good }, hostileValue)
  const entry = fc.record({
    name: or(fc.constantFrom('web', 'api')), project: or(fc.constant('shop')), image: or(fc.constantFrom('busybox:1', 'registry.test/app@sha256:00')),
    replicas: or(fc.nat(5)), port: or(fc.integer({ min: 1, max: 65535 })), env: or(fc.dictionary(fc.constantFrom('A', 'B_1', 'S'), fc.constantFrom('1', '${secrets.FUZZ_SECRET}', '${secrets.NOPE}'))),
    volumes: or(fc.array(fc.constantFrom('data:/data', '/etc:/host', '../x:/y'))), mounts: or(fc.array(fc.constantFrom('./conf:/conf', '../../etc:/etc'))),
    domain: or(fc.constant('web.test')), health: or(fc.constant('/health')), depends_on: or(fc.array(fc.constantFrom('web', 'api', 'db'))),
    placement: or(fc.record({ node: or(fc.constant('node-a')) })), resources: or(fc.record({ memory: or(fc.constant('64M')), cpu: or(fc.constant(0.5)) }))
  }, { requiredKeys: [] })
  const push = fc.tuple(fc.constantFrom('github', 'gitea', 'gitlab', 'git'), or(fc.constant('refs/heads/main')), or(fc.uint8Array({ minLength: 20, maxLength: 20 }).map(bytes => Buffer.from(bytes).toString('hex'))), fc.boolean())
    .map(([provider, ref, sha, signed]): Drawn => {
      const body = Buffer.from(JSON.stringify(provider === 'git' ? { repo: 'fuzz/repo', ref, sha } : provider === 'gitlab' ? { project: { path_with_namespace: 'fuzz/repo' }, ref, checkout_sha: sha } : { repository: { full_name: 'fuzz/repo' }, ref, after: sha }))
      const mac = createHmac('sha256', HOOK_SECRET).update(body).digest('hex')
      const signature: Record<string, string> = provider === 'gitlab' ? { 'x-gitlab-token': signed ? HOOK_SECRET : 'wrong' } : { 'x-hub-signature-256': `sha256=${signed ? mac : mac.replace(/^./, '0')}` }
      return { method: 'POST', path: `/api/v1/webhooks/${provider}`, as: 'anonymous', body: { type: 'application/json', body }, headers: signature }
    })
  const operatorRequests: fc.Arbitrary<Drawn> = fc.oneof(
    fc.record({ name: or(fc.constantFrom('ci', 'a.b-c_d')), role: or(fc.constantFrom('viewer', 'deployer', 'admin', 'agent')) }).map(json('POST', '/api/v1/tokens', 'admin')),
    fc.tuple(or(fc.constantFrom('DB_PASSWORD', 'X')), or(fc.string())).map(([name, value]) => json('PUT', `/api/v1/secrets/${encodeSegment(typeof name === 'string' ? name : JSON.stringify(name))}`, 'admin')({ value })),
    fc.record({ services: or(fc.array(entry, { maxLength: 3 })), canary: or(fc.record({ weight: or(fc.integer({ min: 1, max: 99 })) })) }, { requiredKeys: [] }).map(json('POST', '/api/v1/deploy', 'deployer')),
    fc.record({ replicas: or(fc.nat(5)) }).map(json('POST', '/api/v1/services/web/scale', 'deployer')),
    fc.record({ repo: or(fc.constant('fuzz/other')), service_name: or(fc.constantFrom('web', '__infra__')), branch: or(fc.constant('main')), secret: or(fc.constant(HOOK_SECRET)) }).map(json('POST', '/api/v1/webhooks', 'deployer')),
    push,
    fc.record({ name: or(fc.constantFrom('web', 'shop_data')), snapshot: or(fc.constant('20261123T030000000Z')), target: or(fc.constant('local')) }, { requiredKeys: [] }).map(json('POST', '/api/v1/backups/restore', 'admin')),
    fc.record({ engine: or(fc.constantFrom('postgres', 'redis')), name: or(fc.constantFrom('db', 'cache')), image: or(fc.constant('postgres:16')) }, { requiredKeys: [] }).map(json('POST', '/api/v1/databases', 'admin'))
  )
  const controlFields = ['name', 'role', 'value', 'services', 'replicas', 'canary', 'weight', 'engine', 'image', 'snapshot', 'target', 'repo', 'service_name', 'branch', 'secret', 'ref', 'after', 'project']
  const telemetryFields = ['id', 'name', 'group', 'encrypted', 'description', 'software_type', 'version', 'build_id', 'url']
  return {
    control: {
      routes: kernel.routes('control'),
      samples: { name: ['web', 'FUZZ_SECRET', 'shop'], id: [hook.body.id, 'node-a'], provider: ['git', 'github', 'gitea', 'gitlab'] },
      credentials: {
        anonymous: {},
        viewer: { authorization: `Bearer ${await tokenFor(kernel, 'viewer')}` },
        deployer: { authorization: `Bearer ${await tokenFor(kernel, 'deployer')}` },
        admin: { authorization: `Bearer ${admin}` },
        agent: { authorization: `Bearer ${await tokenFor(kernel, 'agent')}` }
      },
      headers: ['x-hub-signature-256', 'x-gitlab-token', 'x-gitea-signature', 'sec-websocket-key'],
      body: bodies(controlFields),
      typical: operatorRequests
    },
    telemetry: {
      routes: kernel.routes('telemetry'),
      samples: { id: [DEVICE, target.id], name: ['fuzz-group', 'index.html'] },
      credentials: { anonymous: {}, device: { 'x-api-key': API_KEY }, ...Object.fromEntries(TELEMETRY_ROLES.map(role => [role, { authorization: basic(role) }])) },
      headers: ['last-event-id', 'access-control-request-method'],
      body: bodies(telemetryFields),
      typical: fc.oneof(frameUploads, elfUploads)
    },
    app: {
      // /logout would end the sessions the rest of the run calls with; the login tests cover it.
      routes: kernel.routes('app').filter(route => route.url !== '/logout'),
      samples: { name: registry.names },
      credentials: { anonymous: {}, ...sessions },
      headers: [],
      body: bodies(['text', 'query', 'id', 'name', 'limit', 'cursor']),
      typical: functionCalls
    }
  }
}

/** Why an answer is wrong, or undefined. */
function problemOf (listener: ListenerName, fuzz: FuzzRequest, answer: FuzzAnswer): string | undefined {
  const text = answer.body.toString('utf8', 0, 300)
  // The one cause of a 5xx allowed: the engine this kernel runs without (a HEAD answer has no body to tell).
  const engineDown = listener === 'control' && (answer.status === 502 || answer.status === 503) && (text.includes('container engine unavailable') || fuzz.method === 'HEAD')
  if (answer.status >= 500 && !engineDown) return `${answer.status}: ${text}`
  if (answer.status < 400 || fuzz.method === 'HEAD') return undefined
  const path = pathOf(fuzz.path)
  if (listener === 'app' && (path === '/api' || path.startsWith('/api/'))) return errorBodyProblem(answer, 'cbor')
  if (listener === 'app' && isHtmlPage(path) && answer.type.startsWith('text/html')) return undefined
  return errorBodyProblem(answer, 'json')
}

t.test(`hostile requests on every listener: no 5xx, errors in their format, healthy after (seed ${SEED})`, async t => {
  const kernel = await fuzzKernel()
  const byListener = await models(kernel)
  const problems: string[] = []
  const started = Date.now()
  await Promise.all(LISTENERS.map(async (listener, index) => {
    const dispatcher = new Agent({ connections: 1 })
    t.teardown(async () => { await dispatcher.close() })
    const drawn = fc.sample(requests(byListener[listener]), { seed: SEED + index, numRuns: RUNS })
    const statuses = new Map<number, number>()
    let sent = 0
    for (const [n, fuzz] of drawn.entries()) {
      if (Date.now() - started > SEND_BUDGET_MS) break
      sent++
      let problem: string | undefined
      try {
        const answer = await send(dispatcher, kernel.url(listener), fuzz)
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
        problem = problemOf(listener, fuzz, answer)
      } catch (err) {
        problem = `no answer: ${(err as Error).message}`
      }
      if (problem !== undefined) problems.push(`${listener} #${n}: ${describe(fuzz)}\n    → ${problem}`)
    }
    t.comment(`${listener}: ${sent} of ${drawn.length} requests sent, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`)
  }))
  t.comment(`in ${Date.now() - started} ms`)
  const replay = `BERTH_FUZZ_SEED=${SEED}${RUNS === DEFAULT_RUNS ? '' : ` BERTH_FUZZ_RUNS=${RUNS}`} npx tap test/fuzz/listeners.test.ts`
  t.same(problems.slice(0, 20), [], `every answer is right; ${problems.length} are not (the first 20 shown; replay: ${replay})`)

  const health = await api<{ status: string, plugins: Record<string, { state: string }> }>(kernel, 'GET', '/api/v1/health')
  // degraded, not ok: the container engine is left out on purpose, and health says so.
  t.same([health.status, health.body.status, Object.values(health.body.plugins).every(p => p.state === 'running')], [200, 'degraded', true], 'healthy afterwards: every plugin runs')
  t.equal((await api(kernel, 'GET', '/api/v1/secrets', { token: adminToken(kernel) })).status, 200, 'the control plane serves')
  const devices = await fetch(new URL('/devices', kernel.url('telemetry')), { headers: { authorization: basic('viewer') } })
  t.equal(devices.status, 200, 'the telemetry API serves')
  const session = (await scriptedLogin(kernel.url('app'), (kernel.service('campaign').devIdp?.users ?? [])[0])).cookie
  const who = await fetch(new URL('/api/check-auth', kernel.url('app')), { method: 'POST', headers: { cookie: session, 'content-type': 'application/cbor' }, body: encodeCbor({}) })
  t.equal(who.status, 200, 'the campaign app serves')
})
