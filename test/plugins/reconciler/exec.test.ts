// `berth exec` with piped input against a real Docker engine: input and its end sent before the command
// has started are delivered (the command reads them and exits), and revoking the token of an open
// session ends it within seconds.
import t from 'tap'
import { CLI, runCli } from '../../support/cli.js'
import { requireComponent } from '../../support/component.js'
import { busyboxImage, dockerEngine } from '../../support/docker.js'
import { api, reconcilerKernel, writeServices } from '../../support/orchestration.js'
import { pollUntil } from '../../support/poll.js'
import { spawn } from 'node:child_process'

const docker = await requireComponent(t, 'docker', dockerEngine)

if (docker !== undefined) {
  t.test('piped input reaches the command; a revoked token ends its session', async t => {
    const image = await busyboxImage(docker)
    const { kernel, cwd, project, token } = await reconcilerKernel(t, docker)
    writeServices(cwd, { [project]: `[[service]]\nname = "shell"\nimage = "${image}"\ncommand = ["/bin/busybox", "sleep", "3600"]\n` })
    t.equal((await api(kernel, 'POST', '/api/v1/deploy', { token })).status, 200)
    const created = await api<{ id: string, token: string }>(kernel, 'POST', '/api/v1/tokens', { token, body: { name: 'ops', role: 'deployer' } })
    const env = { BERTH_URL: kernel.url('control').href, BERTH_TOKEN: created.body.token }

    const piped = await runCli(['exec', 'shell', '--', '/bin/busybox', 'sh'], { env, input: 'echo one\necho two >&2\nexit 5\n', timeout: 20_000 })
    t.same([piped.code, piped.stdout, piped.stderr], [5, 'one\n', 'two\n'], 'the script piped in ran, and its end ended the shell')
    const counted = await runCli(['exec', 'shell', '--', '/bin/busybox', 'wc', '-c'], { env, input: 'x'.repeat(100_000), timeout: 20_000 })
    t.same([counted.code, counted.stdout.trim()], [0, '100000'], 'every byte of a larger input, then its end')

    const client = spawn(process.execPath, [CLI, 'exec', 'shell', '--', '/bin/busybox', 'sh', '-c', 'echo started; exec /bin/busybox sleep 300'],
      { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    t.teardown(() => { client.kill('SIGKILL') })
    let printed = ''
    let errors = ''
    client.stdout.on('data', (chunk: Buffer) => { printed += chunk.toString() })
    client.stderr.on('data', (chunk: Buffer) => { errors += chunk.toString() })
    const exit = new Promise<number | null>(resolve => client.once('exit', resolve))
    await pollUntil(() => printed.includes('started'), { timeout: 10_000, what: 'the command to start' })
    t.equal((await api(kernel, 'DELETE', `/api/v1/tokens/${created.body.id}`, { token })).status, 200, 'the token is revoked')
    // A deadline only so that a session left open fails the test rather than hanging it.
    await pollUntil(() => client.exitCode !== null, { timeout: 10_000, what: 'the session to end after its token was revoked' })
    const code = await exit
    t.equal(code, 1, 'the client exits with an error')
    t.match(errors, /^berth: the token of this session was revoked\n$/, 'saying why')
  })
}
