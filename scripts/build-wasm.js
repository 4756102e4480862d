// Compiles the AssemblyScript codecs (wasm/assembly) into wasm/build/*.wasm for each target in asconfig.json.
// Usage: node scripts/build-wasm.js [target ...] [--force]   (default: every target; up-to-date outputs are skipped)
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const config = JSON.parse(readFileSync(join(root, 'asconfig.json'), 'utf8'))
const compilerPackage = createRequire(import.meta.url).resolve('assemblyscript/package.json')
const ascBin = join(dirname(compilerPackage), 'bin', 'asc.js')

const args = process.argv.slice(2)
const force = args.includes('--force')
const requested = args.filter((arg) => !arg.startsWith('--'))
const targets = requested.length > 0 ? requested : Object.keys(config.targets)
const unknown = targets.filter((name) => !(name in config.targets))
if (unknown.length > 0) {
  console.error(`build-wasm: unknown target(s) ${unknown.join(', ')}; asconfig.json has ${Object.keys(config.targets).join(', ')}`)
  process.exit(2)
}

/** Every file whose change requires a rebuild: sources, the shared layout constants, config and compiler. */
function inputs() {
  const sources = readdirSync(join(root, 'wasm', 'assembly'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(root, 'wasm', 'assembly', name))
  return [...sources, join(root, 'wasm', 'layout.ts'), join(root, 'asconfig.json'), compilerPackage]
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs
  } catch {
    return -1
  }
}

const newestInput = Math.max(...inputs().map(mtime))

function compile(target) {
  const outFile = join(root, config.targets[target].outFile)
  if (!force && mtime(outFile) >= newestInput) {
    console.log(`build-wasm: ${target} up to date (${config.targets[target].outFile})`)
    return Promise.resolve(0)
  }
  mkdirSync(dirname(outFile), { recursive: true })
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ascBin, '--config', 'asconfig.json', '--target', target], {
      cwd: root,
      stdio: 'inherit',
    })
    child.on('error', (error) => {
      console.error(`build-wasm: cannot start asc: ${error.message}`)
      resolve(1)
    })
    child.on('exit', (code) => {
      const ok = code === 0
      console.log(`build-wasm: ${target} ${ok ? 'built' : 'FAILED'} in ${Date.now() - started} ms (${config.targets[target].outFile})`)
      resolve(ok ? 0 : 1)
    })
  })
}

const codes = await Promise.all(targets.map(compile))
process.exitCode = codes.find((code) => code !== 0) ?? 0
