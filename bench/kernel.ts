// Kernel benchmark: cold start of `berth server` until it answers (the kernel alone, all plugins, the
// ingest plugin alone), and the control listener's throughput on an empty request, side by side with
// a bare fastify app in the same run.
// Run: npm run build && node dist/bench/kernel.js   (BENCH_RUNS, BENCH_SECONDS bound the work)
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { envInt, markdownTable, median } from './stats.js'
import { probablyFreePort } from '../test/support/net.js'

const RUNS = envInt('BENCH_RUNS', 5)
const SECONDS = envInt('BENCH_SECONDS', 5)
const CONNECTIONS = 20
/** Requests in flight per connection: enough that the server, not the load generator, is the limit. */
const PIPELINING = 4
const CLI = fileURLToPath(new URL('../kernel/cli/cli.js', import.meta.url))
const BARE = fileURLToPath(new URL('./fixtures/bare-fastify.js', import.meta.url))

interface Target {
  name: string
  /** Start the server on `port`; resolves once it answers, with the milliseconds that took. */
  start(port: number): Promise<{ child: ChildProcess, ms: number }>
}

async function startAndWait (args: string[], cwd: string, port: number): Promise<{ child: ChildProcess, ms: number }> {
  const begin = performance.now()
  const child = spawn(process.execPath, args, { cwd, stdio: 'ignore' })
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/health`)
      if (response.ok) return { child, ms: performance.now() - begin }
    } catch {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`)
    }
    if (Date.now() > deadline) throw new Error(`${args.join(' ')} did not answer within 30 s`)
    await new Promise(resolve => setTimeout(resolve, 2))
  }
}

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

function kernelTarget (workdir: string): Target {
  return {
    name: 'berth kernel (control listener)',
    start: async port => {
      // The kernel alone: plugins have their own benchmarks.
      writeFileSync(join(workdir, 'cluster.toml'), `[server]\nlog_level = "warn"\nplugins = []\n[server.listeners.control]\nhost = "127.0.0.1"\nport = ${port}\n`)
      return await startAndWait([CLI, 'server'], workdir, port)
    }
  }
}

/**
 * `berth server` with its plugins (all, or those named), every listener on 127.0.0.1 with a free port.
 * Its state directory is kept between rounds: a start after the first, as a restart of a server is.
 */
function serverTarget (workdir: string, plugins: string | undefined): Target {
  const dir = mkdtempSync(join(workdir, 'server-'))
  return {
    name: plugins === undefined ? 'berth server, all plugins' : `berth server, ${plugins} alone`,
    start: async port => {
      writeFileSync(join(dir, 'cluster.toml'), ['[server]', 'log_level = "error"', ...(plugins === undefined ? [] : [`plugins = ["${plugins}"]`]),
        ...['control', 'telemetry', 'app'].flatMap(name => [`[server.listeners.${name}]`, 'host = "127.0.0.1"', `port = ${name === 'control' ? port : 0}`]),
        ...(plugins === undefined ? ['[proxy]', 'http_port = 0', 'https_port = 0'] : [])].join('\n'))
      return await startAndWait([CLI, 'server'], dir, port)
    }
  }
}

const bareTarget: Target = { name: 'bare fastify', start: async port => await startAndWait([BARE, String(port)], tmpdir(), port) }

/** The control experiment: bare fastify again, in a process that has also imported what `berth` imports. */
const loadedBareTarget: Target = {
  name: 'bare fastify + kernel modules imported',
  start: async port => await startAndWait([BARE, String(port), '--import-kernel'], tmpdir(), port)
}

async function throughput (port: number): Promise<number> {
  const result = await autocannon({ url: `http://127.0.0.1:${port}/api/v1/health`, connections: CONNECTIONS, pipelining: PIPELINING, duration: SECONDS })
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`load run had ${result.errors} errors and ${result.non2xx} non-2xx answers`)
  return result.requests.average
}

async function main (): Promise<void> {
  const workdir = mkdtempSync(join(tmpdir(), 'berth-bench-kernel-'))
  const targets = [kernelTarget(workdir), bareTarget, loadedBareTarget, serverTarget(workdir, undefined), serverTarget(workdir, 'ingest')]
  const starts = targets.map((): number[] => [])
  const rates = targets.map((): number[] => [])
  try {
    for (let run = 0; run < RUNS; run++) {
      // Rotate which server goes first, so none gains from its place in the round.
      for (let k = 0; k < targets.length; k++) {
        const index = (run + k) % targets.length
        const port = await probablyFreePort()
        const { child, ms } = await targets[index].start(port)
        try {
          starts[index].push(ms)
          await autocannon({ url: `http://127.0.0.1:${port}/api/v1/health`, connections: CONNECTIONS, pipelining: PIPELINING, duration: 1 })
          rates[index][run] = await throughput(port)
        } finally {
          await stop(child)
        }
      }
    }
  } finally {
    rmSync(workdir, { recursive: true, force: true })
  }
  // The runs of a round are seconds apart and see the same machine; the ratio within each round
  // is steadier than the ratio of medians when the machine's speed drifts between rounds.
  const bare = rates[1]
  const ratios = (i: number): number[] => rates[i].map((rate, run) => rate / bare[run])
  const cost = (i: number): string => `${((1 - median(ratios(i))) * 100).toFixed(1)}%`
  const rows = targets.map((t, i) => [t.name, median(starts[i]).toFixed(0), median(rates[i]).toFixed(0), rates[i].map(r => r.toFixed(0)).join(' ')])
  console.log(`Median of ${RUNS} rounds; ${CONNECTIONS} connections × ${PIPELINING} pipelined, ${SECONDS} s per load run, GET /api/v1/health on 127.0.0.1.\n`)
  console.log(markdownTable(['server', 'cold start to first answer (ms)', 'requests/s (median)', 'requests/s by round'], rows))
  console.log(`\nkernel ÷ bare fastify by round: ${ratios(0).map(r => r.toFixed(3)).join(' ')}`)
  console.log(`kernel cost over bare fastify: ${cost(0)} throughput (median of the rounds' ratios), +${(median(starts[0]) - median(starts[1])).toFixed(0)} ms start`)
  console.log(`bare fastify with the kernel's modules imported: ${cost(2)} below bare fastify (the cost of the process's size, not of the request path)`)
}

await main()
