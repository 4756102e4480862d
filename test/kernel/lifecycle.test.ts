// Lifecycle: setup → start → stop in dependency order, reverse on stop, idempotent, clean after failures.
import t from 'tap'
import { definePlugin, type AnyPlugin } from '../../kernel/index.js'
import { testKernel } from '../support/kernel.js'

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

t.test('routes can be mounted during setup only', async t => {
  const late = definePlugin({
    name: 'late',
    version: '1',
    start (ctx) { ctx.http('control', async () => {}) }
  })
  const kernel = await testKernel(t, { noStart: true, plugins: [late] })
  await t.rejects(kernel.start(), { message: /routes can only be mounted during setup/ })
})

t.test('plugins get their validated config section', async t => {
  let port = 0
  const { Type } = await import('../../kernel/index.js')
  const withConfig = definePlugin({
    name: 'withconfig',
    version: '1',
    config: Type.Object({ port: Type.Integer({ default: 9 }) }, { additionalProperties: false }),
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
