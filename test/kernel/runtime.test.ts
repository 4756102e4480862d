// The Node.js Berth runs on (docs/runtime.md): npm installs Node.js 24 as the package's `node`
// dependency; the tests run on it (npm and tap put node_modules/.bin first on PATH); the `berth`
// command reached through a link, as `npm link` makes it, starts the CLI on it whatever `node` comes
// first on PATH; and the unit `berth install-service` writes from there names it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { tempDir } from '../support/tmp.js'

const run = promisify(execFile)
const ROOT = realpathSync(fileURLToPath(new URL('../..', import.meta.url)))
const OWN_NODE = join(ROOT, 'node_modules', 'node', 'bin', 'node')
const LAUNCHER = join(ROOT, 'bin', 'berth')
/** The environment of a shell without the test's loaders and without node_modules/.bin on PATH. */
const { NODE_OPTIONS: _loaders, ...env } = process.env
env.PATH = (process.env.PATH ?? '').split(':').filter(dir => !dir.endsWith('node_modules/.bin')).join(':')

/** npm and npx put the package's node_modules/.bin first on PATH. */
const throughNpm = (process.env.PATH ?? '').split(':')[0] === join(ROOT, 'node_modules', '.bin')

t.test('npm installs Node.js 24', async t => {
  const { stdout } = await run(OWN_NODE, ['-v'])
  t.match(stdout.trim(), /^v24\./, `node_modules/node/bin/node is ${stdout.trim()}`)
})

t.test('tests started through npm or npx run on it', { skip: throughNpm ? false : 'not started through npm or npx' }, async t => {
  t.equal(realpathSync(process.execPath), realpathSync(OWN_NODE), `this test runs on ${process.execPath} (${process.version})`)
})

t.test('the berth command, through a link, runs on the package\'s Node.js and writes it into the unit', async t => {
  const dir = tempDir(t)
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  symlinkSync(LAUNCHER, join(bin, 'berth'))
  const work = join(dir, 'work')
  mkdirSync(join(work, 'services'), { recursive: true })
  writeFileSync(join(work, 'cluster.toml'), '')
  const units = join(dir, 'units')
  mkdirSync(units)
  const { stdout: version } = await run(join(bin, 'berth'), ['--version'], { cwd: work, env })
  t.equal(version.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version, 'berth --version')
  await run(join(bin, 'berth'), ['install-service', '--unit-dir', units], { cwd: work, env })
  const execStart = /^ExecStart=(\S+) (\S+)/m.exec(readFileSync(join(units, 'berth.service'), 'utf8'))
  t.equal(execStart?.[1], OWN_NODE, 'ExecStart names the package\'s Node.js')
  t.equal(execStart?.[2], join(ROOT, 'dist', 'kernel', 'cli', 'cli.js'), 'and the CLI of the package')
})
