// The host of `berth server` restarting in place: a plugin asks for it with ctx.restart(), the
// configuration file is read again, every plugin starts anew in the same process, and the listeners
// never close: requests sent all along are all answered, by the old kernel or the new one. A file the
// server cannot use is refused with nothing changed; a kernel without a host cannot restart.
import t from 'tap'
import { createServer } from 'node:http'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pino from 'pino'
import { BadRequest, Conflict, definePlugin, type AnyPlugin } from '../../kernel/index.js'
import { ServerHost } from '../../kernel/host.js'
import { through } from '../support/load.js'
import { testKernel } from '../support/kernel.js'
import { pollUntil } from '../support/poll.js'
import { tempDir } from '../support/tmp.js'

interface GreeterService { restart(): Promise<void> }

declare module '../../kernel/index.js' {
  interface Services { greeter: GreeterService }
}

/** A plugin answering `[greeter].greeting` on its raw listener, and asking for restarts; its setup takes `setup_ms`. */
const greeter = definePlugin({
  name: 'greeter',
  version: '1.0.0',
  config: Type => Type.Object({ greeting: Type.String({ default: 'hello' }), setup_ms: Type.Integer({ default: 0 }) }, { additionalProperties: false }),
  listeners: [{ name: 'greeter-http', port: 0, kind: 'raw' }],
  async setup (ctx): Promise<GreeterService> {
    await new Promise(resolve => setTimeout(resolve, ctx.config.setup_ms))
    ctx.serve('greeter-http', createServer((_req, res) => { res.end(ctx.config.greeting) }))
    return { restart: ctx.restart }
  }
})

const PLUGINS: readonly AnyPlugin[] = [greeter]

t.test('a restart in place reads the file again and keeps the listeners open', async t => {
  const dir = tempDir(t)
  const file = join(dir, 'cluster.toml')
  // The new kernel's setup takes 300 ms: requests arriving meanwhile must wait for it, not fail.
  const config = (greeting: string, setupMs = 0): string => `[server]\nstate_dir = "${join(dir, 'state')}"\n[server.listeners.control]\nhost = "127.0.0.1"\nport = 0\n[server.listeners.greeter-http]\nhost = "127.0.0.1"\n[greeter]\ngreeting = "${greeting}"\nsetup_ms = ${setupMs}\n`
  writeFileSync(file, config('hello'))
  let fatal: unknown
  const host = new ServerHost({ cwd: dir, configFile: file, env: {}, plugins: PLUGINS, logger: pino({ level: 'silent' }) }, { fatal: err => { fatal = err } })
  t.teardown(async () => { await host.stop() })
  const first = await host.start()
  const url = first.url('greeter-http')
  t.equal((await through(url, 'x')).body, 'hello')

  const answers: string[] = []
  let longest = 0
  let asking = true
  const clients = Array.from({ length: 4 }, async () => {
    for (let i = 0; asking && i < 20_000; i++) {
      const sent = Date.now()
      const answer = await through(url, 'x')
      longest = Math.max(longest, Date.now() - sent)
      answers.push(answer.status === 200 ? answer.body : `failed ${answer.status}`)
    }
  })
  await pollUntil(() => answers.length >= 20, { what: 'requests to begin' })

  writeFileSync(file, config('bonjour', 300))
  await first.service('greeter').restart()
  await pollUntil(() => host.kernel !== first && host.kernel.state === 'running', { what: 'the new kernel' })
  const switched = answers.length
  await pollUntil(() => answers.length >= switched + 50, { what: 'answers from the new kernel' })
  asking = false
  await Promise.all(clients)
  t.equal(first.state, 'stopped', 'the first kernel stopped')
  t.equal(host.kernel.url('greeter-http').href, url.href, 'the listener kept its address')
  t.same(answers.filter(a => a !== 'hello' && a !== 'bonjour'), [], `every one of ${answers.length} requests was answered`)
  t.equal(answers.at(-1), 'bonjour', 'by the new configuration in the end')
  t.ok(longest >= 250, `requests sent during the switch waited for the new kernel (${longest} ms)`)

  writeFileSync(file, config('hola') + 'colour = "red"\n')
  await t.rejects(host.kernel.service('greeter').restart(), BadRequest, 'a file the server cannot use is refused')
  t.equal((await through(url, 'x')).body, 'bonjour', 'and nothing changed')
  t.equal(fatal, undefined)
})

t.test('a kernel run without a host cannot restart itself', async t => {
  const kernel = await testKernel(t, { plugins: [greeter] })
  await t.rejects(kernel.service('greeter').restart(), Conflict)
})
