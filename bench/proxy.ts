// Proxy benchmark: one backend (nginx returning a fixed answer) reached directly and through Berth's
// proxy, nginx, HAProxy and Caddy (Debian's), each proxy with one worker pinned to CPU 0 while the
// backend and wrk share CPU 1 (and Berth's proxy on two event loops, [proxy].workers = 2, and nginx
// with two worker processes, pinned to CPUs 0 and 1: `berth-2-workers`, `nginx-2-workers`), on loopback: 12-byte answers over keep-alive, 64 KiB answers, and
// 12-byte answers over TLS, and 12-byte answers over HTTP/2 (TLS, ALPN h2) with h2load as the load
// generator. Every proxy sets the forwarding headers Berth's sets (X-Forwarded-For,
// -Proto, -Host and Forwarded). Rounds rotate the order; each figure is the median of the rounds.
// Berth's proxy runs twice: as configured by default, and with [proxy].fast_lane off (every request
// through node:http's server and undici), which is what the fast lane saves. BENCH_BERTH_REFERENCE,
// the path of another build's dist/bench/fixtures/proxy-server.js, adds that build as
// `berth-reference` (a change measured side by side with the build before it). Beside requests/s and
// latency, each proxy's CPU time per request: its process and its children's (nginx's worker) from
// /proc over the measured window, divided by the requests answered in it; neighbours on a shared
// host move it far less than requests/s, so goals are judged on it.
// Run: npm run build && node dist/bench/proxy.js   (BENCH_RUNS rounds, BENCH_SECONDS per load run,
// BENCH_WARM_UP_SECONDS, BENCH_PROXIES and BENCH_SCENARIOS: subsets of the proxies' names (by commas)
// and of the scenarios' (by semicolons))
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { envInt, markdownTable, median } from './stats.js'
import { treeCpuSeconds } from './process-cpu.js'
import { ensureDebianPackages } from '../test/support/component.js'
import { probablyFreePort } from '../test/support/net.js'

const RUNS = envInt('BENCH_RUNS', 3)
const SECONDS = envInt('BENCH_SECONDS', 5)
/** Each proxy's warm-up before its figures, the same for all: Node's JIT takes some seconds of this load to settle (docs/benchmarks.md). */
const WARM_UP_SECONDS = envInt('BENCH_WARM_UP_SECONDS', 10)
const CONNECTIONS = 32
const run = promisify(execFile)
const BERTH_PROXY = fileURLToPath(new URL('./fixtures/proxy-server.js', import.meta.url))

interface Ports { http: number, https: number }
/** `http2`: whether it offers HTTP/2 on its HTTPS port. */
interface Proxy { name: string, http2: boolean, start(dir: string, ports: Ports, backend: number): ChildProcess }
const REFERENCE = process.env.BENCH_BERTH_REFERENCE

/** Run a command pinned to CPUs (`0`, or `0,1`). */
function pinned (cpus: number | string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  return spawn('taskset', ['-c', String(cpus), command, ...args], { stdio: ['ignore', 'ignore', 'inherit'], env })
}

/** Berth's proxy on `workers` event loops (the fixture's BENCH_PROXY_WORKERS), pinned to as many CPUs. */
function berthProxy (name: string, workers: number, extra: string[] = []): Proxy {
  return {
    name,
    http2: true,
    start: (_dir, ports, backend) => pinned(cpusFor(workers), process.execPath, [BERTH_PROXY, String(ports.http), String(ports.https), String(backend), ...extra], { ...process.env, BENCH_PROXY_WORKERS: String(workers) })
  }
}

/** nginx with `workers` worker processes (one listening socket each would be `reuseport`; they share one here, nginx's default), pinned to as many CPUs. */
function nginxProxy (name: string, workers: number): Proxy {
  return {
    name,
    http2: true,
    start: (dir, ports, backend) => {
      writeFileSync(join(dir, `${name}.conf`), `worker_processes ${workers}; daemon off; pid ${dir}/${name}.pid; error_log stderr error;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000; upstream backend { server 127.0.0.1:${backend}; keepalive 64; }
  server { listen 127.0.0.1:${ports.http}; listen 127.0.0.1:${ports.https} ssl http2; ssl_certificate ${dir}/cert.pem; ssl_certificate_key ${dir}/key.pem;
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $remote_addr; proxy_set_header X-Forwarded-Proto $scheme; proxy_set_header X-Forwarded-Host $host; proxy_set_header Forwarded "for=$remote_addr;host=$host;proto=$scheme"; } } }\n`)
      return pinned(cpusFor(workers), 'nginx', ['-c', join(dir, `${name}.conf`), '-p', dir])
    }
  }
}

/** One worker on CPU 0; two on CPUs 0 and 1 (the second shared with the backend and the load generator). */
function cpusFor (workers: number): string {
  return Array.from({ length: workers }, (_, i) => i).join(',')
}

const ALL_PROXIES: Proxy[] = [
  berthProxy('berth', 1),
  berthProxy('berth-2-workers', 2),
  ...(REFERENCE === undefined
    ? []
    : [{ name: 'berth-reference', http2: process.env.BENCH_BERTH_REFERENCE_HTTP2 === '1', start: (_dir: string, ports: Ports, backend: number) => pinned(0, process.execPath, [REFERENCE, String(ports.http), String(ports.https), String(backend)]) }]),
  berthProxy('berth-general-path', 1, ['general']),
  nginxProxy('nginx', 1),
  nginxProxy('nginx-2-workers', 2),
  {
    name: 'haproxy',
    http2: true,
    start: (dir, ports, backend) => {
      writeFileSync(join(dir, 'haproxy.cfg'), `global\n  nbthread 1\n  maxconn 4096\ndefaults\n  mode http\n  timeout connect 3s\n  timeout client 60s\n  timeout server 60s\n  option forwardfor\n  http-reuse always\nfrontend web\n  bind 127.0.0.1:${ports.http}\n  bind 127.0.0.1:${ports.https} ssl crt ${dir}/bundle.pem alpn h2,http/1.1\n  http-request set-header X-Forwarded-Proto %[ssl_fc,iif(https,http)]\n  http-request set-header X-Forwarded-Host %[req.hdr(host)]\n  http-request set-header Forwarded for=%[src];host=%[req.hdr(host)];proto=%[ssl_fc,iif(https,http)]\n  default_backend app\nbackend app\n  server s1 127.0.0.1:${backend}\n`)
      return pinned(0, 'haproxy', ['-f', join(dir, 'haproxy.cfg')])
    }
  },
  {
    name: 'caddy',
    http2: true,
    start: (dir, ports, backend) => {
      writeFileSync(join(dir, 'Caddyfile'), `{\n  admin off\n  auto_https off\n  http_port ${ports.http}\n  https_port ${ports.https}\n}\nhttp://:${ports.http} {\n  bind 127.0.0.1\n  reverse_proxy 127.0.0.1:${backend} {\n    header_up Forwarded "for={remote_host};host={host};proto={scheme}"\n  }\n}\nhttps://:${ports.https} {\n  bind 127.0.0.1\n  tls ${dir}/cert.pem ${dir}/key.pem\n  reverse_proxy 127.0.0.1:${backend} {\n    header_up Forwarded "for={remote_host};host={host};proto={scheme}"\n  }\n}\n`)
      return pinned(0, 'caddy', ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], { ...process.env, GOMAXPROCS: '1', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir })
    }
  }
]

const chosen = process.env.BENCH_PROXIES?.split(',').map(name => name.trim())
const PROXIES = chosen === undefined ? ALL_PROXIES : ALL_PROXIES.filter(proxy => chosen.includes(proxy.name))

/** `h2`: HTTP/2 through h2load, which reports the mean time per request, not percentiles. */
interface Scenario { name: string, scheme: 'http' | 'https', path: string, h2?: true }
const SCENARIOS: Scenario[] = [
  { name: '12 B, keep-alive', scheme: 'http', path: '/small' },
  { name: '64 KiB, keep-alive', scheme: 'http', path: '/large' },
  { name: '12 B, TLS', scheme: 'https', path: '/small' },
  { name: '12 B, HTTP/2', scheme: 'https', path: '/small', h2: true }
]
const chosenScenarios = process.env.BENCH_SCENARIOS?.split(';').map(name => name.trim())
const RUN_SCENARIOS = chosenScenarios === undefined ? SCENARIOS : SCENARIOS.filter(s => chosenScenarios.includes(s.name))
/** h2load: streams in flight per connection (with CONNECTIONS / STREAMS connections, as many requests in flight as wrk's). */
const STREAMS = 8

async function listening (port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const open = await new Promise<boolean>(resolve => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
      socket.on('error', () => { resolve(false) })
    })
    if (open) return
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`nothing listens on ${port} (exit ${child.exitCode ?? 'none'})`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await new Promise(resolve => child.once('exit', resolve))
}

/** One load run's figures: requests/s, latency in ms (wrk: the 99th percentile; h2load: the mean), CPU µs of the proxy per request. */
interface Figure { rps: number, p99: number, cpu: number }

/** wrk on CPU 1 for `seconds` against the proxy `pid` (CPU per request left NaN without one). */
async function load (url: string, pid?: number, seconds = SECONDS): Promise<Figure & { errors: boolean }> {
  const before = pid === undefined ? 0 : treeCpuSeconds(pid)
  const { stdout } = await run('taskset', ['-c', '1', 'wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', url], { maxBuffer: 1 << 20 })
  const used = pid === undefined ? NaN : treeCpuSeconds(pid) - before
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1])
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1])
  const [, value, unit] = /\s99%\s+([\d.]+)(us|ms|s)/.exec(stdout) ?? []
  const p99 = Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1)
  return { rps, p99, cpu: used * 1e6 / requests, errors: /Non-2xx|Socket errors/.test(stdout) }
}

/** h2load on CPU 1 for `seconds` against the proxy `pid`. */
async function loadH2 (url: string, pid: number, seconds = SECONDS): Promise<Figure & { errors: boolean }> {
  const before = treeCpuSeconds(pid)
  const { stdout } = await run('taskset', ['-c', '1', 'h2load', '-t1', `-c${CONNECTIONS / STREAMS}`, `-m${STREAMS}`, `-D${seconds}`, url], { maxBuffer: 1 << 20 })
  const used = treeCpuSeconds(pid) - before
  const rps = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(stdout)?.[1])
  const [, value, unit] = /time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/.exec(stdout) ?? []
  const mean = Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1)
  const counts = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(stdout)
  return { rps, p99: mean, cpu: used * 1e6 / Number(counts?.[1]), errors: !/Application protocol: h2/.test(stdout) || counts === null || counts[2] !== '0' || counts[3] !== '0' }
}

async function main (): Promise<void> {
  if (!PROXIES.some(proxy => proxy.name === 'berth')) throw new Error(`BENCH_PROXIES must include berth, the figure the others are compared with (proxies: ${ALL_PROXIES.map(p => p.name).join(', ')})`)
  await ensureDebianPackages(['nginx', 'haproxy', 'caddy', 'wrk', 'nghttp2-client', 'openssl'])
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-proxy-'))
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=bench.test'])
  await run('sh', ['-c', `cat ${dir}/cert.pem ${dir}/key.pem > ${dir}/bundle.pem`])
  writeFileSync(join(dir, 'large.bin'), Buffer.alloc(65536, 120), { mode: 0o644 })
  chmodSync(dir, 0o755) // nginx's workers run as www-data
  const backendPort = await probablyFreePort()
  writeFileSync(join(dir, 'backend.conf'), `worker_processes 1; daemon off; pid ${dir}/backend.pid; error_log stderr error;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  server { listen 127.0.0.1:${backendPort}; location = /small { default_type text/plain; return 200 "hello world\\n"; } location = /large { default_type application/octet-stream; alias ${dir}/large.bin; } } }\n`)
  const backend = pinned(1, 'nginx', ['-c', join(dir, 'backend.conf'), '-p', dir])
  const results = new Map<string, Figure[]>()
  const record = (key: string, figure: Figure): void => { results.set(key, [...(results.get(key) ?? []), figure]) }
  try {
    await listening(backendPort, backend)
    for (let round = 0; round < RUNS; round++) {
      for (const scenario of RUN_SCENARIOS.filter(s => s.scheme === 'http')) record(`direct|${scenario.name}`, await load(`http://127.0.0.1:${backendPort}${scenario.path}`))
      for (let i = 0; i < PROXIES.length; i++) {
        const proxy = PROXIES[(round + i) % PROXIES.length]
        const ports = { http: await probablyFreePort(), https: await probablyFreePort() }
        const child = proxy.start(dir, ports, backendPort)
        try {
          await listening(ports.http, child)
          await listening(ports.https, child)
          const pid = child.pid as number
          await load(`http://127.0.0.1:${ports.http}/small`, pid, WARM_UP_SECONDS)
          if (proxy.http2 && RUN_SCENARIOS.some(s => s.h2 === true)) await loadH2(`https://127.0.0.1:${ports.https}/small`, pid, Math.ceil(WARM_UP_SECONDS / 2))
          for (const scenario of RUN_SCENARIOS.filter(s => s.h2 !== true || proxy.http2)) {
            const url = `${scenario.scheme}://127.0.0.1:${scenario.scheme === 'http' ? ports.http : ports.https}${scenario.path}`
            const figure = scenario.h2 === true ? await loadH2(url, pid) : await load(url, pid)
            if (figure.errors) console.error(`${proxy.name}, ${scenario.name}: wrk saw errors`)
            record(`${proxy.name}|${scenario.name}`, figure)
          }
        } finally {
          await stop(child)
        }
      }
    }
  } finally {
    await stop(backend)
    rmSync(dir, { recursive: true, force: true })
  }
  const figure = (name: string, scenario: string): Figure | undefined => {
    const runs = results.get(`${name}|${scenario}`)
    return runs === undefined ? undefined : { rps: median(runs.map(r => r.rps)), p99: median(runs.map(r => r.p99)), cpu: median(runs.map(r => r.cpu)) }
  }
  const rows: string[][] = []
  for (const scenario of RUN_SCENARIOS) {
    const berth = figure('berth', scenario.name)
    for (const name of ['direct', ...PROXIES.map(p => p.name)]) {
      const f = figure(name, scenario.name)
      if (f === undefined || berth === undefined) continue
      const ratio = (a: number, b: number): string => name === 'berth' || !Number.isFinite(a / b) ? '' : (a / b).toFixed(2)
      rows.push([scenario.name, name, f.rps.toFixed(0), f.p99.toFixed(2), Number.isFinite(f.cpu) ? f.cpu.toFixed(1) : '', ratio(berth.rps, f.rps), ratio(berth.p99, f.p99), ratio(berth.cpu, f.cpu)])
    }
  }
  console.log(`Node ${process.version}; ${RUNS} rounds of ${SECONDS} s per figure after a ${WARM_UP_SECONDS} s warm-up; wrk -t1 -c${CONNECTIONS} (HTTP/2: h2load -t1 -c${CONNECTIONS / STREAMS} -m${STREAMS}); proxies on CPU 0 (those of two workers on CPUs 0 and 1), backend and load generator on CPU 1\n`)
  console.log(markdownTable(['scenario', 'server', 'requests/s (median)', 'p99 ms (median; HTTP/2: mean)', 'CPU µs/request (median)', 'berth ÷ this (req/s)', 'berth ÷ this (latency)', 'berth ÷ this (CPU/request)'], rows))
}

await main()
