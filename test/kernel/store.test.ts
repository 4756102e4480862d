// The LMDB store: databases private to each plugin, per-plugin backups and restores, 0600 files, and
// no acknowledged write lost to kill -9.
import t from 'tap'
import { spawn } from 'node:child_process'
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { definePlugin, type PluginContext } from '../../kernel/index.js'
import { Store, STORE_FILE } from '../../kernel/store.js'
import { testKernel } from '../support/kernel.js'
import { tempDir } from '../support/tmp.js'
import { exited } from '../support/cli.js'

t.test('each plugin sees only its own databases; files are owner-only', async t => {
  const dir = tempDir(t)
  const store = Store.open(join(dir, 'state'))
  t.teardown(async () => { await store.close() })
  const a = store.forPlugin('alpha').db<string>('items')
  const b = store.forPlugin('beta').db<string>('items')
  await a.put('k', 'from alpha')
  await b.put('k', 'from beta')
  t.equal(a.get('k'), 'from alpha')
  t.equal(b.get('k'), 'from beta')
  await store.forPlugin('alpha').transaction(() => {
    a.put('x', '1')
    a.put('y', '2')
  })
  t.same([...a.getKeys()], ['k', 'x', 'y'])
  t.equal(statSync(join(dir, 'state')).mode & 0o777, 0o700)
  t.equal(statSync(join(dir, 'state', STORE_FILE)).mode & 0o777, 0o600)
  for (const member of ['openDB', 'open', 'backup', 'close', 'env'] as const) {
    t.throws(() => (a as unknown as Record<string, () => unknown>)[member](), { message: `plugin "alpha": a database handle cannot use ${member}; the store reaches only the plugin's own databases` })
  }
})

t.test('a plugin\'s backup holds its own databases and nothing else, and restores in one piece', async t => {
  const dir = tempDir(t)
  const store = Store.open(join(dir, 'state'))
  t.teardown(async () => { await store.close() })
  const alpha = store.forPlugin('alpha')
  const items = alpha.db<{ n: number }>('items')
  const tags = alpha.db<string, string>('tags', { dupSort: true, encoding: 'string' })
  const blobs = alpha.db<Buffer, number>('blobs', { encoding: 'binary' })
  const secret = store.forPlugin('beta').db<string>('secrets')
  await secret.put('token', 'beta-only-value')
  await alpha.transaction(() => {
    for (let i = 0; i < 2500; i++) void items.put(`k${i}`, { n: i })
    void tags.put('colour', 'red')
    void tags.put('colour', 'blue')
    void blobs.put(7, Buffer.from([0, 1, 2, 255]))
  })
  const file = join(dir, 'alpha.backup')
  const summary = await alpha.backup(file)
  t.match(summary, { plugin: 'alpha', databases: [{ name: 'blobs', entries: 1 }, { name: 'items', entries: 2500 }, { name: 'tags', entries: 2 }] })
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.notOk(readFileSync(file).includes('beta-only-value'), 'not a byte of another plugin\'s data')

  await alpha.transaction(() => {
    void items.remove('k1')
    void items.put('k9999', { n: -1 })
    void tags.put('colour', 'green')
    void blobs.remove(7)
  })
  const restored = await store.restorePlugin('alpha', file)
  t.same(restored.databases.map(d => d.entries), [1, 2500, 2])
  t.same(items.get('k1'), { n: 1 })
  t.equal(items.get('k9999'), undefined)
  t.same([...tags.getValues('colour')], ['blue', 'red'])
  t.same(blobs.get(7), Buffer.from([0, 1, 2, 255]))
  t.equal(secret.get('token'), 'beta-only-value', 'other plugins are untouched')
  await t.rejects(store.restorePlugin('beta', file), { message: `${file} holds the data of plugin "alpha", not "beta"` })
  await t.rejects(store.restorePlugin('alpha', join(dir, 'nothing')), { message: `${join(dir, 'nothing')} does not exist` })
  const notBackup = join(dir, 'plain.mdb')
  writeFileSync(notBackup, 'not lmdb at all')
  await t.rejects(store.restorePlugin('alpha', notBackup), { message: `${notBackup} is not a Berth backup: not an LMDB file` })
  const otherLmdb = join(dir, 'other.mdb')
  const other = Store.open(join(dir, 'elsewhere'))
  await other.close()
  copyFileSync(join(dir, 'elsewhere', STORE_FILE), otherLmdb)
  await t.rejects(store.restorePlugin('alpha', otherLmdb), { message: `${otherLmdb} is not a Berth backup` }, 'an LMDB file without backup metadata')
})

t.test('a backup carries extra entries (the files its records name) into binary databases, and a restore puts them back', async t => {
  const dir = tempDir(t)
  const store = Store.open(join(dir, 'state'))
  t.teardown(async () => { await store.close() })
  const alpha = store.forPlugin('alpha')
  const items = alpha.db<{ file: string }>('items')
  const files = alpha.db<Buffer, string>('files', { encoding: 'binary' })
  await items.put('a', { file: 'a.bin' })
  const read: string[] = []
  function * carried (): Generator<readonly [string, Buffer]> {
    for (const name of ['a.bin', 'b.bin']) {
      read.push(name)
      yield [name, Buffer.from(`bytes of ${name}`)]
    }
  }
  const entries = carried()
  t.same(read, [], 'nothing read before the backup asks')
  const file = join(dir, 'alpha.backup')
  const summary = await alpha.backup(file, { files: entries, more: [['x', Buffer.from([1])]] })
  t.same(summary.databases, [{ name: 'files', entries: 2 }, { name: 'items', entries: 1 }, { name: 'more', entries: 1 }])
  t.equal(files.getKeysCount(), 0, 'the live database is untouched')
  const restored = await store.restorePlugin('alpha', file)
  t.same(restored.databases.map(d => [d.name, d.entries]), [['files', 2], ['items', 1], ['more', 1]])
  t.same(files.get('b.bin'), Buffer.from('bytes of b.bin'))
  t.same(alpha.db<Buffer, string>('more', { encoding: 'binary' }).get('x'), Buffer.from([1]))
  await t.rejects(alpha.backup(join(dir, 'refused.backup'), { items: [['k', Buffer.from('v')]] }), { message: 'plugin "alpha": extra backup entries go into a binary database; items is not one' })
})

t.test('a transaction is all or nothing: when its function throws, none of its writes land', async t => {
  const store = Store.open(join(tempDir(t), 'state'))
  t.teardown(async () => { await store.close() })
  const plugin = store.forPlugin('alpha')
  const items = plugin.db<number>('items')
  // Started in the same turn, so lmdb would batch all three into one commit.
  const before = plugin.transaction(() => { items.put('before', 1); return 'ok' })
  const failing = plugin.transaction(() => {
    items.put('half', 1)
    items.remove('before')
    throw new Error('disk on fire')
  })
  const after = plugin.transaction(() => { items.put('after', 1) })
  t.equal(await before, 'ok')
  await t.rejects(failing, { message: 'disk on fire' })
  await after
  t.same([...items.getKeys()], ['after', 'before'], 'the failed function wrote nothing; its neighbours committed')
})

t.test('a state directory that is a file is refused with its path', async t => {
  const dir = tempDir(t)
  const file = join(dir, 'not-a-dir')
  writeFileSync(file, 'x')
  t.throws(() => Store.open(file), { name: 'StartupError', message: `state directory ${file} cannot be used: not a directory` })
  t.throws(() => Store.open(join(file, 'below')), { message: /cannot be used: ENOTDIR/ })
})

t.test('kill -9 after acknowledged writes loses none of them', async t => {
  const dir = tempDir(t)
  const storeModule = pathToFileURL(new URL('../../dist/kernel/store.js', import.meta.url).pathname).href
  const writer = join(dir, 'writer.mjs')
  writeFileSync(writer, `
import { Store } from '${storeModule}'
const db = Store.open(process.argv[2]).forPlugin('durable').db('acks')
for (let batch = 0; ; batch++) {
  const keys = Array.from({ length: 25 }, (_, i) => batch * 25 + i)
  await Promise.all(keys.map(k => db.put(k, { k, at: Date.now() })))
  process.stdout.write(keys.map(k => 'ack ' + k + '\\n').join(''))
}
`)
  const child = spawn(process.execPath, [writer, join(dir, 'state')], { stdio: ['ignore', 'pipe', 'inherit'] })
  const acked = new Set<number>()
  const lines = createInterface({ input: child.stdout })
  await new Promise<void>(resolve => {
    lines.on('line', line => {
      acked.add(Number(line.slice(4)))
      if (acked.size >= 3000 && child.kill('SIGKILL')) resolve()
    })
  })
  t.equal(await exited(child), 'SIGKILL')
  const store = Store.open(join(dir, 'state'))
  t.teardown(async () => { await store.close() })
  const db = store.forPlugin('durable').db<{ k: number }>('acks')
  const missing = [...acked].filter(k => db.get(k)?.k !== k)
  t.same(missing, [], `all ${acked.size} acknowledged writes survived`)
  t.ok(acked.size >= 3000)
})

t.test('every plugin\'s state is copied only by a plugin that declares copiesAllState', async t => {
  const contexts = new Map<string, PluginContext>()
  const plugin = (name: string, copiesAllState: boolean): ReturnType<typeof definePlugin> => definePlugin({
    name,
    version: '1',
    copiesAllState,
    async setup (ctx) {
      contexts.set(name, ctx)
      await ctx.store.db<string>('items').put('k', `from ${name}`)
    }
  })
  await testKernel(t, { plugins: [plugin('alpha', false), plugin('keeper', true)] })
  const alpha = contexts.get('alpha')
  const keeper = contexts.get('keeper')
  if (alpha === undefined || keeper === undefined) throw new Error('setup did not run')
  t.throws(() => alpha.allState.plugins(), { message: 'plugin "alpha" reads every plugin\'s state without declaring copiesAllState' })
  await t.rejects(alpha.allState.backup('keeper', join(tempDir(t), 'x.lmdb')), { message: /without declaring copiesAllState/ })
  t.same(keeper.allState.plugins(), ['alpha', 'keeper'])
  const file = join(tempDir(t), 'alpha.lmdb')
  t.match(await keeper.allState.backup('alpha', file), { plugin: 'alpha', databases: [{ name: 'items', entries: 1 }] })
  t.equal(statSync(file).mode & 0o777, 0o600)
})

t.test('a store over [server].store_limit_mb refuses writes with a StorageFault (507), reads go on, health says why', async t => {
  let ctx: PluginContext | undefined
  const filler = definePlugin({
    name: 'filler',
    version: '1',
    async setup (context) {
      ctx = context
      context.http('control', async app => {
        app.put<{ Params: { key: string } }>('/filler/:key', async request => {
          await context.store.db<string>('blobs').put(request.params.key, 'x'.repeat(64 * 1024))
          return { stored: request.params.key }
        })
      })
    }
  })
  const kernel = await testKernel(t, { plugins: [filler], config: { server: { store_limit_mb: 1 } } })
  const url = (path: string): URL => new URL(path, kernel.url('control'))
  let refused: Response | undefined
  for (let i = 0; i < 64 && refused === undefined; i++) {
    const response = await fetch(url(`/filler/k${i}`), { method: 'PUT' })
    if (response.status !== 200) refused = response
    await kernel.checkStorage() // it also runs every few seconds on its own
  }
  t.equal(refused?.status, 507, 'past the limit a write is refused with 507')
  t.match(await refused?.json(), { error: /limit of 1\.0 MiB \(\[server\]\.store_limit_mb\)/ })
  t.equal(ctx?.store.db<string>('blobs').get('k0')?.length, 64 * 1024, 'reads go on')
  t.match(kernel.health(), { status: 'degraded', checks: { storage: { status: 'degraded', reason: /store_limit_mb/ } } })
  await t.rejects(async () => { await ctx?.store.transaction(() => 1) }, { name: 'StorageFault' }, 'a transaction is refused too')
})
