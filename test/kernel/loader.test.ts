// Plugin discovery and dependency ordering: order, and every refusal with its message.
import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { definePlugin, PluginLoadError } from '../../kernel/index.js'
import { discoverPlugins, orderPlugins } from '../../kernel/loader.js'
import { tempDir } from '../support/tmp.js'

const p = (name: string, dependsOn: string[] = []): ReturnType<typeof definePlugin> =>
  definePlugin({ name, version: '1.0.0', dependsOn })

t.test('dependencies come first, whatever the listing order', async t => {
  const order = orderPlugins([p('backup', ['secrets', 'reconciler']), p('reconciler', ['secrets']), p('secrets')]).map(x => x.name)
  t.same(order, ['secrets', 'reconciler', 'backup'])
})

t.test('enabled list and disabled list select plugins', async t => {
  const all = [p('a'), p('b'), p('c', ['a'])]
  t.same(orderPlugins(all, { enabled: ['c', 'a'] }).map(x => x.name), ['a', 'c'])
  t.same(orderPlugins(all, { disabled: ['c'] }).map(x => x.name), ['a', 'b'])
})

t.test('an optional dependency comes first when enabled and is left out otherwise', async t => {
  const app = definePlugin({ name: 'app', version: '1.0.0', optionalDependsOn: ['secrets'] })
  t.same(orderPlugins([app, p('secrets')]).map(x => x.name), ['secrets', 'app'])
  t.same(orderPlugins([app, p('secrets')], { disabled: ['secrets'] }).map(x => x.name), ['app'])
  t.same(orderPlugins([app]).map(x => x.name), ['app'], 'absent altogether')
})

t.test('refusals name the plugins involved', async t => {
  t.throws(() => orderPlugins([p('a')], { enabled: ['nope'] }),
    new PluginLoadError('[server] names plugin "nope", which does not exist (known: a)'))
  t.throws(() => orderPlugins([p('a', ['ghost'])]), { message: 'plugin "a" depends on "ghost", which does not exist' })
  t.throws(() => orderPlugins([p('a', ['b']), p('b')], { disabled: ['b'] }), { message: 'plugin "a" depends on "b", which is not enabled' })
  t.throws(() => orderPlugins([p('a', ['b']), p('b', ['c']), p('c', ['a'])]), { message: 'plugin dependency cycle: a → b → c → a' })
  t.throws(() => orderPlugins([p('a'), p('a')]), { message: 'two plugins are named "a"' })
})

t.test('definePlugin refuses names that cannot be a folder and a config section', async t => {
  t.throws(() => definePlugin({ name: 'Bad Name', version: '1' }), { message: /must be lowercase/ })
})

t.test('discovery imports each folder and checks its default export', async t => {
  const pluginApi = pathToFileURL(join(import.meta.dirname, '../../kernel/plugin.ts')).href
  const write = (dir: string, folder: string, body: string): void => {
    mkdirSync(join(dir, folder), { recursive: true })
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}')
    writeFileSync(join(dir, folder, 'index.js'), `import { definePlugin } from '${pluginApi}'\n${body}\n`)
  }
  const good = tempDir(t)
  write(good, 'alpha', "export default definePlugin({ name: 'alpha', version: '1' })")
  write(good, 'beta', "export default definePlugin({ name: 'beta', version: '1', dependsOn: ['alpha'] })")
  mkdirSync(join(good, '.hidden'))
  mkdirSync(join(good, 'empty-folder'))
  t.same((await discoverPlugins([good])).map(x => x.name), ['alpha', 'beta'])

  const misnamed = tempDir(t)
  write(misnamed, 'alpha', "export default definePlugin({ name: 'gamma', version: '1' })")
  await t.rejects(discoverPlugins([misnamed]), { message: /named "gamma" but its folder is "alpha"/ })

  const plain = tempDir(t)
  write(plain, 'alpha', 'export default { name: "alpha" }')
  await t.rejects(discoverPlugins([plain]), { message: /default export must be definePlugin/ })

  const broken = tempDir(t)
  write(broken, 'alpha', 'throw new Error("boom at import")')
  await t.rejects(discoverPlugins([broken]), { message: /cannot be imported: boom at import/ })
})
