// A full disk is an answer, not a crash: the state directory on a small tmpfs (as root), filled up
// while the three products run in one process. Writes of each product are answered 507 (JSON on the
// control and telemetry listeners, CBOR on the campaign app), reads go on, a background job's write
// fails without ending the process, health names the fault; once space returns, writes resume by
// themselves and everything acknowledged before is still there. A `berth telemetry serve` whose disk
// filled under ingest stops on SIGTERM within its deadlines.
import t from 'tap'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import devIdp from '../../plugins/dev-idp/index.js'
import ingest from '../../plugins/ingest/index.js'
import secrets from '../../plugins/secrets/index.js'
import tokens from '../../plugins/tokens/index.js'
import campaign from '../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../plugins/campaign/client.js'
import { encodeChunk } from '../../plugins/ingest/wire/encoder.js'
import { hashPassword } from '../../plugins/ingest/auth/passwords.js'
import { scriptedLogin, withDevIdp } from '../support/campaign.js'
import { testKernel } from '../support/kernel.js'
import { adminToken } from '../support/orchestration.js'
import { pollUntil } from '../support/poll.js'
import { fill, smallDisk } from '../support/disk.js'
import { boundUrls, spawnCliForTest } from '../support/cli.js'
import { tempDir } from '../support/tmp.js'

const DEVICE = 'd15c000000000001'
/** The server's deadline for each step of a stop, short here. */
const PLUGIN_TIMEOUT_MS = 4000
const KEY = 'full-disk-device-key-0123456789'
const basic = `Basic ${Buffer.from('admin:full disk admin').toString('base64')}`

let sequence = 0
/** POST `n` traces of 2 kB to the telemetry listener at `base`. */
async function postTraces (base: URL, n: number): Promise<Response> {
  const body = Buffer.concat(Array.from({ length: n }, () => encodeChunk({ device: DEVICE, sequence: sequence++, payload: { type: 'Trace', record: { uptime_ms: sequence, dropped: 0, data: Buffer.alloc(2000, 0x61) } } })))
  return await fetch(new URL('/ingest/chunks', base), { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-api-key': KEY }, body })
}

const mounted = smallDisk(t)
if (mounted instanceof Error) {
  if (process.env.CI !== undefined) t.fail(`a tmpfs is needed to fill a disk: ${mounted.message}`)
  else t.comment(`skipped: a tmpfs is needed to fill a disk (${mounted.message})`)
} else {
  t.test('a full disk: 507s and reads in every product, health says why, recovery by itself', async t => {
    const stateDir = join(mounted, 'state')
    mkdirSync(stateDir)
    const kernel = await testKernel(t, {
      plugins: [tokens, secrets, devIdp, ingest, campaign],
      config: {
        server: { state_dir: stateDir },
        ingest: { api_key: KEY, users: [{ name: 'admin', role: 'admin', password: hashPassword('full disk admin') }] },
        ...withDevIdp()
      }
    })
    const control = kernel.url('control')
    const telemetry = kernel.url('telemetry')
    const app = kernel.url('app')
    const admin = adminToken(kernel)
    const auth = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    const putSecret = async (name: string): Promise<Response> => await fetch(new URL(`/api/v1/secrets/${name}`, control), { method: 'PUT', headers: auth, body: JSON.stringify({ value: 'x'.repeat(2000) }) })
    const ingestChunks = async (n: number): Promise<Response> => await postTraces(telemetry, n)
    const user = kernel.service('campaign').devIdp?.users.find(u => u.role === 'staff')
    const cookie = (await scriptedLogin(app, user as { username: string, password: string })).cookie
    const feedback = async (resource: string): Promise<number | string> => await callServerFunction('record-feedback', { module_id: 'policy-chat', resource_id: resource, is_positive: true, is_active: true }, { baseUrl: app, headers: { cookie } })
      .then(() => 200, (err: unknown) => err instanceof ServerFunctionError ? `${err.status} ${err.message}` : String(err))

    // Before: everything is written and acknowledged.
    t.equal((await putSecret('before')).status, 201)
    t.equal((await ingestChunks(5)).status, 200)
    t.equal(await feedback('before'), 200)

    const filler = fill(mounted)
    // Writes until the store cannot grow: the first may still fit in pages LMDB holds already.
    const refused = await pollUntil(async () => {
      const response = await ingestChunks(50)
      return response.status === 507 && await response.json() as { error: string }
    }, { what: 'an ingest refused with 507', timeout: 20_000 })
    t.match(refused.error, /cannot write its state now/, 'telemetry: 507 with a JSON error')
    t.notMatch(refused.error, /commitError|Commit failed|object Promise/, 'saying why in words, not the store library\'s')
    const secret = await putSecret('during')
    t.same([secret.status, ((await secret.json()) as { error: string }).error.includes('cannot write')], [507, true], 'control: a secret write is 507')
    t.match(await feedback('during'), /^507 .*cannot write/, 'campaign: a server function that writes is 507, in CBOR')

    const health = await (await fetch(new URL('/api/v1/health', control))).json() as { status: string, checks: { storage: { status: string, reason: string } } }
    t.equal(health.status, 'degraded')
    t.match(health.checks.storage, { status: 'degraded', reason: /berth\.mdb/ }, 'health names the storage fault')
    t.equal((await fetch(new URL('/api/v1/health/live', control))).status, 200, 'alive for a supervisor')

    // Reads go on in each product.
    t.equal((await fetch(new URL('/api/v1/secrets', control), { headers: auth })).status, 200)
    const traces = await fetch(new URL(`/devices/${DEVICE}/traces`, telemetry), { headers: { authorization: basic } })
    t.equal(traces.status, 200)
    t.equal(((await traces.json()) as { items: unknown[] }).items.length, 5, 'what was acknowledged is there')
    t.same(await callServerFunction('check-auth', {}, { baseUrl: app, headers: { cookie } }).then(() => 'read'), 'read')
    // A background job's write fails without ending the process.
    await t.rejects(kernel.service('ingest').checkOffline(Date.now() + 10 * 86_400_000), { name: 'StorageFault' }, 'a background job\'s write is refused, the process goes on')

    rmSync(filler)
    await pollUntil(async () => (await (await fetch(new URL('/api/v1/health', control))).json() as { status: string }).status === 'ok', { what: 'the store to take writes again', timeout: 20_000 })
    t.equal((await putSecret('after')).status, 201, 'writes resume by themselves')
    t.equal((await putSecret('during')).status, 201, 'and what was refused can be written now')
    t.equal((await ingestChunks(5)).status, 200)
    t.equal(await feedback('after'), 200)
    const after = await (await fetch(new URL(`/devices/${DEVICE}/traces?limit=1000`, telemetry), { headers: { authorization: basic } })).json() as { items: unknown[] }
    t.ok(after.items.length >= 10, `the traces acknowledged before and after are there (${after.items.length})`)
  })

  t.test('a server whose disk filled under ingest stops on SIGTERM within its deadlines, its log JSON lines only', async t => {
    const disk = smallDisk(t)
    if (disk instanceof Error) throw disk
    const dir = tempDir(t)
    writeFileSync(join(dir, 'cluster.toml'), `[server]\nplugin_timeout_ms = ${PLUGIN_TIMEOUT_MS}\n[server.listeners.control]\nhost = "127.0.0.1"\nport = 0\n[ingest]\napi_key = "${KEY}"\n`)
    const server = spawnCliForTest(t, ['telemetry', 'serve'], { cwd: dir, env: { BERTH_STATE_DIR: join(disk, 'state') } })
    // Its ports are 0: the telemetry listener's is read back from the server's log line.
    const base = (await boundUrls(server, 'berth telemetry serve', 20_000)).telemetry
    await pollUntil(async () => (await postTraces(base, 1).catch(() => undefined))?.status === 200, { what: 'the server to take traces', timeout: 20_000 })
    fill(disk)
    await pollUntil(async () => (await postTraces(base, 50)).status === 507, { what: 'an ingest refused with 507', timeout: 20_000 })
    server.kill('SIGTERM')
    // Each step of the stop has the plugin deadline; the process ends within two of them whatever the store does.
    await pollUntil(() => server.exitCode !== null, { what: 'the server to exit after SIGTERM', timeout: 2 * PLUGIN_TIMEOUT_MS + 5000 })
    const stacks = server.output().split('\n').filter(line => /^\s+at /.test(line) || /^Error: /.test(line))
    t.same(stacks, [], 'no bare error or stack in its output: what the store library says is logged as JSON')
  })
}
