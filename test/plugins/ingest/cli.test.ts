// `berth telemetry …` against a real server: serve (honouring -c and -s from another folder), report,
// faults and metrics (tables and --json), hash-password, and the one-line failures.
import t from 'tap'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { verifyPassword } from '../../../plugins/ingest/auth/passwords.js'
import { boundUrls, CLI, exited, runCli as runBerth, spawnCli } from '../../support/cli.js'
import { pollUntil } from '../../support/poll.js'
import { tempDir } from '../../support/tmp.js'
import { API_KEY, backendSettings, onPostgres } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

t.test('serve (from another folder, with -c and -s), then report, faults and metrics through the API', async t => {
  const home = tempDir(t)
  // Every command runs elsewhere: the configuration file and state directory come from -c and -s only.
  const dir = tempDir(t)
  const stateDir = join(home, 'state')
  writeFileSync(join(home, 'cluster.toml'), `[server.listeners.control]\nhost = "127.0.0.1"\nport = 0\n[server.listeners.telemetry]\nhost = "127.0.0.1"\nport = 0\n[ingest]\napi_key = "${API_KEY}"\n`)
  const { database_url: databaseUrl } = await backendSettings(t)
  const database = typeof databaseUrl === 'string' ? { INGEST_DATABASE_URL: databaseUrl } : {}
  const globals = ['-c', join(home, 'cluster.toml'), '-s', stateDir]
  const runCli = async (args: string[], options: Parameters<typeof runBerth>[1]): ReturnType<typeof runBerth> => await runBerth([...globals, ...args], options)
  const server = spawnCli([...globals, 'telemetry', 'serve'], { cwd: dir, env: { BERTH_TELEMETRY_PORT: '0', ...database } })
  t.teardown(() => { server.kill('SIGKILL') })
  // Its ports are 0: read back from its log line; the commands are given the telemetry URL.
  const urls = await boundUrls(server, 'berth telemetry serve', 20_000)
  const telemetry = urls.telemetry.origin
  const env = { BERTH_TELEMETRY_URL: telemetry, ...database }
  const health = await pollUntil(async () => {
    const response = await fetch(new URL('/api/v1/health', urls.control))
    return response.ok && await response.json() as { plugins: Record<string, unknown> }
  }, { what: 'berth telemetry serve to answer', timeout: 20_000 })
  t.same(Object.keys(health.plugins), ['ingest', 'symbolication'], 'only the telemetry plugins run')
  t.ok(existsSync(join(stateDir, 'telemetry-admin-password')), 'in the state directory -s names')
  t.notOk(existsSync(join(dir, '.berth')), 'not in the folder it was started from')
  t.match(health.plugins.ingest, { state: 'running', details: { codecs: 'wasm', storage: onPostgres() ? 'postgres' : 'lmdb' } }, 'health says the WASM codecs decode, and where the telemetry is kept')

  const body = Buffer.concat([SAMPLES[0], SAMPLES[2], SAMPLES[3]].map((payload, sequence) => encodeChunk({ device: DEVICE, sequence, payload })))
  const posted = await fetch(`${telemetry}/ingest/chunks`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body })
  t.match(await posted.json(), { accepted: 3 })

  const report = await runCli(['telemetry', 'report'], { cwd: dir, env })
  t.equal(report.code, 0, report.stderr)
  t.match(report.stdout, /^1 device\(s\): 1 online, 0 offline\nDEVICE +NAME +GROUP +SOFTWARE +LAST SEEN +STATE\n00112233aabbccdd +00112233aabbccdd +- +1\.4\.2 +\d{4}-\d\d-\d\dT[\d:]+Z +online\n$/)
  const json = await runCli(['telemetry', 'report', '--json'], { cwd: dir, env })
  t.match(JSON.parse(json.stdout), { devices: 1, online: 1, offline: 0, fleet: [{ id: DEVICE, serial: 'SN-0042' }] })

  const faults = await pollUntil(async () => {
    const listed = await runCli(['telemetry', 'faults', DEVICE], { cwd: dir, env })
    return listed.stdout.includes('unsymbolicated') && listed
  }, { what: 'the fault to be looked at by symbolication' })
  t.match(faults.stdout, /^RECEIVED +PC +LR +CFSR +SYMBOL\n\S+ +0x0800abcd +0x08000123 +0x00008200 +unsymbolicated: no ELF uploaded for build a1b2c3d4e5f60718\n$/)
  const metrics = await runCli(['telemetry', 'metrics', DEVICE, '--kind', 'gauge', '--json'], { cwd: dir, env })
  t.match(JSON.parse(metrics.stdout), [{ key: 'battery_mv', kind: 'gauge', value: 3712 }])

  const badId = await runCli(['telemetry', 'faults', 'not-a-device'], { cwd: dir, env })
  t.same([badId.code, badId.stderr], [2, 'berth: device id must be 16 lowercase hex characters, got "not-a-device"\n'])
  const unknown = await runCli(['telemetry', 'faults', 'ffffffffffffffff'], { cwd: dir, env })
  t.same([unknown.code, unknown.stderr], [1, 'berth: device ffffffffffffffff does not exist\n'])
  const badKind = await runCli(['telemetry', 'metrics', DEVICE, '--kind', 'nope'], { cwd: dir, env })
  t.same([badKind.code, badKind.stderr], [1, 'berth: kind must be gauge, increment or observe, got "nope"\n'])
  const wrongUser = await runCli(['telemetry', 'report'], { cwd: dir, env: { ...env, BERTH_TELEMETRY_USER: 'admin', BERTH_TELEMETRY_PASSWORD: 'wrong' } })
  t.same([wrongUser.code, wrongUser.stderr], [1, 'berth: valid Basic credentials are required (credentials from BERTH_TELEMETRY_USER)\n'])

  server.kill('SIGTERM')
  t.equal(await exited(server), 0)
  const down = await runCli(['telemetry', 'report'], { cwd: dir, env })
  t.equal(down.code, 1)
  t.match(down.stderr, /^berth: cannot reach the server at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/)
})

t.test('when the WASM codecs cannot load, the fallback is loud: a warning, health and metrics say so', async t => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), '[server.listeners.control]\nhost = "127.0.0.1"\nport = 0\n[server.listeners.telemetry]\nhost = "127.0.0.1"\nport = 0\n[ingest]\nmetrics_public = true\n')
  const server = spawnCli(['telemetry', 'serve'], { cwd: dir, env: { INGEST_API_KEY: API_KEY, BERTH_TELEMETRY_PORT: '0', BERTH_WASM_DIR: join(dir, 'no-wasm-here') } })
  t.teardown(() => { server.kill('SIGKILL') })
  const urls = await boundUrls(server, 'berth telemetry serve', 20_000)
  const telemetry = urls.telemetry.origin
  const health = await pollUntil(async () => {
    const response = await fetch(new URL('/api/v1/health', urls.control))
    return response.ok && await response.json() as { plugins: Record<string, unknown> }
  }, { what: 'the server to answer', timeout: 20_000 })
  t.match(health.plugins.ingest, { state: 'running', details: { codecs: 'reference' } })
  t.match(server.output(), /"level":40,.*"msg":"the WASM codecs could not load: chunks are decoded by the TypeScript reference implementation/)
  const metrics = await (await fetch(`${telemetry}/metrics/prometheus`)).text()
  t.match(metrics, /^berth_ingest_codecs_info\{implementation="reference"\} 1$/m)
  const body = encodeChunk({ device: DEVICE, sequence: 0, payload: SAMPLES[0] })
  const posted = await fetch(`${telemetry}/ingest/chunks`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body })
  t.match(await posted.json(), { accepted: 1 }, 'and chunks are still decoded')
  server.kill('SIGTERM')
  t.equal(await exited(server), 0)
})

t.test('hash-password prints a hash [ingest].users accepts', async t => {
  const child = spawn(process.execPath, [CLI, 'telemetry', 'hash-password'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stdin.end('s3cret pass\n')
  t.equal(await exited(child), 0)
  t.ok(await verifyPassword('s3cret pass', out.trim()))
  t.notOk(await verifyPassword('s3cret pas', out.trim()))
  const empty = spawn(process.execPath, [CLI, 'telemetry', 'hash-password'], { stdio: ['pipe', 'ignore', 'pipe'] })
  empty.stdin.end('')
  t.equal(await exited(empty), 2)
})
