// CLI benchmark: wall time of `berth` commands as an operator runs them (a new Node process each), side
// by side with `node -e 0` in the same rounds: --help, --version, and status against a running server.
// Run: npm run build && node dist/bench/cli.js   (BENCH_RUNS bounds the rounds; needs a Docker engine
// on /var/run/docker.sock, as `status` lists its containers)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { envInt, markdownTable, median } from './stats.js'
import { listenerUrlsIn } from '../test/support/cli.js'

const RUNS = envInt('BENCH_RUNS', 11)
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))

interface Subject {
  label: string
  args: string[]
  /** Goal in milliseconds, if the issue sets one. */
  goal?: number
}

/** Milliseconds from spawn to exit of one process; refuses a non-zero exit (the figure would be of a failure). */
async function timeOnce (args: string[], cwd: string): Promise<number> {
  const begin = performance.now()
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const code = await new Promise<number | null>(resolve => child.on('exit', resolve))
  const ms = performance.now() - begin
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}: ${stderr.trim()}`)
  return ms
}

/** `berth server` in `dir`, its control listener on port 0: the port it got is read from its log line. */
async function startServer (dir: string): Promise<{ port: number, stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, 'server'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, BERTH_PLUGINS: 'tokens,secrets,reconciler' } })
  let log = ''
  child.stdout.on('data', (chunk: Buffer) => { log += chunk.toString() })
  const deadline = Date.now() + 30_000
  let port: number | undefined
  for (;;) {
    try {
      const control = listenerUrlsIn(log)?.control
      port = control === undefined ? undefined : Number(control.port)
      if (port !== undefined && (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) break
    } catch { // not answering yet
    }
    if (child.exitCode !== null) throw new Error(`berth server exited with ${child.exitCode}`)
    if (Date.now() > deadline) throw new Error('berth server did not answer within 30 s')
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM')
    await new Promise(resolve => child.once('exit', resolve))
  }
  return { port, stop }
}

async function main (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-cli-'))
  const config = (port: number): string => `[server]\nstate_dir = "state"\n[server.listeners.control]\nhost = "127.0.0.1"\nport = ${port}\n`
  writeFileSync(join(dir, 'cluster.toml'), config(0))
  const { port, stop } = await startServer(dir)
  // berth status finds the server by the port in cluster.toml: the one it got.
  writeFileSync(join(dir, 'cluster.toml'), config(port))
  const subjects: Subject[] = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: 'berth --help', args: [CLI, '--help'], goal: 120 },
    { label: 'berth --version', args: [CLI, '--version'] },
    { label: 'berth status (server running)', args: [CLI, 'status'], goal: 150 }
  ]
  const times = new Map<string, number[]>(subjects.map(s => [s.label, []]))
  try {
    for (const subject of subjects) await timeOnce(subject.args, dir) // warm-up: the file cache
    for (let round = 0; round < RUNS; round++) {
      // Rotate which goes first, so no command always runs right after the same one.
      for (let i = 0; i < subjects.length; i++) {
        const subject = subjects[(round + i) % subjects.length]
        times.get(subject.label)?.push(await timeOnce(subject.args, dir))
      }
    }
  } finally {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  }
  const baseline = median(times.get('node -e 0') ?? [])
  const rows = subjects.map(({ label, goal }) => {
    const values = times.get(label) ?? []
    const mid = median(values)
    const verdict = goal === undefined ? '' : `≤ ${goal} ms (${mid <= goal ? 'met' : 'missed'})`
    return [label, mid.toFixed(0), `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`, label === 'node -e 0' ? '' : `+${(mid - baseline).toFixed(0)}`, verdict]
  })
  console.log(`Node ${process.version}, ${RUNS} rounds, median wall time of each command as a new process\n`)
  console.log(markdownTable(['command', 'median (ms)', 'min–max (ms)', 'over node -e 0 (ms)', 'goal'], rows))
}

await main()
