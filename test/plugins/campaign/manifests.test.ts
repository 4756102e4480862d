// The modules' manifests: ids unique and used as folder names, every group known, the UI's registry
// listing the modules in the server's order, and a module whose functions and manifest differ (a
// function not listed, or one listed and not made) refused.
import t from 'tap'
import { existsSync, readFileSync } from 'node:fs'
import { Type } from '../../../kernel/schema.js'
import { PACKAGE_ROOT } from '../../../kernel/index.js'
import { moduleFunction } from '../../../plugins/campaign/functions.js'
import { MANIFESTS, withManifest } from '../../../plugins/campaign/modules/catalogue.js'
import { MODULE_GROUPS, type ModuleManifest } from '../../../plugins/campaign/modules/manifest.js'

t.test('every manifest', async t => {
  const ids = MANIFESTS.map(m => m.id)
  t.equal(new Set(ids).size, ids.length, 'ids are unique')
  for (const manifest of MANIFESTS) {
    t.ok(existsSync(`${PACKAGE_ROOT}/plugins/campaign/modules/${manifest.id}/page.tsx`), `${manifest.id} has its folder and page`)
    t.ok(MODULE_GROUPS.includes(manifest.group), `${manifest.id} is in a known group`)
    t.ok(Object.keys(manifest.functions).length > 0, `${manifest.id} has functions`)
  }
  t.same([...new Set(MANIFESTS.map(m => m.group))], MODULE_GROUPS, 'the manifests are listed group by group, in group order')
})

t.test('the UI lists the modules as the server does', async t => {
  const source = readFileSync(`${PACKAGE_ROOT}/plugins/campaign/ui/src/pages.ts`, 'utf8')
  const idOf = new Map([...source.matchAll(/import \{ manifest as (\w+) \} from '\.\.\/\.\.\/modules\/([a-z-]+)\/manifest\.js'/g)].map(m => [m[1], m[2]]))
  const listed = source.slice(source.indexOf('const BY_MANIFEST'))
  const order = [...listed.slice(0, listed.indexOf('\n]\n')).matchAll(/^ {2}\[(\w+), \w+\]/gm)].map(m => idOf.get(m[1]))
  t.same(order, MANIFESTS.map(m => m.id), 'ui/src/pages.ts: every module, in navigation order')
})

t.test('a module and its manifest must agree', async t => {
  const manifest: ModuleManifest = { id: 'sample', title: 'Sample', blurb: 'A sample.', group: 'Organise', functions: { 'sample-read': ['staff', 'readonly'], 'sample-write': ['staff'] } }
  const fn = (name: string) => moduleFunction({ name, args: Type.Object({}), handler: () => 'ok' })
  const made = withManifest(manifest, [fn('sample-read'), fn('sample-write')])
  t.same(made.map(({ name, module, access }) => ({ name, module, access })), [
    { name: 'sample-read', module: 'sample', access: ['staff', 'readonly'] },
    { name: 'sample-write', module: 'sample', access: ['staff'] }
  ], 'module id and roles come from the manifest')
  t.throws(() => withManifest(manifest, [fn('sample-read')]), /module "sample" lists functions it does not make: sample-write/)
  t.throws(() => withManifest(manifest, [fn('sample-read'), fn('sample-write'), fn('sample-extra')]), /module "sample" makes "sample-extra", which its manifest does not list/)
})
