// Every product can be taken out: with the plugins of one product removed (orchestration, telemetry,
// campaign in turn), the kernel and the remaining plugins type-check, load, and order their
// dependencies, so a hidden dependency of one product on another fails the build. Each run works on a
// copy of kernel/, plugins/ and wasm/ without that product's folders.
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
    for (const part of ['kernel', 'plugins', 'wasm', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true, filter: source => !source.includes(`${join(ROOT, 'wasm', 'build')}`) })
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
  })
}
