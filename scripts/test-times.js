// Each test file's time in its latest run, from the results tap keeps (.tap/test-results/<file>.tap,
// whose last `# time=` line is the file's own; results of files that no longer exist are left out):
// all of them into .tap/test-times.txt, slowest first, and the slowest printed. tap's `after` script runs it when a run ends (test/support/after-run.ts).
// Usage: node scripts/test-times.js [count]   (default 10)
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const RESULTS = join(ROOT, '.tap', 'test-results')

function resultFiles (dir) {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? resultFiles(path) : name.endsWith('.tap') ? [path] : []
  })
}

/** [seconds, test file] of each result file, slowest first. */
export function testTimes () {
  if (!existsSync(RESULTS)) return []
  return resultFiles(RESULTS).flatMap(path => {
    const file = relative(RESULTS, path).replace(/\.tap$/, '')
    const times = [...readFileSync(path, 'utf8').matchAll(/^# time=([\d.]+)ms$/gm)]
    return times.length === 0 || !existsSync(join(ROOT, file)) ? [] : [[Number(times[times.length - 1][1]) / 1000, file]]
  }).sort((a, b) => b[0] - a[0])
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const times = testTimes()
  writeFileSync(join(ROOT, '.tap', 'test-times.txt'), times.map(([seconds, file]) => `${seconds.toFixed(1)} s  ${file}\n`).join(''))
  const count = Number(process.argv[2] ?? 10)
  console.error(`# the ${Math.min(count, times.length)} slowest of ${times.length} test files (all in .tap/test-times.txt):`)
  for (const [seconds, file] of times.slice(0, count)) console.error(`#   ${seconds.toFixed(1).padStart(6)} s  ${file}`)
}
