// Every product stands alone: the kernel with the plugins of one product (orchestration, telemetry,
// campaign in turn) and none of the others type-checks, loads and orders its dependencies, and the
// kernel's own tests pass with no product at all. So a hidden dependency of one product on another,
// or of the kernel on a product, fails the build; and any product can be taken out, since what stays
// stands on the kernel alone. The type checks run in this process through TypeScript's API, on the
// tree itself with the other products' folders hidden from the compiler, sharing the parsed files
// (node's and the libraries' declarations) between the checks. Of the kernel's tests it runs a fast
// subset that needs no product and no build (KERNEL_TESTS: loader, config, scheduler, lifecycle,
// listeners), in one node process, on a copy of kernel/, wasm/ and test/ helpers without any product.
import t from 'tap'
import ts from 'typescript'
import { execFile } from 'node:child_process'
import { cpSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { discoverPlugins, orderPlugins } from '../../kernel/loader.js'
import { tempDir } from '../support/tmp.js'

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)))
const PLUGINS = join(ROOT, 'plugins')
const run = promisify(execFile)
/** The kernel's tests run in the copy without products (test/kernel/<name>.test.ts). */
const KERNEL_TESTS = ['loader', 'config', 'scheduler', 'lifecycle', 'listeners']
/** This runner's environment without its own settings (loaders, child ids): the copy's tests run as a plain node process. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TAP|_TAPJS)|^NODE_OPTIONS$/.test(name)))

/** The plugins of each product, read from the definitions' `product` field; plugins without one belong to none. */
function products (): Map<string, string[]> {
  const byProduct = new Map<string, string[]>()
  for (const name of readdirSync(PLUGINS, { withFileTypes: true }).filter(entry => entry.isDirectory()).map(entry => entry.name)) {
    const product = /^\s*product: '([a-z-]+)'/m.exec(readFileSync(join(PLUGINS, name, 'index.ts'), 'utf8'))?.[1]
    if (product !== undefined) byProduct.set(product, [...(byProduct.get(product) ?? []), name])
  }
  return byProduct
}

/** The project's compiler settings and its product files (kernel, plugins, wasm glue: not tests, benchmarks or scripts). */
function projectFiles (): { options: ts.CompilerOptions, files: string[] } {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: diagnostic => { throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')) }
  })
  if (parsed === undefined) throw new Error('tsconfig.json could not be read')
  const product = [join(ROOT, 'kernel') + sep, PLUGINS + sep, join(ROOT, 'wasm') + sep]
  return { options: parsed.options, files: parsed.fileNames.map(file => resolve(file)).filter(file => product.some(folder => file.startsWith(folder))) }
}

/** Parsed files by name, shared by every check (a file's text is the same in each). */
const parsedFiles = new Map<string, ts.SourceFile | undefined>()

/** Type-check the project's files with the folders in `hidden` absent; the formatted errors, or '' when there are none. */
function typecheckWithout (hidden: string[], options: ts.CompilerOptions, files: string[]): string {
  const isHidden = (path: string): boolean => { const full = resolve(path); return hidden.some(folder => full === folder || full.startsWith(folder + sep)) }
  const host = ts.createCompilerHost(options)
  const { getSourceFile } = host
  host.fileExists = path => !isHidden(path) && ts.sys.fileExists(path)
  host.directoryExists = path => !isHidden(path) && ts.sys.directoryExists(path)
  host.readFile = path => isHidden(path) ? undefined : ts.sys.readFile(path)
  host.getSourceFile = (fileName, languageVersion, onError) => {
    if (isHidden(fileName)) return undefined
    if (!parsedFiles.has(fileName)) parsedFiles.set(fileName, getSourceFile.call(host, fileName, languageVersion, onError))
    return parsedFiles.get(fileName)
  }
  const program = ts.createProgram({ rootNames: files.filter(file => !isHidden(file)), options, host })
  const diagnostics = ts.getPreEmitDiagnostics(program)
  return diagnostics.length === 0
    ? ''
    : ts.formatDiagnostics(diagnostics, { getCanonicalFileName: name => name, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' }).slice(0, 4000)
}

/** Run the kernel tests of the copy in `dir` in one node process; the TAP lines of failures, or '' when all pass. */
async function kernelTests (dir: string): Promise<string> {
  const imports = KERNEL_TESTS.map(name => `await import('./test/kernel/${name}.test.ts')`).join('\n')
  return await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', imports], { cwd: dir, env: cleanEnv, maxBuffer: 16 << 20 })
    .then(() => '', (err: { stdout?: string, stderr?: string }) => {
      const failures = (err.stdout ?? '').split('\n').filter(line => /^\s*not ok /.test(line))
      return failures.length > 0 ? failures.join('\n') : `${err.stderr ?? String(err)}`.slice(0, 4000)
    })
}

const all = products()
t.same([...all.keys()].sort(), ['campaign', 'orchestration', 'telemetry'], 'three products')
const { options, files } = projectFiles()
const discovered = await discoverPlugins([PLUGINS])

for (const [product, plugins] of all) {
  t.test(`${product} alone (${plugins.join(', ')})`, async t => {
    const others = [...all].filter(([name]) => name !== product).flatMap(([, names]) => names)
    t.equal(typecheckWithout(others.map(name => join(PLUGINS, name)), options, files), '', 'the kernel and this product type-check without the others')
    const remaining = discovered.filter(plugin => !others.includes(plugin.name))
    t.ok(plugins.every(name => remaining.some(plugin => plugin.name === name)), 'its plugins are found')
    t.doesNotThrow(() => orderPlugins(remaining), 'they load with their dependencies')
  })
}

t.test('the kernel with no product', async t => {
  const everyProduct = [...all.values()].flat()
  t.equal(typecheckWithout(everyProduct.map(name => join(PLUGINS, name)), options, files), '', 'the kernel type-checks alone')
  const dir = tempDir(t)
  for (const part of ['kernel', 'plugins', 'wasm', 'package.json', 'test/kernel', 'test/support']) cpSync(join(ROOT, part), join(dir, part), { recursive: true, filter: source => !source.includes(`${join(ROOT, 'wasm', 'build')}`) })
  for (const name of everyProduct) rmSync(join(dir, 'plugins', name), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  const remaining = await discoverPlugins([join(dir, 'plugins')])
  t.notOk(remaining.some(plugin => everyProduct.includes(plugin.name)), 'no product\'s plugin is found')
  t.doesNotThrow(() => orderPlugins(remaining), 'the plugins of no product load with their dependencies')
  t.equal(await kernelTests(dir), '', `the kernel's tests pass (${KERNEL_TESTS.join(', ')})`)
})
