// `berth server` tells a person at a terminal where things are. Run on a real pseudo-terminal (python3's
// pty module), every plugin with `--dev`, it prints one block after start: each listener's address and
// what it serves, where the admin token is, how to sign in to the telemetry dashboard and to the
// campaign app, with the development IDP's new passwords, which appear there once and nowhere in the
// log. With its output in pipes there is no such block: standard output is JSON log lines only.
import t, { type Test } from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { boundUrls, exited, spawnCliForTest, untilAnswers, type RunningCli } from '../support/cli.js'
import { ensureDebianPackages, requireComponent } from '../support/component.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

/** Every listener on loopback on port 0 (any free one, read back from the server), no container engine. */
async function workdir (t: Test): Promise<{ dir: string, env: NodeJS.ProcessEnv }> {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'cluster.toml'), [
    '[server.listeners.control]', 'host = "127.0.0.1"', 'port = 0',
    ...['telemetry', 'app', 'proxy-http', 'proxy-https'].flatMap(name => [`[server.listeners.${name}]`, 'host = "127.0.0.1"'])
  ].join('\n'))
  return { dir, env: { BERTH_DOCKER_SOCKET: join(dir, 'no-engine.sock') } }
}

async function stop (t: Test, server: RunningCli): Promise<void> {
  server.kill('SIGTERM')
  t.equal(await exited(server), 0, 'stops cleanly')
}

/** The development IDP's users and passwords, from the file the server keeps them in. */
function keptPasswords (dir: string): Array<[string, string]> {
  return [...readFileSync(join(dir, '.berth', 'campaign-dev-idp-passwords'), 'utf8').matchAll(/^(\w+) (\S+)$/gm)].map(m => [m[1], m[2]])
}

const python = await requireComponent(t, 'python3', async () => { await ensureDebianPackages(['python3']); return 'python3' })

if (python !== undefined) {
  t.test('on a terminal: one block with each listener, the admin token and how to sign in', async t => {
    const { dir, env } = await workdir(t)
    const server = spawnCliForTest(t, ['server', '--dev'], { cwd: dir, env, terminal: true })
    const state = join(dir, '.berth')
    // The block is written at once; the terminal relay may hand it over in pieces.
    const shown = await pollUntil(() => {
      if (server.exitCode !== null) throw new Error(`server exited: ${server.output()}`)
      const text = server.output().replace(/\r\n/g, '\n')
      return /\n {2}telemetry dashboard: .*\n/.test(text) && /\n {2}campaign app: .*\n {4}admin \S+ .*readonly \S+\n/.test(text) && text
    }, { timeout: 30_000, what: 'the start-up summary on the terminal' })
    const lines = shown.split('\n')
    const first = lines.findIndex(line => line.startsWith('berth server is running'))
    const block = lines.slice(first, lines.findIndex((line, i) => i > first && !line.startsWith('  ')))
    t.equal(lines.filter(line => line.startsWith('berth server is running')).length, 1, 'one block')
    t.match(block[0], new RegExp(`^berth server is running \\(pid \\d+, state in ${state}\\)$`))
    const url = (name: string): URL => {
      const line = block.find(l => new RegExp(`^ {2}\\S+ +${name}: `).test(l))
      if (line === undefined) throw new Error(`no line for the ${name} listener in:\n${block.join('\n')}`)
      return new URL(line.trim().split(/\s+/)[0])
    }
    t.match(url('control').href, /^http:\/\/127\.0\.0\.1:\d+\/$/, 'the control listener on the port it was bound to')
    t.match(block.join('\n'), /control: the control API, \/api\/v1\/health and \/metrics\n/)
    t.match(block.join('\n'), /telemetry: device ingest, the telemetry API and its dashboard \(\/dashboard\/\)\n/)
    t.match(block.join('\n'), /app: the campaign web application\n/)
    t.equal(url('proxy-http').protocol, 'http:')
    t.equal(url('proxy-https').protocol, 'https:')
    const telemetry = url('telemetry')
    const app = url('app')
    t.ok(block.includes(`  admin token: ${state}/admin.token (berth commands on this machine read it; API clients send it as "Authorization: Bearer <token>")`), 'where the admin token is')
    t.ok(block.includes(`  telemetry dashboard: ${telemetry.href}dashboard/ — sign in as admin with the password in ${state}/telemetry-admin-password`), 'how to sign in to the dashboard')
    const passwords = keptPasswords(dir)
    t.same(passwords.map(([login]) => login), ['admin', 'staff', 'volunteer', 'readonly'])
    const campaign = block.findIndex(line => line.startsWith('  campaign app: '))
    t.same(block.slice(campaign, campaign + 2), [
      `  campaign app: ${app.href} — sign in through the development identity provider; new passwords (kept in ${state}/campaign-dev-idp-passwords):`,
      `    ${passwords.map(pair => pair.join(' ')).join('   ')}`
    ], 'how to sign in to the campaign app, with the passwords drawn for this person')
    for (const [login, password] of passwords) t.equal(shown.split(password).length - 1, 1, `${login}'s password is shown once, in the block and not in the log`)

    t.equal((await fetch(new URL('/api/v1/health', url('control')))).status, 200, 'the control API is where the block says')
    t.same(await (await fetch(new URL('/auth/mode', telemetry))).json(), { mode: 'basic' }, 'so is the telemetry API')
    const signIn = await fetch(new URL('/auth', app), { redirect: 'manual' })
    t.match(signIn.headers.get('location'), /^http:\/\/127\.0\.0\.1:\d+\/realms\/campaign\/protocol\/openid-connect\/auth\?/, 'and the campaign app, signing in through the development IDP')
    await stop(t, server)
  })
}

t.test('not on a terminal: standard output is JSON log lines only, with no block and no password', async t => {
  const { dir, env } = await workdir(t)
  const server = spawnCliForTest(t, ['server', '--dev'], { cwd: dir, env })
  const { control } = await boundUrls(server, 'berth server')
  await untilAnswers(server, new URL('/api/v1/health', control), 'berth server')
  await stop(t, server)
  const lines = server.stdout().trim().split('\n')
  t.same(lines.filter(line => { try { return typeof JSON.parse(line) !== 'object' } catch { return true } }), [], 'every line is JSON')
  t.notMatch(server.output(), 'berth server is running', 'no block')
  t.notMatch(server.output(), 'admin token:', 'no note')
  for (const [login, password] of keptPasswords(dir)) t.notMatch(server.output(), password, `${login}'s password is only in its 0600 file`)
})
