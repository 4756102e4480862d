// `berth install-service`: the unit it writes for the master, and one per product, pass `systemd-analyze
// verify` (Debian's systemd), written and checked by an unprivileged user into a directory of the
// test's (--unit-dir), never the host's; each runs `berth server` in the directory holding services/
// with NODE_ENV=production, room for many connections and the right to bind ports below 1024; a
// product's unit runs only its plugins, with its own state directory and control port; and the
// refusals are one line each.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { chmodSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { CLI, runCli } from '../../support/cli.js'
import { ensureDebianPackages, isRoot, requireComponent } from '../../support/component.js'
import { tempDir } from '../../support/tmp.js'

const run = promisify(execFile)
/** Run as nobody, as an operator without root would. */
const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']
const { NODE_OPTIONS: _loaders, ...childEnv } = process.env

/** `berth install-service ...args` run as nobody in `cwd`; its standard output. */
async function installAsNobody (cwd: string, args: string[]): Promise<string> {
  return (await run(NOBODY[0], [...NOBODY.slice(1), process.execPath, CLI, 'install-service', ...args], { cwd, env: childEnv })).stdout
}

/** A working directory with services/ and a unit directory, both usable by nobody. */
function directories (t: Test): { dir: string, units: string } {
  const dir = tempDir(t)
  chmodSync(dir, 0o755)
  mkdirSync(join(dir, 'services'))
  const units = tempDir(t)
  chmodSync(units, 0o777)
  return { dir, units }
}

const analyze = await requireComponent(t, 'systemd-analyze', async () => { await ensureDebianPackages(['systemd']); return 'systemd-analyze' })

if (analyze !== undefined && isRoot()) {
  const verify = async (t: Test, unit: string): Promise<void> => {
    const verified = await run(NOBODY[0], [...NOBODY.slice(1), analyze, 'verify', unit]).then(() => 0, (err: { code: number, stderr: string }) => { t.comment(err.stderr); return err.code })
    t.equal(verified, 0, `systemd-analyze verify accepts ${basename(unit)}`)
  }

  t.test('the master\'s unit, written and verified by an unprivileged user', async t => {
    const { dir, units } = directories(t)
    const stdout = await installAsNobody(dir, ['--unit-dir', units])
    const unit = join(units, 'berth.service')
    t.equal(stdout, `wrote ${unit}\n`)
    const text = readFileSync(unit, 'utf8')
    t.match(text, `\nWorkingDirectory=${dir}\n`, 'runs where services/ is')
    t.match(text, new RegExp(`\\nExecStart=${process.execPath} ${CLI} --state-dir ${dir}/\\.berth server\\n`), 'berth server, with this state directory')
    t.match(text, '\nEnvironment=NODE_ENV=production\n', 'in production: development aids are refused')
    t.notMatch(text, 'BERTH_PLUGINS', 'every plugin')
    t.match(text, '\nAmbientCapabilities=CAP_NET_BIND_SERVICE\n', 'may bind ports below 1024')
    t.match(text, '\nLimitNOFILE=65536\n', 'may hold many connections')
    t.match(text, '\nWantedBy=multi-user.target\n')
    await verify(t, unit)
  })

  t.test('one unit per product: its plugins only, its own state directory and control port, each verified', async t => {
    const { dir, units } = directories(t)
    const products = [
      ['orchestration', '6880', 'backup,cluster,databases,nodes,notifications,proxy,reconciler,secrets,tokens,webhooks'],
      ['telemetry', '6891', 'ingest,symbolication'],
      ['campaign', '6892', 'campaign']
    ]
    for (const [product, port, plugins] of products) {
      const stdout = await installAsNobody(dir, ['--unit-dir', units, '--product', product, ...(port === '6880' ? [] : ['--control-port', port])])
      const unit = join(units, `berth-${product}.service`)
      t.equal(stdout, `wrote ${unit}\n`)
      const text = readFileSync(unit, 'utf8')
      t.match(text, `\nDescription=Berth ${product}: ${plugins.split(',').join(', ')} (control API on :${port})\n`)
      t.match(text, `\nEnvironment=NODE_ENV=production\nEnvironment=BERTH_PLUGINS=${plugins}\nEnvironment=BERTH_CONTROL_PORT=${port}\n`, `${product}: its plugins and control port`)
      t.match(text, new RegExp(`\\nExecStart=${process.execPath} ${CLI} --state-dir ${dir}/\\.berth-${product} server\\n`), `${product}: its own state directory`)
      t.match(text, '\nLimitNOFILE=65536\n')
      await verify(t, unit)
    }
  })
}

t.test('install-service refuses what it cannot do, in one line', async t => {
  const empty = tempDir(t)
  const nowhere = await runCli(['install-service', '--unit-dir', tempDir(t)], { cwd: empty })
  t.same([nowhere.code, nowhere.stderr], [2, `berth: ${empty} holds neither services/ nor cluster.toml: run this where they are, or pass --working-dir\n`])
  const spaced = await runCli(['install-service', '--leader', 'master 6880', '--unit-dir', tempDir(t)], { cwd: empty })
  t.same([spaced.code, spaced.stderr], [2, 'berth: --leader "master 6880" is not <host>:<port>\n'])

  const dir = tempDir(t)
  mkdirSync(join(dir, 'services'))
  const units = tempDir(t)
  const refusals: Array<[string[], string]> = [
    [['--product', 'billing'], 'berth: --product billing: no plugin belongs to it (products: campaign, orchestration, telemetry)\n'],
    [['--product', 'telemetry', '--leader', 'master:6880'], 'berth: --product cannot be combined with --leader: an agent runs what its leader sends\n'],
    [['--product', 'telemetry', '--control-port', '70000'], 'berth: --control-port 70000 is not a TCP port (1-65535)\n']
  ]
  for (const [args, stderr] of refusals) {
    const refused = await runCli(['install-service', '--unit-dir', units, ...args], { cwd: dir })
    t.same([refused.code, refused.stderr], [2, stderr], args.join(' '))
  }
  t.same(readdirSync(units), [], 'nothing written')
  t.equal((await runCli(['install-service', '--unit-dir', units, '--product', 'orchestration'], { cwd: dir })).code, 0)
  const clash = await runCli(['install-service', '--unit-dir', units, '--product', 'telemetry'], { cwd: dir })
  t.same([clash.code, clash.stderr], [2, `berth: --control-port 6880 is already the control port of ${join(units, 'berth-orchestration.service')}: give each product's process its own (--control-port)\n`], 'two processes cannot share a control port')
  t.equal((await runCli(['install-service', '--unit-dir', units, '--product', 'orchestration'], { cwd: dir })).code, 0, 'a unit may be written again')
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
  t.match(text, '\nEnvironment=NODE_ENV=production\n')
})
