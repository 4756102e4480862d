// `berth tui` in a real terminal (tmux, driven with send-keys and read with capture-pane) against a
// running server with a real Docker engine: the service and its replicas (with their CPU and memory),
// the node, the deploys and the webhooks are drawn (the engine's figures also through the API,
// `berth status --stats` and /metrics); + scales the service, l shows its log lines, a canary is drawn and p
// promotes it, q quits.
import t from 'tap'
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import webhooks from '../../../plugins/webhooks/index.js'
import { CLI, runCli } from '../../support/cli.js'
import { ensureDebianPackages, requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine } from '../../support/docker.js'
import { capturedLogger } from '../../support/kernel.js'
import { api, reconcilerKernel, tokenFor, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'

const run = promisify(execFile)
const docker = await requireComponent(t, 'docker', dockerEngine)
const tmux = docker === undefined ? undefined : await requireComponent(t, 'tmux', async () => { await ensureDebianPackages(['tmux']); return 'tmux' })

if (docker !== undefined && tmux !== undefined) {
  t.test('the terminal dashboard draws the cluster and acts on keys', async t => {
    const image = await busyboxImage(docker)
    const captured = capturedLogger()
    const { kernel, cwd, project, token } = await reconcilerKernel(t, docker, { plugins: [webhooks], logger: captured.logger })
    writeServices(cwd, { [project]: `[[service]]\nname = "talker"\nimage = "${image}"\ncommand = ["/bin/busybox", "sh", "-c", "echo hello from talker; exec /bin/busybox sleep 3600"]\n` })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    t.equal((await api(kernel, 'POST', '/api/v1/webhooks', { token, body: { repo: 'ops/infra', service_name: 'talker', branch: 'main', secret: 'a-secret-of-16-chars' } })).status, 201)

    const socket = `berth-tui-${process.pid}`
    const tm = async (...args: string[]): Promise<string> => (await run(tmux, ['-L', socket, ...args])).stdout
    t.teardown(async () => { await tm('kill-server').catch(() => '') })
    await tm('new-session', '-d', '-s', 'tui', '-x', '160', '-y', '50',
      '-e', `BERTH_URL=${kernel.url('control').href}`, '-e', `BERTH_TOKEN=${token}`, '-e', 'NODE_OPTIONS=',
      `${process.execPath} ${CLI} tui; echo tui-exited=$?; sleep 30`)
    const screen = async (): Promise<string> => await tm('capture-pane', '-p', '-t', 'tui')
    const drawn = await pollUntil(async () => { const s = await screen(); return /talker\s+1\/1\s+running/.test(s) && s }, { timeout: 20_000, what: 'the service drawn' })
    t.match(drawn, /\(leader, ready\)/, 'the node')
    t.match(drawn, /deploy\s+talker/, 'the deploy')
    t.match(drawn, /ops\/infra → talker: no invocations yet/, 'the webhook')
    t.match(drawn, /talker\s+1\/1\s+running\s+\d+\.\d%\s+[\d.]+ (B|KiB|MiB)/, 'its CPU and memory, as the engine measures them')

    // The same figures through the API, the CLI and /metrics.
    const measured = await api<{ services: Array<{ name: string, containers: Array<{ stats?: Record<string, number | null> }> }> }>(kernel, 'GET', '/api/v1/status?stats=true', { token })
    const [stats] = measured.body.services.find(s => s.name === 'talker')?.containers.map(c => c.stats) ?? []
    t.match(stats, { cpu_seconds: Number, cpu_percent: Number, restarts: 0 }, 'the container\'s CPU, sampled, and its restarts')
    t.ok(stats !== undefined && Number(stats.memory_bytes) > 0 && Number(stats.memory_limit_bytes) >= Number(stats.memory_bytes) && stats.network_rx_bytes !== null, 'its memory within its limit, and its network')
    t.equal((await api(kernel, 'GET', '/api/v1/status?stats=maybe', { token })).status, 400, 'stats is true or false')
    t.notOk('stats' in ((await api<{ services: Array<{ containers: object[] }> }>(kernel, 'GET', '/api/v1/status', { token })).body.services[0].containers[0]), 'not measured unless asked')
    const cli = await runCli(['status', '--stats'], { env: { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: token } })
    t.match(cli.stdout, /CPU\s+MEMORY\s+NET RX \/ TX[\s\S]*talker\s+\S+\s+running\s+1\/1\s+0\s+\d+\.\d%\s+[\d.]+ (B|KiB|MiB)\s+[\d.]+ \w+ \/ [\d.]+ \w+/, 'berth status --stats')
    const exposition = await api<string>(kernel, 'GET', '/metrics', { token })
    t.match(exposition.text, /^berth_container_memory_bytes\{service="talker",replica="1",container="[^"]+"\} [1-9]\d*$/m, '/metrics: the container\'s memory')
    t.match(exposition.text, /^berth_container_cpu_seconds\{service="talker",replica="1",container="[^"]+"\} [\d.e-]+$/m, 'and its CPU seconds')

    await tm('send-keys', '-t', 'tui', '+')
    await pollUntil(async () => /talker\s+2\/2\s+running/.test(await screen()), { timeout: 30_000, what: '+ to scale to 2' })
    const status = await api<{ services: Array<{ name: string, replicas: number }> }>(kernel, 'GET', '/api/v1/status', { token })
    t.equal(status.body.services.find(s => s.name === 'talker')?.replicas, 2, '+ scaled the service')

    await tm('send-keys', '-t', 'tui', 'l')
    await pollUntil(async () => (await screen()).includes('hello from talker'), { timeout: 10_000, what: 'l to show the logs' })
    t.pass('l shows the log lines')

    writeServices(cwd, { [project]: `[[service]]\nname = "talker"\nimage = "${image}"\ncommand = ["/bin/busybox", "sh", "-c", "echo hello from the canary; exec /bin/busybox sleep 3600"]\n` })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy?service=talker', { token, body: { canary: { weight: 20 } } })).status, 200, 'a canary of talker')
    const withCanary = await pollUntil(async () => { const s = await screen(); return /talker\s+2\/2\s+running \+canary/.test(s) && /takes 20% of requests · p promote/.test(s) && s }, { timeout: 20_000, what: 'the canary drawn, running' })
    t.match(withCanary, /Canary of talker: .* takes 20% of requests · p promote · b roll back/, 'its image, hash and weight')
    await tm('send-keys', '-t', 'tui', 'p')
    // The canary's spec (the service file, one replica) is what promote rolls out.
    await pollUntil(async () => { const s = await screen(); return /talker\s+1\/1\s+running\s/.test(s) && !s.includes('+canary') && s.includes('promoting talker: done') }, { timeout: 60_000, what: 'p to promote the canary' })
    const promoted = await api<{ services: Array<{ name: string, canary?: unknown }> }>(kernel, 'GET', '/api/v1/status', { token })
    t.equal(promoted.body.services.find(s => s.name === 'talker')?.canary, undefined, 'p promoted it: no canary left')

    await tm('send-keys', '-t', 'tui', 'q')
    await pollUntil(async () => (await screen()).includes('tui-exited=0'), { timeout: 10_000, what: 'q to quit' })
    t.pass('q quits, with exit code 0')

    // berth exec: output, errors and exit code for a deployer; refused to a viewer; a replica that does not run.
    const as = async (role: 'deployer' | 'viewer', ...args: string[]): ReturnType<typeof runCli> =>
      await runCli(['exec', 'talker', ...args], { env: { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: await tokenFor(kernel, role) } })
    t.same(Object.values(await as('deployer', '--', '/bin/busybox', 'sh', '-c', 'echo out; echo err >&2; exit 3')), [3, 'out\n', 'err\n'], 'a deployer\'s command: its output, its errors, its exit code')
    const refused = await as('viewer', '--', '/bin/busybox', 'true')
    t.match(refused, { code: 1, stdout: '', stderr: /^berth: token "test-viewer" has role viewer; GET \/api\/v1\/services\/:name\/exec needs deployer\n$/ }, 'a viewer\'s is refused')
    t.match(await as('deployer', '--replica', '3', '--', '/bin/busybox', 'true'), { code: 1, stderr: /^berth: service "talker" has no running replica 3 on this node\n$/ })
    t.match(await as('deployer', '--replica', 'two', '--', 'true'), { code: 2, stderr: /replica number/ }, 'a replica that is not a number: a usage error')
    t.match(captured.lines(), /"audit":"exec","by":"test-deployer","service":"talker","replica":1,"container":"[^"]+","command":\["\/bin\/busybox","sh","-c","echo out; echo err >&2; exit 3"\],"tty":false,"exit_code":3/, 'who ran what, where, and how it ended, in the log')

    // In a terminal: a TTY, keys as typed, and the shell's exit code.
    await tm('new-window', '-t', 'tui', '-n', 'shell', '-e', `BERTH_URL=${kernel.url('control').href}`, '-e', `BERTH_TOKEN=${token}`, '-e', 'NODE_OPTIONS=',
      `${process.execPath} ${CLI} exec talker -- /bin/busybox sh; echo exec-exited=$?; sleep 30`)
    const shell = async (): Promise<string> => await tm('capture-pane', '-p', '-t', 'tui:shell')
    await pollUntil(async () => /^\/ #/m.test(await shell()), { timeout: 10_000, what: 'the shell\'s prompt' })
    await tm('send-keys', '-t', 'tui:shell', 'tty; echo $((6 * 7))', 'Enter')
    const answered = await pollUntil(async () => { const s = await shell(); return /^42$/m.test(s) && s }, { timeout: 10_000, what: 'the shell to answer' })
    t.match(answered, /^\/dev\/pts\/\d+$/m, 'the command has a TTY')
    await tm('send-keys', '-t', 'tui:shell', 'exit 4', 'Enter')
    await pollUntil(async () => (await shell()).includes('exec-exited=4'), { timeout: 10_000, what: 'the shell\'s exit code' })
    t.pass('an interactive shell, its exit code passed on')

    // A client that vanishes mid-command (SIGKILL): the run is logged as ended without an exit code, and exec goes on serving.
    const client = spawn(process.execPath, [CLI, 'exec', 'talker', '--', '/bin/busybox', 'sh', '-c', 'echo started; exec /bin/busybox sleep 300'],
      { env: { ...process.env, NODE_OPTIONS: '', BERTH_URL: kernel.url('control').href, BERTH_TOKEN: await tokenFor(kernel, 'deployer') }, stdio: ['ignore', 'pipe', 'ignore'] })
    let printed = ''
    client.stdout.on('data', (chunk: Buffer) => { printed += chunk.toString() })
    await pollUntil(() => printed.includes('started'), { timeout: 10_000, what: 'the command to start' })
    client.kill('SIGKILL')
    await pollUntil(() => /"command":\["\/bin\/busybox","sh","-c","echo started; exec \/bin\/busybox sleep 300"\],"tty":false,"exit_code":null/.test(captured.lines()), { timeout: 10_000, what: 'the vanished client\'s run in the log' })
    t.pass('a client gone mid-command: its run logged as ended without an exit code')
    t.same(Object.values(await as('deployer', '--', '/bin/busybox', 'echo', 'again')), [0, 'again\n', ''], 'and exec goes on serving')
  })
}

t.test('without a terminal, tui refuses in one line', async t => {
  const answer = await runCli(['tui'], { env: { BERTH_URL: 'http://127.0.0.1:1', BERTH_TOKEN: 'x' } })
  t.same([answer.code, answer.stderr], [2, 'berth: berth tui needs a terminal (stdin is not a TTY)\n'])
})
