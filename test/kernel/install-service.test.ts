// `berth install-service`: the unit it writes for the master passes `systemd-analyze verify` (Debian's
// systemd), written and checked by an unprivileged user into a directory of the test's (--unit-dir),
// never the host's; it runs `berth server` in the directory holding services/ with the right to bind
// ports below 1024; and its refusals are one line each.
import t from 'tap'
import { execFile } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CLI, runCli } from '../support/cli.js'
import { ensureDebianPackages, isRoot, requireComponent } from '../support/component.js'
import { tempDir } from '../support/tmp.js'

const run = promisify(execFile)
/** Run as nobody, as an operator without root would. */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']

const analyze = await requireComponent(t, 'systemd-analyze', async () => { await ensureDebianPackages(['systemd']); return 'systemd-analyze' })

if (analyze !== undefined && isRoot()) {
  t.test('the master\'s unit, written and verified by an unprivileged user', async t => {
    const dir = tempDir(t)
    chmodSync(dir, 0o755)
    mkdirSync(join(dir, 'services'))
    const units = tempDir(t)
    chmodSync(units, 0o777)
    const { NODE_OPTIONS: _loaders, ...env } = process.env
    const { stdout } = await run(NOBODY[0], [...NOBODY.slice(1), process.execPath, CLI, 'install-service', '--unit-dir', units], { cwd: dir, env })
    const unit = join(units, 'berth.service')
    t.equal(stdout, `wrote ${unit}\n`)
    const text = readFileSync(unit, 'utf8')
    t.match(text, `\nWorkingDirectory=${dir}\n`, 'runs where services/ is')
    t.match(text, new RegExp(`\\nExecStart=${process.execPath} ${CLI} --state-dir ${dir}/\\.berth server\\n`), 'berth server, with this state directory')
    t.match(text, '\nAmbientCapabilities=CAP_NET_BIND_SERVICE\n', 'may bind ports below 1024')
    t.match(text, '\nWantedBy=multi-user.target\n')
    const verified = await run(NOBODY[0], [...NOBODY.slice(1), analyze, 'verify', unit]).then(() => 0, (err: { code: number, stderr: string }) => { t.comment(err.stderr); return err.code })
    t.equal(verified, 0, 'systemd-analyze verify accepts it')
  })
}

t.test('install-service refuses what it cannot do, in one line', async t => {
  const empty = tempDir(t)
  const nowhere = await runCli(['install-service', '--unit-dir', tempDir(t)], { cwd: empty })
  t.same([nowhere.code, nowhere.stderr], [2, `berth: ${empty} holds neither services/ nor cluster.toml: run this where they are, or pass --working-dir\n`])
  const spaced = await runCli(['install-service', '--leader', 'master 6880', '--unit-dir', tempDir(t)], { cwd: empty })
  t.same([spaced.code, spaced.stderr], [2, 'berth: --leader "master 6880" is not <host>:<port>\n'])
})

t.test('with --leader, the unit runs an agent joining that leader', async t => {
  const dir = tempDir(t)
  const units = tempDir(t)
  const written = await runCli(['install-service', '--leader', 'master.example:6880', '--unit-dir', units], { cwd: dir })
  t.equal(written.code, 0, written.stderr)
  const text = readFileSync(join(units, 'berth.service'), 'utf8')
  t.match(text, '\nDescription=Berth agent (joins the leader at master.example:6880)\n')
  t.match(text, new RegExp(`\\nExecStart=${process.execPath} ${CLI} --state-dir ${dir}/\\.berth server --join master\\.example:6880\\n`), 'berth server --join, with this state directory')
  t.match(text, `\nWorkingDirectory=${dir}\n`, 'an agent needs no services/ of its own')
})
