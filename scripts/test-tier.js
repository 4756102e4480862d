// The fast tier of the test suite: the test files that need no external component. A file is in it
// when nothing it imports statically, directly or through other modules of the repository, starts a
// daemon, a browser, a container engine or a child process (the support modules named below), it
// spawns none itself, and it asks for no component (requireComponent, ensureDebianPackages, or a run
// on the shared backends). Support modules load what only some runs need with import(), which is not
// followed; `npm run test:fast` sets BERTH_TEST_TIER=fast, under which requireComponent fails, so a
// file placed here wrongly fails there. `npm test` runs every file.
// Usage: node scripts/test-tier.js [--list]   (prints the fast tier's files, one a line; --list adds
// why each other file is left out); scripts/test-fast.js runs them.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** Support modules that start something outside the test's process. */
const EXTERNAL = ['daemon', 'databases', 'disk', 'docker', 'engines', 'etcd', 'firmware', 'nginx', 'orchestration', 'pebble',
  'postgres', 'redis', 's3', 'smtp', 'chromium', 'campaign-browser', 'cli', 'verdaccio', 'bluez-standin'].map(name => join(ROOT, 'test/support', `${name}.ts`))
/** Folders whose files are never in the fast tier: end-to-end runs and fuzzing. */
const SLOW_FOLDERS = ['test/e2e', 'test/fuzz'].map(folder => join(ROOT, folder))
/** Static imports and re-exports of values (type-only ones and import() are not followed). */
const IMPORT = /^[ \t]*(?:(?:import|export)(?![ \t]+type\b)[^;'"()]*?\bfrom|import)[ \t]*['"](\.{1,2}\/[^'"]+)['"]/gm
const SPAWNS = /(?<![.\w])(?:spawn|execFile|exec|fork)(?:Sync)?\s*\(|from 'node:child_process'/
/** A test file that asks for a component itself. */
const ASKS = /(?<![.\w])(?:requireComponent|ensureDebianPackages|onSharedBackendsToo|onPostgresToo)\s*\(/

function testFiles (dir) {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'support' || name === 'fixtures' ? [] : testFiles(path)
    return name.endsWith('.test.ts') ? [path] : []
  })
}

/** The source file an import names (`./x.js` is `./x.ts` or `./x.tsx` in the sources). */
function sourceOf (from, specifier) {
  const path = resolve(dirname(from), specifier)
  for (const candidate of [path, path.replace(/\.js$/, '.ts'), path.replace(/\.js$/, '.tsx'), `${path}.ts`, join(path, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate
  }
  return undefined
}

/** Why `file` needs more than its own process (the first external module it reaches), or undefined. */
function externalReason (file) {
  if (SLOW_FOLDERS.some(folder => file.startsWith(folder))) return 'an end-to-end or fuzzing folder'
  const seen = new Set([file])
  const queue = [file]
  while (queue.length > 0) {
    const at = queue.shift()
    if (EXTERNAL.includes(at)) return `imports ${relative(ROOT, at)}`
    const text = readFileSync(at, 'utf8')
    if (at === file && ASKS.test(text)) return 'asks for a component'
    if (at.startsWith(join(ROOT, 'test')) && at !== join(ROOT, 'test/support/component.ts') && SPAWNS.test(text)) return `${relative(ROOT, at)} starts a child process`
    for (const [, specifier] of text.matchAll(IMPORT)) {
      const next = sourceOf(at, specifier)
      if (next !== undefined && !seen.has(next)) {
        seen.add(next)
        queue.push(next)
      }
    }
  }
  return undefined
}

/** Every test file with why it is left out of the fast tier (undefined: in it), paths from the repository's root. */
export function testTiers () {
  return testFiles(join(ROOT, 'test')).sort().map(file => ({ file: relative(ROOT, file), outside: externalReason(file) }))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const { file, outside } of testTiers()) {
    if (outside === undefined) console.log(file)
    else if (process.argv.includes('--list')) console.log(`# ${file}: ${outside}`)
  }
}
