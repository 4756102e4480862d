// Lifecycle: setup → start → stop in dependency order, reverse on stop, idempotent, clean after failures,
// each phase under a deadline, stop serialized after a start in progress, work in flight drained first.
import t from 'tap'
import { definePlugin, type AnyPlugin } from '../../kernel/index.js'
import { capturedLogger, testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

declare module '../../kernel/index.js' {
  interface Services { counter: { value: () => number } }
}

function recorder (log: string[], name: string, dependsOn: string[] = [], fail?: 'setup' | 'start'): AnyPlugin {
  return definePlugin({
    name,
    version: '1.0.0',
    dependsOn,
    setup (ctx) {
      log.push(`setup ${name}`)
      ctx.onClose(() => { log.push(`close ${name}`) })
      if (fail === 'setup') throw new Error(`${name} cannot set up`)
      return { name }
    },
    start () {
      log.push(`start ${name}`)
      if (fail === 'start') throw new Error(`${name} cannot start`)
    },
    stop () { log.push(`stop ${name}`) }
  })
}

t.test('setup and start in dependency order, stop in reverse, exactly once', async t => {
  const log: string[] = []
  const kernel = await testKernel(t, { plugins: [recorder(log, 'c', ['b']), recorder(log, 'a'), recorder(log, 'b', ['a'])] })
  t.same(log, ['setup a', 'setup b', 'setup c', 'start a', 'start b', 'start c'])
  t.equal(kernel.state, 'running')
  t.same(kernel.health().plugins, { a: { version: '1.0.0', state: 'running' }, b: { version: '1.0.0', state: 'running' }, c: { version: '1.0.0', state: 'running' } })
  log.length = 0
  await Promise.all([kernel.stop(), kernel.stop()])
  await kernel.stop()
  t.same(log, ['stop c', 'close c', 'stop b', 'close b', 'stop a', 'close a'])
  t.equal(kernel.state, 'stopped')
  t.equal(kernel.health().plugins.a.state, 'stopped')
})

t.test('a failing setup cleans up what was set up, and names the plugin', async t => {
  const log: string[] = []
  const kernel = await testKernel(t, { noStart: true, plugins: [recorder(log, 'a'), recorder(log, 'b', ['a'], 'setup'), recorder(log, 'c', ['b'])] })
  await t.rejects(kernel.start(), { name: 'StartupError', message: 'plugin "b" failed during setup: b cannot set up' })
  t.same(log, ['setup a', 'setup b', 'close b', 'close a'])
  t.equal(kernel.state, 'failed')
  t.equal(kernel.health().plugins.b.state, 'failed')
  t.equal(kernel.health().plugins.c.state, 'loaded')
})

t.test('a failing start stops everything that was started, the failing one included', async t => {
  const log: string[] = []
  const kernel = await testKernel(t, { noStart: true, plugins: [recorder(log, 'a'), recorder(log, 'b', ['a'], 'start'), recorder(log, 'c', ['b'])] })
  await t.rejects(kernel.start(), { message: 'plugin "b" failed during start: b cannot start' })
  t.same(log, ['setup a', 'setup b', 'setup c', 'start a', 'start b', 'close c', 'stop b', 'close b', 'stop a', 'close a'])
  t.throws(() => kernel.url('control'), { message: 'the control listener is not open' })
})

t.test('use() reaches a declared dependency and refuses an undeclared one', async t => {
  const counter = definePlugin({ name: 'counter', version: '1', setup: () => ({ value: () => 42 }) })
  let seen = 0
  const user = definePlugin({ name: 'user', version: '1', dependsOn: ['counter'], setup (ctx) { seen = ctx.use('counter').value() } })
  const sneaky = definePlugin({ name: 'sneaky', version: '1', setup (ctx) { ctx.use('counter') } })
  await testKernel(t, { plugins: [counter, user] })
  t.equal(seen, 42)
  const bad = await testKernel(t, { noStart: true, plugins: [counter, sneaky] })
  await t.rejects(bad.start(), { message: 'plugin "sneaky" failed during setup: plugin "sneaky" uses "counter" without naming it in dependsOn' })
})

t.test('useOptional() reaches an optional dependency when it is enabled, and gives undefined otherwise', async t => {
  const counter = definePlugin({ name: 'counter', version: '1', setup: () => ({ value: () => 42 }) })
  const seen: Array<number | undefined> = []
  const user = definePlugin({ name: 'user', version: '1', optionalDependsOn: ['counter'], setup (ctx) { seen.push(ctx.useOptional('counter')?.value()) } })
  await testKernel(t, { plugins: [user, counter] })
  await testKernel(t, { plugins: [user] })
  t.same(seen, [42, undefined])
  const sneaky = definePlugin({ name: 'sneaky', version: '1', setup (ctx) { ctx.useOptional('counter') } })
  const bad = await testKernel(t, { noStart: true, plugins: [counter, sneaky] })
  await t.rejects(bad.start(), { message: 'plugin "sneaky" failed during setup: plugin "sneaky" uses "counter" without naming it in optionalDependsOn' })
})

t.test('routes can be mounted during setup only', async t => {
  const late = definePlugin({
    name: 'late',
    version: '1',
    start (ctx) { ctx.http('control', async () => {}) }
  })
  const kernel = await testKernel(t, { noStart: true, plugins: [late] })
  await t.rejects(kernel.start(), { message: /routes can be mounted only during setup/ })
})

t.test('plugins get their validated config section', async t => {
  let port = 0
  const withConfig = definePlugin({
    name: 'withconfig',
    version: '1',
    config: Type => Type.Object({ port: Type.Integer({ default: 9 }) }, { additionalProperties: false }),
    setup (ctx) { port = ctx.config.port }
  })
  await testKernel(t, { plugins: [withConfig], config: { withconfig: { port: 1234 } } })
  t.equal(port, 1234)
})

t.test('events reach subscribers; a throwing handler does not stop delivery; subscriptions end with the plugin', async t => {
  const seen: string[] = []
  const listener = definePlugin({
    name: 'listener',
    version: '1',
    setup (ctx) {
      ctx.events.on('plugin.state', () => { throw new Error('handler bug') })
      ctx.events.on('plugin.state', e => { seen.push(`${e.plugin}:${e.state}`) })
    }
  })
  const kernel = await testKernel(t, { plugins: [listener] })
  t.ok(seen.includes('listener:running'))
  t.equal(kernel.events.listenerCount('plugin.state'), 2)
  await kernel.stop()
  t.equal(kernel.events.listenerCount('plugin.state'), 0)
})

/** A promise with its resolve function, to hold a phase open until the test lets it go. */
function gate (): { promise: Promise<void>, open: () => void } {
  let open = (): void => {}
  const promise = new Promise<void>(resolve => { open = resolve })
  return { promise, open }
}

const never = new Promise<never>(() => {})

t.test('a plugin that hangs in setup or start is named in one line; the others are still stopped', async t => {
  for (const phase of ['setup', 'start'] as const) {
    const log: string[] = []
    const stuck = definePlugin({
      name: 'stuck',
      version: '1',
      dependsOn: ['steady'],
      async setup (ctx) { ctx.onClose(() => { log.push('close stuck') }); if (phase === 'setup') await never },
      async start () { if (phase === 'start') await never },
      stop () { log.push('stop stuck') }
    })
    const kernel = await testKernel(t, { noStart: true, plugins: [recorder(log, 'steady'), stuck], config: { server: { plugin_timeout_ms: 150 } } })
    await t.rejects(kernel.start(), { name: 'StartupError', message: `plugin "stuck" did not finish ${phase} within 0.15 s (set [server].plugin_timeout_ms)` })
    t.same(log.filter(line => !line.startsWith('setup') && !line.startsWith('start')),
      phase === 'setup' ? ['close stuck', 'close steady'] : ['stop stuck', 'close stuck', 'stop steady', 'close steady'], `after a hanging ${phase}`)
    t.equal(kernel.health().plugins.stuck.state, 'failed')
  }
})

t.test('a plugin that hangs in stop is named in the log; the kernel stops the others and closes', async t => {
  const log: string[] = []
  const { logger, lines } = capturedLogger()
  const hanging = definePlugin({ name: 'hanging', version: '1', dependsOn: ['steady'], async stop () { await never } })
  const kernel = await testKernel(t, { plugins: [recorder(log, 'steady'), hanging], logger, config: { server: { plugin_timeout_ms: 150 } } })
  await kernel.stop()
  t.equal(kernel.state, 'stopped')
  t.same(log.slice(-2), ['stop steady', 'close steady'], 'its dependency was stopped all the same')
  t.match(lines(), /"plugin":"hanging".*"msg":"plugin \\"hanging\\" did not finish stop within 0\.15 s/)
})

t.test('stop() during start() waits for the start in progress, then stops what started; nothing starts after', async t => {
  const log: string[] = []
  const held = gate()
  const slow = definePlugin({
    name: 'slow',
    version: '1',
    setup (ctx) { ctx.onClose(() => { log.push('close slow') }) },
    async start () { log.push('start slow begins'); await held.promise; log.push('start slow ends') },
    stop () { log.push('stop slow') }
  })
  const kernel = await testKernel(t, { noStart: true, plugins: [slow, recorder(log, 'later', ['slow'])] })
  const starting = kernel.start()
  await pollUntil(() => log.includes('start slow begins'), { what: 'the slow start to begin' })
  const stopping = kernel.stop()
  held.open()
  await t.rejects(starting, { message: 'the kernel was stopped while starting' })
  await stopping
  t.same(log, ['setup later', 'start slow begins', 'start slow ends', 'close later', 'stop slow', 'close slow'])
  t.equal(kernel.state, 'stopped')
})

t.test('requests and tracked work in flight finish before the plugin stops and the store closes', async t => {
  const stateDir = tempDir(t)
  const requestHeld = gate()
  const workHeld = gate()
  const log: string[] = []
  const writer = definePlugin({
    name: 'writer',
    version: '1',
    listeners: [{ name: 'writer', port: 6898 }],
    setup (ctx) {
      const db = ctx.store.db<string>('items')
      ctx.stopping.addEventListener('abort', () => { log.push('stopping'); requestHeld.open(); workHeld.open() })
      ctx.http('writer', async app => {
        app.post('/slow', async () => {
          log.push('request begins')
          await requestHeld.promise
          await db.put('from-request', 'committed')
          log.push('request committed')
          return { ok: true }
        })
        app.post('/background', async () => {
          void ctx.track(workHeld.promise.then(async () => { await db.put('from-work', 'committed'); log.push('work committed') }))
          return { accepted: true }
        })
      })
    },
    stop () { log.push('stop writer') }
  })
  const kernel = await testKernel(t, { plugins: [writer], config: { server: { state_dir: stateDir } } })
  const url = kernel.url('writer')
  t.same(await (await fetch(new URL('/background', url), { method: 'POST' })).json(), { accepted: true })
  const answer = fetch(new URL('/slow', url), { method: 'POST' })
  await pollUntil(() => log.includes('request begins'), { what: 'the slow request to arrive' })
  await kernel.stop()
  const response = await answer
  t.equal(response.status, 200, 'the request in flight was answered')
  t.same(await response.json(), { ok: true })
  t.ok(log.indexOf('request committed') < log.indexOf('stop writer') && log.indexOf('work committed') < log.indexOf('stop writer'), log.join(', '))
  const { Store } = await import('../../kernel/store.js')
  const store = Store.open(stateDir)
  t.teardown(async () => { await store.close() })
  const items = store.forPlugin('writer').db<string>('items')
  t.equal(items.get('from-request'), 'committed')
  t.equal(items.get('from-work'), 'committed')
})
