// The berth command as an operator runs it: exit codes 0/1/2, one-line failures (--dev in production
// too), foreground and detached servers with a pid file, and shutdown.
import t, { type Test } from 'tap'
import { createServer } from 'node:net'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { boundUrls, boundUrlsInLog, exited, runCli, spawnCli } from '../support/cli.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

/** A working directory whose cluster.toml runs the kernel alone, its control listener on loopback `port` (0: any free one, read back from the server's log). */
function workdir (t: Test, port: number, serverKeys = 'plugins = []\n'): string {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), `[server]\n${serverKeys}[server.listeners.control]\nhost = "127.0.0.1"\nport = ${port}\n`)
  return dir
}

async function health (control: URL): Promise<{ status: string } | undefined> {
  const response = await fetch(new URL('/api/v1/health', control))
  return response.ok ? await response.json() as { status: string } : undefined
}

function oneLine (t: Test, stderr: string): string {
  const lines = stderr.trim().split('\n')
  t.equal(lines.length, 1, `one line on stderr: ${stderr}`)
  return lines[0]
}

t.test('help, version and usage errors', async t => {
  const help = await runCli(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /server \[options\]/)
  t.match(help.stdout, /shutdown/)
  // berth turns Node's compile cache on: the code of the modules it loaded is kept in the temporary folder.
  const tmp = tempDir(t)
  const version = await runCli(['--version'], { env: { TMPDIR: tmp } })
  t.equal(version.code, 0)
  t.match(version.stdout.trim(), /^\d+\.\d+\.\d+$/)
  t.ok(existsSync(join(tmp, 'node-compile-cache')) && readdirSync(join(tmp, 'node-compile-cache'), { recursive: true }).length > 1, 'berth keeps compiled code in the compile cache')
  for (const args of [['bogus'], ['server', '--bogus'], ['shutdown', 'extra']]) {
    const result = await runCli(args)
    t.equal(result.code, 2, `${args.join(' ')} is a usage error`)
    t.match(oneLine(t, result.stderr), /^berth: (unknown command 'bogus'|unknown option '--bogus'|too many arguments for 'shutdown'.*)$/)
  }
  const missing = await runCli(['--config', '/nonexistent.toml', 'server'])
  t.equal(missing.code, 2)
  t.equal(oneLine(t, missing.stderr), 'berth: config file /nonexistent.toml does not exist')
})

t.test('a client command loads no server code: the module graph of --help and status holds no LMDB, fastify or TypeBox, and only the plugins it needs', async t => {
  const dir = tempDir(t)
  // A module hook in the child records every module it loads.
  writeFileSync(join(dir, 'hooks.mjs'), "import { appendFileSync } from 'node:fs'\nexport async function load (url, context, next) {\n  appendFileSync(process.env.MODULE_LOG, url + '\\n')\n  return await next(url, context)\n}\n")
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)})\n`)
  // Port 0 in the client's configuration: nothing answers there.
  const cwd = workdir(t, 0)
  for (const args of [['--help'], ['status']]) {
    const log = join(dir, `${args[0]}.log`)
    writeFileSync(log, '')
    const result = await runCli(args, { cwd, env: { NODE_OPTIONS: `--import ${pathToFileURL(join(dir, 'register.mjs')).href}`, MODULE_LOG: log } })
    t.equal(result.code, args[0] === '--help' ? 0 : 1, `berth ${args.join(' ')} ran (status finds no server)`)
    const modules = readFileSync(log, 'utf8').trim().split('\n')
    t.ok(modules.some(url => url.endsWith('/kernel/cli/cli.js')) && modules.some(url => url.includes('/node_modules/commander/')), `the log holds the graph (${modules.length} modules)`)
    const heavy = modules.filter(url => /\/node_modules\/(lmdb|fastify|@fastify|@sinclair\/typebox|undici|pg|csv-stringify)\//.test(url))
    t.same(heavy, [], `berth ${args.join(' ')} loads none of LMDB, fastify, TypeBox, undici, pg or csv-stringify`)
    // An ES import of these builtins builds a namespace of every export, loading much of Node with it
    // (node:http's WebSocket getters load Node's fetch stack); the commands take them when they run.
    // (node:crypto and node:worker_threads are left out: the test runner's own hooks import them.)
    // node:fs's namespace loads its streams. The test runner's hooks in the child may have imported a
    // builtin before the CLI did (the log names each module once), so the graph's sources are read too.
    const slow = /^node:(http|https|http2|util|readline|zlib|fs|fs\/promises)$/
    const graph = modules.slice(modules.findIndex(url => url.endsWith('/kernel/cli/cli.js')))
    const imported = graph.filter(url => url.startsWith('file:')).flatMap(url =>
      [...readFileSync(fileURLToPath(url), 'utf8').matchAll(/^(?:import|export)(?:\s+[\w*{},\s]*?\s+from)?\s*['"](node:[^'"]+)['"]/gm)].map(match => match[1]).filter(name => slow.test(name)).map(name => `${name} in ${url}`))
    t.same([...graph.filter(url => slow.test(url)), ...imported], [], `berth ${args.join(' ')} makes no ES import of node:http, node:util, node:readline, node:fs or the like`)
    // The command table lists the commands: --help loads no plugin, status only the reconciler.
    const plugins = [...new Set(modules.flatMap(url => /\/dist\/plugins\/([^/]+)\//.exec(url)?.[1] ?? []))].sort()
    t.same(plugins, args[0] === '--help' ? [] : ['reconciler'], `berth ${args.join(' ')} loads the plugins it needs`)
  }
})

t.test('bad configuration stops start-up with exit code 1 and one line naming what is wrong', async t => {
  const port = 0
  const unknownKey = workdir(t, port, 'stat_dir = "x"\n')
  let result = await runCli(['server'], { cwd: unknownKey })
  t.equal(result.code, 1)
  t.equal(oneLine(t, result.stderr), `berth: ${join(unknownKey, 'cluster.toml')}: [server].stat_dir: unknown key`)

  const wrongType = workdir(t, port, 'log_level = 3\n')
  result = await runCli(['server'], { cwd: wrongType })
  t.equal(result.code, 1)
  t.match(oneLine(t, result.stderr), /cluster\.toml: \[server\]\.log_level: expected one of .*, got 3$/)

  const ghost = workdir(t, port, 'plugins = ["ghost"]\n')
  result = await runCli(['server'], { cwd: ghost })
  t.equal(result.code, 1)
  t.match(oneLine(t, result.stderr), /^berth: \[server\] names plugin "ghost", which does not exist/)

  const envWrong = workdir(t, port)
  result = await runCli(['server'], { cwd: envWrong, env: { BERTH_CONTROL_PORT: 'eighty' } })
  t.equal(result.code, 1)
  t.equal(oneLine(t, result.stderr), 'berth: environment BERTH_CONTROL_PORT: [server].listeners.control.port: expected integer, got "eighty"')
})

t.test('berth server --dev asks for the development identity provider, which production refuses in one line', async t => {
  const dir = workdir(t, 0, 'plugins = ["campaign"]\n')
  const result = await runCli(['server', '--dev'], { cwd: dir, env: { NODE_ENV: 'production' } })
  t.equal(result.code, 1)
  t.equal(oneLine(t, result.stderr), 'berth: plugin "campaign" failed during setup: [campaign].dev_idp (CAMPAIGN_DEV_IDP, berth server --dev) is for development and is refused when NODE_ENV=production')
})

t.test('a port in use and an unusable state directory are named', async t => {
  const blocker = createServer()
  await new Promise<void>(resolve => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { blocker.close() })
  const port = (blocker.address() as { port: number }).port
  let result = await runCli(['server'], { cwd: workdir(t, port) })
  t.equal(result.code, 1)
  t.equal(oneLine(t, result.stderr), `berth: control listener: port ${port} on 127.0.0.1 is already in use (set [server.listeners.control].port)`)

  const dir = workdir(t, 0)
  writeFileSync(join(dir, 'state-file'), '')
  result = await runCli(['--state-dir', 'state-file', 'server'], { cwd: dir })
  t.equal(result.code, 1)
  t.equal(oneLine(t, result.stderr), `berth: state directory ${join(dir, 'state-file')} cannot be used: not a directory`)
})

t.test('foreground server: health, pid file, and a clean exit on SIGTERM', async t => {
  const dir = workdir(t, 0)
  const server = spawnCli(['server'], { cwd: dir })
  t.teardown(() => { server.kill('SIGKILL') })
  const { control } = await boundUrls(server, 'berth server')
  const report = await pollUntil(async () => await health(control), { what: 'the server to answer health' })
  t.equal(report.status, 'ok')
  const pidFile = join(dir, '.berth', 'berth.pid')
  t.equal(statSync(pidFile).mode & 0o777, 0o600)
  server.kill('SIGTERM')
  t.equal(await exited(server), 0, server.output())
  t.notOk(existsSync(pidFile), 'pid file removed on exit')
})

t.test('detached server: started, refused twice, shut down, then nothing to shut down', async t => {
  const dir = workdir(t, 0)
  t.teardown(async () => { await runCli(['shutdown'], { cwd: dir }) })
  const started = await runCli(['server', '-d'], { cwd: dir })
  t.equal(started.code, 0, started.stderr)
  t.match(started.stdout, /^berth server started \(pid \d+\); log: .*berth\.log\n$/)
  const { control } = await boundUrlsInLog(join(dir, '.berth', 'berth.log'), 'the detached server')
  t.equal((await health(control))?.status, 'ok', 'answering as soon as -d returns')
  t.equal(statSync(join(dir, '.berth', 'berth.log')).mode & 0o777, 0o600)

  const again = await runCli(['server', '-d'], { cwd: dir })
  t.equal(again.code, 1)
  t.match(oneLine(t, again.stderr), /^berth: a server is already running from .*\.berth \(pid \d+\)$/)

  const stopped = await runCli(['shutdown'], { cwd: dir })
  t.equal(stopped.code, 0, stopped.stderr)
  t.match(stopped.stdout, /^berth server stopped \(pid \d+\)$/m)
  await t.rejects(fetch(new URL('/api/v1/health', control)), 'the port is closed')

  const none = await runCli(['shutdown'], { cwd: dir })
  t.equal(none.code, 1)
  t.match(oneLine(t, none.stderr), /^berth: no server is running from .*\.berth \(no .*berth\.pid\)$/)
})

t.test('a detached server that cannot start reports why and exits 1', async t => {
  const blocker = createServer()
  await new Promise<void>(resolve => blocker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { blocker.close() })
  const port = (blocker.address() as { port: number }).port
  const result = await runCli(['server', '-d'], { cwd: workdir(t, port) })
  t.equal(result.code, 1)
  t.equal(oneLine(t, result.stderr), `berth: control listener: port ${port} on 127.0.0.1 is already in use (set [server.listeners.control].port)`)
})
