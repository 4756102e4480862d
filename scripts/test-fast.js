// `npm run test:fast`: the fast tier (scripts/test-tier.js) with the files of a folder in one
// process, at most FILES_A_PROCESS of them: a generated file under .tap/fast imports them in turn,
// so Node, tsx and tap start once a group instead of once a file (a 70 ms file costs 3–6 s on its
// own). Files the suite runs alone (package.json's tap.serial: under load or against a clock) are
// left to `npm test`. Groups run JOBS at a time: most of their time is spent waiting, not computing.
// BERTH_TEST_TIER=fast makes requireComponent fail, so a file placed in the tier wrongly fails.
// Usage: node scripts/test-fast.js [tap options]
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { testTiers } from './test-tier.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, '.tap', 'fast')
const FILES_A_PROCESS = 6
const JOBS = 4
const alone = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).tap.serial

const folders = new Map()
for (const { file, outside } of testTiers()) {
  if (outside !== undefined || alone.some(path => file === path || file.startsWith(`${path}/`))) continue
  folders.set(dirname(file), [...(folders.get(dirname(file)) ?? []), file])
}
rmSync(OUT, { recursive: true, force: true })
mkdirSync(OUT, { recursive: true })
const groups = [...folders].flatMap(([folder, files]) => Array.from({ length: Math.ceil(files.length / FILES_A_PROCESS) }, (_, n) => {
  const group = join(OUT, `${folder.replaceAll('/', '-')}-${n + 1}.test.mjs`)
  const mine = files.slice(n * FILES_A_PROCESS, (n + 1) * FILES_A_PROCESS)
  writeFileSync(group, `// Fast-tier files of ${folder}, in one process (scripts/test-fast.js).\n${mine.map(file => `await import(${JSON.stringify(relative(OUT, join(ROOT, file)))})\n`).join('')}`)
  return relative(ROOT, group)
}))
console.error(`fast tier: ${[...folders.values()].flat().length} files in ${groups.length} processes, ${JOBS} at a time`)
const tap = spawnSync('npx', ['tap', `--jobs=${JOBS}`, ...process.argv.slice(2), ...groups], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, BERTH_TEST_TIER: 'fast' } })
process.exit(tap.status ?? 1)
