// CLI benchmark: `berth` commands as an operator runs them (a new Node process each), side by side with
// `node -e 0` (Node's own start-up) in the same rounds: --help, --version, and status against a running
// server. Each process's CPU time (user + sys, from bash's `times`, less sensitive to other load on the
// machine than wall time) and wall time; the goal is CPU time within Node's own + 40 ms.
// Run: npm run build && node dist/bench/cli.js   (BENCH_RUNS bounds the rounds; BENCH_BASELINE, the
// cli.js of another build, adds its --help and status to the same rounds; needs a Docker engine on
// /var/run/docker.sock, as `status` lists its containers)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { envInt, markdownTable, median } from './stats.js'
import { listenerUrlsIn } from '../test/support/cli.js'

const RUNS = envInt('BENCH_RUNS', 11)
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))
const BASELINE = process.env.BENCH_BASELINE

/** Milliseconds over Node's own start-up (CPU time) that the commands may take. */
const GOAL_OVER_NODE = 40

interface Subject {
  label: string
  args: string[]
  /** Judged against the goal. */
  goal: boolean
}

interface Sample { wall: number, cpu: number }

/** bash runs the command and then prints its children's CPU times (`times`, second line) on fd 3. */
const TIMED = '"$@"; code=$?; times >&3; exit $code'

const seconds = (text: string): number => {
  const [, minutes, secs] = /^(\d+)m([\d.]+)s$/.exec(text) ?? []
  if (minutes === undefined) throw new Error(`unexpected output of times: ${text}`)
  return Number(minutes) * 60 + Number(secs)
}

/** Wall and CPU milliseconds of one process, spawn to exit; refuses a non-zero exit (the figure would be of a failure). */
async function timeOnce (args: string[], cwd: string): Promise<Sample> {
  const begin = performance.now()
  const child = spawn('bash', ['-c', TIMED, 'bash', process.execPath, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] })
  let stderr = ''
  let times = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  ;(child.stdio[3] as Readable).on('data', (chunk: Buffer) => { times += chunk.toString() })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  const wall = performance.now() - begin
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}: ${stderr.trim()}`)
  const [user, sys] = (times.trim().split('\n')[1] ?? '').split(' ').map(seconds)
  return { wall, cpu: (user + sys) * 1000 }
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
    { label: 'node -e 0', args: ['-e', '0'], goal: false },
    { label: 'berth --help', args: [CLI, '--help'], goal: true },
    { label: 'berth --version', args: [CLI, '--version'], goal: false },
    { label: 'berth status (server running)', args: [CLI, 'status'], goal: true },
    ...(BASELINE === undefined
      ? []
      : [{ label: 'baseline: berth --help', args: [BASELINE, '--help'], goal: false }, { label: 'baseline: berth status', args: [BASELINE, 'status'], goal: false }])
  ]
  const samples = new Map<string, Sample[]>(subjects.map(s => [s.label, []]))
  try {
    for (const subject of subjects) await timeOnce(subject.args, dir) // warm-up: the file cache
    for (let round = 0; round < RUNS; round++) {
      // Rotate which goes first, so no command always runs right after the same one.
      for (let i = 0; i < subjects.length; i++) {
        const subject = subjects[(round + i) % subjects.length]
        samples.get(subject.label)?.push(await timeOnce(subject.args, dir))
      }
    }
  } finally {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  }
  const of = (label: string, key: keyof Sample): number[] => (samples.get(label) ?? []).map(sample => sample[key])
  const node = { cpu: median(of('node -e 0', 'cpu')), wall: median(of('node -e 0', 'wall')) }
  const rows = subjects.map(({ label, goal }) => {
    const cpu = of(label, 'cpu')
    const over = median(cpu) - node.cpu
    const wallOver = median(of(label, 'wall')) - node.wall
    return [
      label, median(cpu).toFixed(0), `${Math.min(...cpu).toFixed(0)}–${Math.max(...cpu).toFixed(0)}`,
      label === 'node -e 0' ? '' : `+${over.toFixed(0)}`, median(of(label, 'wall')).toFixed(0), label === 'node -e 0' ? '' : `+${wallOver.toFixed(0)}`,
      goal ? `node + ${GOAL_OVER_NODE} ms (${over <= GOAL_OVER_NODE ? 'met' : 'missed'})` : ''
    ]
  })
  const load = loadavg()[0].toFixed(1)
  console.log(`Node ${process.version}, ${RUNS} rounds, median of each command as a new process (load average ${load})\n`)
  console.log(markdownTable(['command', 'CPU (ms)', 'CPU min–max (ms)', 'CPU over node -e 0', 'wall (ms)', 'wall over node -e 0', 'goal (CPU)'], rows))
}

await main()
