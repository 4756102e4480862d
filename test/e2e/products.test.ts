// The products as separate processes, as `berth install-service --product` installs them: the units it
// writes for the orchestration and the telemetry product are run as written (their environment and
// ExecStart) from one working directory and one cluster.toml. Each process serves its own product and
// not the other's, keeps its own state directory, and the telemetry process killed with SIGKILL leaves
// the orchestration control API answering. No container engine is needed: the control plane answers
// without one.
import t, { type Test } from 'tap'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { boundUrls, CLI, exited, runCli, spawnCliForTest, untilAnswers, type RunningCli } from '../support/cli.js'
import { tempDir } from '../support/tmp.js'

interface Health { status: string, plugins: Record<string, unknown> }

/** Write a product's unit with `berth install-service` and read back what systemd would run: the command's arguments after `node cli.js`, and the unit's environment. */
async function installedUnit (t: Test, dir: string, units: string, product: string, controlPort: number): Promise<{ args: string[], env: Record<string, string> }> {
  const written = await runCli(['install-service', '--unit-dir', units, '--product', product, '--control-port', String(controlPort)], { cwd: dir })
  t.equal(written.code, 0, written.stderr)
  const text = readFileSync(join(units, `berth-${product}.service`), 'utf8')
  const env = Object.fromEntries([...text.matchAll(/^Environment=(\w+)=(\S+)$/gm)].map(m => [m[1], m[2]]))
  const command = /^ExecStart=(.+)$/m.exec(text)?.[1].split(' ') ?? []
  t.same(command.slice(0, 2), [process.execPath, CLI], `${product}: the unit runs this berth`)
  return { args: command.slice(2), env }
}

/**
 * Run a unit's command in `dir` until `ready` (a path on `listener`) answers; SIGKILLed at the end of the
 * test. `env` sets the listeners' ports to 0, so the ports are read back from the server's log line.
 */
async function run (t: Test, dir: string, unit: { args: string[], env: Record<string, string> }, env: NodeJS.ProcessEnv, listener: string, ready: string): Promise<{ server: RunningCli, urls: Record<string, URL> }> {
  const server = spawnCliForTest(t, unit.args, { cwd: dir, env: { ...unit.env, ...env } })
  const what = `berth server ${unit.args.join(' ')}`
  const urls = await boundUrls(server, what)
  await untilAnswers(server, new URL(ready, urls[listener]), what)
  return { server, urls }
}

const health = async (base: string): Promise<Health> => await (await fetch(`${base}/api/v1/health`)).json() as Health

t.test('orchestration and telemetry in two processes: each serves its own product, and the control plane outlives telemetry', async t => {
  const dir = tempDir(t)
  mkdirSync(join(dir, 'services'))
  writeFileSync(join(dir, 'cluster.toml'), [
    ...['control', 'telemetry', 'app', 'proxy-http', 'proxy-https'].flatMap(name => [`[server.listeners.${name}]`, 'host = "127.0.0.1"']),
    // One file for both: each process validates all of it and reads its own plugins' sections.
    '[ingest]', 'retention_days = 30'
  ].join('\n'))
  const units = tempDir(t)
  const orchestrationUnit = await installedUnit(t, dir, units, 'orchestration', 6880)
  const telemetryUnit = await installedUnit(t, dir, units, 'telemetry', 6890)
  t.equal(telemetryUnit.env.BERTH_PLUGINS, 'ingest,symbolication')
  t.same([orchestrationUnit.env.BERTH_CONTROL_PORT, telemetryUnit.env.BERTH_CONTROL_PORT], ['6880', '6890'], 'each unit has its own control port')

  // The ports are the test's (the units' would do on a host): 0, each read back from its process.
  // No engine: the control plane runs without one.
  const { urls: orchestrationUrls } = await run(t, dir, orchestrationUnit, { BERTH_CONTROL_PORT: '0', BERTH_DOCKER_SOCKET: join(dir, 'no-engine.sock') }, 'control', '/api/v1/health')
  const { server: telemetryServer, urls: telemetryUrls } = await run(t, dir, telemetryUnit, { BERTH_CONTROL_PORT: '0', BERTH_TELEMETRY_PORT: '0' }, 'telemetry', '/auth/mode')
  const control = orchestrationUrls.control.origin
  const telemetryControl = telemetryUrls.control.origin
  const telemetry = telemetryUrls.telemetry.origin

  const orchestration = await health(control)
  t.ok(['tokens', 'reconciler', 'proxy'].every(name => name in orchestration.plugins), 'the orchestration process runs the orchestration plugins')
  t.notOk('ingest' in orchestration.plugins, 'and not the telemetry server')
  t.same(Object.keys((await health(telemetryControl)).plugins).sort(), ['ingest', 'symbolication'], 'the telemetry process runs the telemetry plugins only')

  const token = readFileSync(join(dir, '.berth-orchestration', 'admin.token'), 'utf8').trim()
  const tokens = async (base: string): Promise<number> => (await fetch(`${base}/api/v1/tokens`, { headers: { authorization: `Bearer ${token}` } })).status
  t.equal(await tokens(control), 200, 'the orchestration API answers on its control listener')
  t.equal(await tokens(telemetryControl), 404, 'the telemetry process has no orchestration API')
  const password = readFileSync(join(dir, '.berth-telemetry', 'telemetry-admin-password'), 'utf8').trim()
  const devices = await fetch(`${telemetry}/devices`, { headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` } })
  t.equal(devices.status, 200, 'the telemetry API answers on its listener')
  t.notOk(existsSync(join(dir, '.berth-telemetry', 'admin.token')), 'each product keeps its own state directory')
  t.notOk(existsSync(join(dir, '.berth-orchestration', 'telemetry-admin-password')))
  t.equal(orchestrationUnit.env.NODE_ENV, 'production')

  telemetryServer.kill('SIGKILL')
  t.equal(await exited(telemetryServer), 'SIGKILL')
  await t.rejects(fetch(`${telemetry}/auth/mode`), 'the telemetry server is gone')
  t.match(await health(control), { plugins: { tokens: { state: 'running' }, reconciler: { state: 'running' } } }, 'the control plane still answers health, every plugin running')
  t.equal(await tokens(control), 200, 'and its API')
})
