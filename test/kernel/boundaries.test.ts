// Module boundaries: dependency-cruiser with the repository's .dependency-cruiser.js reports each kind
// of breach in the fixture tree (test/fixtures/boundaries: a dynamic import of a private kernel module,
// a .tsx file and a file five folders deep reaching another plugin's internals, a type-only import, a
// re-export, a cycle across plugins, a campaign core file importing a module folder while the modules'
// registry may, a campaign module reaching the core other than through the module kits or another module
// other than through its index.ts, a page reaching server code…), finds none in the repository itself,
// and no plugin imports, through any chain of other plugins, a plugin that imports it.
import t from 'tap'
import { execFile } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)))
const FIXTURES = join(ROOT, 'test/fixtures/boundaries')
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs')
const run = promisify(execFile)

interface Violation { rule: { name: string }, from: string, to: string, cycle?: Array<{ name: string }> }
interface CruiseResult {
  modules: Array<{ source: string, dependencies: Array<{ resolved: string, dependencyTypes: string[] }> }>
  summary: { violations: Violation[], totalCruised: number }
}

/** depcruise over `folders` of `cwd` with the repository's configuration, as JSON (it exits 1 on a violation). */
async function cruise (cwd: string, folders: string[]): Promise<CruiseResult> {
  const args = [DEPCRUISE, ...folders, '--config', join(ROOT, '.dependency-cruiser.js'), '--output-type', 'json']
  const out = await run(process.execPath, args, { cwd, maxBuffer: 256 * 1024 * 1024 }).catch((err: { stdout?: string }) => {
    if (err.stdout === undefined || err.stdout === '') throw err
    return { stdout: err.stdout }
  })
  return JSON.parse(out.stdout) as CruiseResult
}

/** A violation as one line: `rule: from → to`, or the cycle for a cycle. */
const line = (v: Violation): string => `${v.rule.name}: ${v.cycle === undefined ? `${v.from} → ${v.to}` : [v.from, ...v.cycle.map(c => c.name)].join(' → ')}`

t.test('each kind of breach in the fixtures is reported, and nothing else', async t => {
  const result = await cruise(FIXTURES, ['kernel', 'plugins', 'test'])
  t.same(result.summary.violations.map(line).sort(), [
    'campaign-core-imports-no-module: plugins/campaign/core.ts → plugins/campaign/modules/polls/polls.ts',
    'campaign-core-imports-no-module: plugins/campaign/modules/kit.ts → plugins/campaign/modules/tallies/tallies.ts',
    'campaign-kit-for-modules: plugins/campaign/kit-user.ts → plugins/campaign/module-kit.ts',
    'campaign-module-no-cycle: plugins/campaign/modules/polls/polls.ts → plugins/campaign/core.ts → plugins/campaign/modules/polls/polls.ts',
    'campaign-module-no-cycle: plugins/campaign/modules/tallies/tallies.ts → plugins/campaign/modules/kit.ts → plugins/campaign/modules/tallies/tallies.ts',
    'campaign-module-through-the-kit: plugins/campaign/modules/ballots/ballots.ts → plugins/campaign/core.ts',
    'campaign-module-through-the-kit: plugins/campaign/modules/ballots/ballots.ts → plugins/campaign/modules/tallies/tallies.ts',
    'campaign-module-through-the-kit: plugins/campaign/modules/ballots/page.tsx → plugins/campaign/ui/src/widgets.ts',
    'campaign-module-through-the-kit: plugins/campaign/modules/polls/polls.ts → plugins/campaign/core.ts',
    'campaign-module-through-the-kit: plugins/campaign/modules/tallies/tallies.ts → plugins/campaign/modules/kit.ts',
    'campaign-page-no-server-code: plugins/campaign/modules/ballots/page.tsx → plugins/campaign/module-kit.ts',
    'campaign-page-no-server-code: plugins/campaign/modules/ballots/page.tsx → plugins/campaign/modules/polls/index.ts',
    'host-not-the-command: kernel/loader.ts → kernel/cli/cli.ts',
    'kernel-imports-no-plugin: kernel/loader.ts → plugins/alpha/index.ts',
    'kernel-through-its-surface: plugins/alpha/dynamic.ts → kernel/paths.ts',
    'kernel-through-its-surface: plugins/alpha/one/two/three/deep.ts → kernel/cli/cli.ts',
    'no-cycle-across-plugins: plugins/alpha/index.ts → plugins/beta/api.ts → plugins/alpha/index.ts',
    'plugin-through-its-surface: plugins/alpha/one/two/three/deep.ts → plugins/beta/internal.ts',
    'plugin-through-its-surface: plugins/alpha/reexport.ts → plugins/beta/internal.ts',
    'plugin-through-its-surface: plugins/alpha/type-query.ts → plugins/beta/internal.ts',
    'plugin-through-its-surface: plugins/alpha/typed.ts → plugins/beta/internal.ts',
    'plugin-through-its-surface: plugins/alpha/view.tsx → plugins/beta/internal.ts',
    'product-code-not-tests: plugins/alpha/tested.ts → test/helper.ts',
    'resolvable: plugins/alpha/missing.ts → ./nowhere.js'
  ])
})

t.test('the repository has no breach, and no cycle of plugins', async t => {
  const result = await cruise(ROOT, ['kernel', 'plugins', 'wasm', 'bench', 'test', 'scripts'])
  t.same(result.summary.violations.map(line), [], 'no violation')
  t.ok(result.modules.some(m => m.source.startsWith('test/fixtures/')) === false, 'the fixtures are not part of the real run')
  t.ok(result.modules.some(m => m.source.endsWith('.tsx')), '.tsx files are cruised')
  const nodes = result.modules.find(m => m.source === 'plugins/nodes/index.ts')
  t.ok(nodes?.dependencies.some(d => d.dependencyTypes.includes('dynamic-import')), 'dynamic imports are seen')

  // Plugin A imports plugin B (through B's index or api, as the rules allow) when any module of A does.
  const uses = new Map<string, Set<string>>()
  for (const m of result.modules) {
    const from = /^plugins\/([^/]+)\//.exec(m.source)?.[1]
    if (from === undefined) continue
    for (const d of m.dependencies) {
      const to = /^plugins\/([^/]+)\//.exec(d.resolved)?.[1]
      if (to !== undefined && to !== from) uses.set(from, (uses.get(from) ?? new Set()).add(to))
    }
  }
  const cycles: string[] = []
  const visit = (plugin: string, path: string[]): void => {
    if (path.includes(plugin)) {
      cycles.push([...path.slice(path.indexOf(plugin)), plugin].join(' → '))
      return
    }
    for (const next of uses.get(plugin) ?? []) visit(next, [...path, plugin])
  }
  for (const plugin of uses.keys()) visit(plugin, [])
  t.same(cycles, [], 'the plugins import each other without a cycle')
})
