// `berth server` in a child process for the telemetry benchmarks: a working directory with its
// cluster.toml (every listener on 127.0.0.1, control and telemetry on free ports), the plugins asked
// for, ready once the telemetry listener answers; stopped with SIGTERM and its directory removed.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { probablyFreePort } from '../test/support/net.js'

export interface BenchServer {
  /** The telemetry listener. */
  url: URL
  control: URL
  /** The working directory; the state directory is `<dir>/.berth`. */
  dir: string
  child: ChildProcess
}

export interface ServerOptions {
  /** BERTH_PLUGINS: the plugins to run, comma-separated. */
  plugins: string
  env?: Record<string, string>
  /** More lines of cluster.toml. */
  toml?: readonly string[]
  /** The working directory (made for it when absent), for state written before the start. */
  dir?: string
  /** The `berth` to run: this build's dist/kernel/cli/cli.js unless another build's is given. */
  cli?: string
}

/** A working directory for a server, with its state directory's path. */
export function serverDir (prefix: string): { dir: string, stateDir: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, stateDir: join(dir, '.berth') }
}

export async function startServer (options: ServerOptions): Promise<BenchServer> {
  const dir = options.dir ?? serverDir('berth-bench-').dir
  const [control, telemetry] = [await probablyFreePort(), await probablyFreePort()]
  const ports: Record<string, number> = { control, telemetry, app: 0 }
  writeFileSync(join(dir, 'cluster.toml'), ['[server]', 'log_level = "warn"', ...Object.entries(ports).flatMap(([name, port]) =>
    [`[server.listeners.${name}]`, 'host = "127.0.0.1"', `port = ${port}`]), ...(options.toml ?? [])].join('\n'))
  const cli = options.cli ?? fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))
  // BENCH_SERVER_NODE_ARGS: Node options for the server alone (a profile of it: `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(arg => arg !== '') ?? []
  const child = spawn(process.execPath, [...nodeArgs, cli, 'server'], { cwd: dir, env: { ...process.env, BERTH_PLUGINS: options.plugins, ...options.env }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const server = { url: new URL(`http://127.0.0.1:${telemetry}`), control: new URL(`http://127.0.0.1:${control}`), dir, child }
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      if ((await fetch(new URL('/auth/mode', server.url))).ok) return server
    } catch {
      if (child.exitCode !== null) throw new Error(`berth server exited with ${child.exitCode}: ${stderr}`)
    }
    if (Date.now() > deadline) throw new Error(`berth server did not answer within 60 s: ${stderr}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/** Stop the server and remove its directory (unless `keep`: the caller reads its state, then removes it). */
export async function stopServer (server: BenchServer, keep = false): Promise<void> {
  if (server.child.exitCode === null) {
    const exited = new Promise(resolve => server.child.once('exit', resolve))
    server.child.kill('SIGTERM')
    await exited
  }
  if (!keep) rmSync(server.dir, { recursive: true, force: true })
}
