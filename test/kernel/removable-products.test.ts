// Every product can be taken out: with the plugins of one product removed (orchestration, telemetry,
// campaign in turn), the kernel and the remaining plugins type-check, load, and order their
// dependencies, and the kernel's own tests pass, so a hidden dependency of one product on another, or
// of the kernel on a product, fails the build. Each run works on a copy of kernel/, plugins/, wasm/
// and test/kernel, test/support without that product's folders. Of the kernel's tests it runs a fast
// subset that needs no product and no build (KERNEL_TESTS: loader, config, scheduler, lifecycle,
// listeners), all in one node process, to keep this file near a minute; the slower ones (http, host,
// store, leaks, graceful-stop) and those of the command (cli, update), which run the build, do not run
// in the copies.
import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { discoverPlugins, orderPlugins } from '../../kernel/loader.js'
import { tempDir } from '../support/tmp.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)
/** The kernel's tests run in each copy (test/kernel/<name>.test.ts). */
const KERNEL_TESTS = ['loader', 'config', 'scheduler', 'lifecycle', 'listeners']
/** This runner's environment without its own settings (loaders, child ids): the copy's tests run as a plain node process. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(name)))

/** Run the kernel tests of the copy in `dir` in one node process; the TAP lines of failures, or '' when all pass. */
async function kernelTests (dir: string): Promise<string> {
  const imports = KERNEL_TESTS.map(name => `await import('./test/kernel/${name}.test.ts')`).join('\n')
  return await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', imports], { cwd: dir, env: cleanEnv, maxBuffer: 16 << 20 })
    .then(() => '', (err: { stdout?: string, stderr?: string }) => {
      const failures = (err.stdout ?? '').split('\n').filter(line => /^\s*not ok /.test(line))
      return failures.length > 0 ? failures.join('\n') : `${err.stderr ?? String(err)}`.slice(0, 4000)
    })
}

/** The plugins of each product, read from the definitions' `product` field. */
function products (): Map<string, string[]> {
  const byProduct = new Map<string, string[]>()
  for (const name of readdirSync(join(ROOT, 'plugins'), { withFileTypes: true }).filter(entry => entry.isDirectory()).map(entry => entry.name)) {
    const product = /^\s*product: '([a-z-]+)'/m.exec(readFileSync(join(ROOT, 'plugins', name, 'index.ts'), 'utf8'))?.[1]
    if (product !== undefined) byProduct.set(product, [...(byProduct.get(product) ?? []), name])
  }
  return byProduct
}

const all = products()
t.same([...all.keys()].sort(), ['campaign', 'orchestration', 'telemetry'], 'three products')

for (const [product, plugins] of all) {
  t.test(`without ${product} (${plugins.join(', ')})`, async t => {
    const dir = tempDir(t)
    for (const part of ['kernel', 'plugins', 'wasm', 'package.json', 'test/kernel', 'test/support']) cpSync(join(ROOT, part), join(dir, part), { recursive: true, filter: source => !source.includes(`${join(ROOT, 'wasm', 'build')}`) })
    for (const name of plugins) rmSync(join(dir, 'plugins', name), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
    const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: object, exclude: string[] }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: base.compilerOptions, include: ['kernel', 'plugins', 'wasm/*.ts'], exclude: base.exclude }))
    const typecheck = await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: dir, maxBuffer: 16 << 20 })
      .then(() => '', (err: { stdout?: string }) => err.stdout ?? String(err))
    t.equal(typecheck, '', 'the kernel and the other products type-check')
    const remaining = await discoverPlugins([join(dir, 'plugins')])
    t.notOk(remaining.some(plugin => plugins.includes(plugin.name)), 'none of its plugins is found')
    t.doesNotThrow(() => orderPlugins(remaining), 'the other plugins load with their dependencies')
    t.equal(await kernelTests(dir), '', `the kernel's tests pass (${KERNEL_TESTS.join(', ')})`)
  })
}
