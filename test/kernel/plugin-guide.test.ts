// The examples in docs/plugins.md, extracted as printed: they must type-check and work in a real kernel.
import t, { type Test } from 'tap'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Command } from 'commander'
import ts from 'typescript'
import { isPluginDefinition, type AnyPlugin } from '../../kernel/plugin.js'
import { testKernel } from '../support/kernel.js'
import { adminToken, api, startKernel } from '../support/orchestration.js'

// The types the example declares (the example file itself is not part of the type-checked program).
declare module '../../kernel/index.js' {
  interface Services { hello: { visits: (name: string) => number } }
  interface BerthEvents { 'hello.greeted': { name: string, visits: number } }
}

const root = fileURLToPath(new URL('../../', import.meta.url))
const guide = readFileSync(join(root, 'docs/plugins.md'), 'utf8')
const exampleOf = (path: string): string | undefined => new RegExp(`<!-- example: ${path.replace(/[/.]/g, '\\$&')} -->\n\`\`\`ts\n([\\s\\S]*?)\`\`\``).exec(guide)?.[1]
const example = exampleOf('plugins/hello/index.ts')
const contractExample = exampleOf('plugins/secret-check/index.ts')

t.test('the guide has the examples', async t => {
  t.ok(example, 'the complete plugin')
  t.ok(contractExample, 'the plugin building on another')
})

/** An example written where a plugin of its own would be (dot-folders are never discovered), type-checked, and loaded. */
async function loadExample (t: Test, source: string): Promise<AnyPlugin> {
  const file = join(root, 'plugins', `.guide-example-${process.pid}-${Math.random().toString(36).slice(2)}`, 'index.ts')
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, source)
  t.teardown(() => { rmSync(dirname(file), { recursive: true, force: true }) })
  const program = ts.createProgram([file], { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: ['node'] })
  const problems = ts.getPreEmitDiagnostics(program).map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  t.same(problems, [], 'no type errors')
  const plugin = (await import(pathToFileURL(file).href) as { default: AnyPlugin }).default
  t.ok(isPluginDefinition(plugin))
  return plugin
}

t.test('the example type-checks and serves, counts, persists, emits, and adds a command', async t => {
  const hello = await loadExample(t, example as string)
  const greeted: unknown[] = []
  const watcher = { name: 'watcher', version: '1', dependsOn: ['hello'] } as const
  const { definePlugin } = await import('../../kernel/index.js')
  const kernel = await testKernel(t, {
    plugins: [hello, definePlugin({ ...watcher, setup (ctx) { ctx.events.on('hello.greeted', e => { greeted.push(e) }) } })],
    env: { HELLO_GREETING: 'Ahoy' }
  })
  const base = kernel.url('hello')
  const post = async (name: string): Promise<unknown> => await (await fetch(new URL(`/hello/${name}`, base), { method: 'POST' })).json()
  t.same(await post('ada'), { message: 'Ahoy, ada!', visits: 1 })
  t.same(await post('ada'), { message: 'Ahoy, ada!', visits: 2 })
  const missing = await fetch(new URL('/hello/bob', base))
  t.equal(missing.status, 404)
  t.same(await missing.json(), { error: 'bob has never visited', code: 'BERTH_NOT_FOUND' })
  t.same(greeted, [{ name: 'ada', visits: 1 }, { name: 'ada', visits: 2 }])
  t.equal(kernel.service('hello').visits('ada'), 2)
  const own = await (await fetch(new URL('/hello/metrics', base))).text()
  t.match(own, /^berth_hello_greetings_total 2$/m, 'its own listener shows its metrics')
  t.match(own, /^berth_http_requests_total\{listener="hello",status="200"\} \d+$/m)
  t.notMatch(await (await fetch(new URL('/metrics', kernel.url('control')))).text(), /berth_hello_/, 'the control listener does not')

  const cli = new Command('berth').exitOverride()
  hello.commands?.({
    program: cli,
    settings: async () => ({ stateDir: kernel.config.stateDir, controlUrl: kernel.url('control'), urls: { control: kernel.url('control'), hello: base } }),
    serverOption: () => {},
    serverOptions: async () => [],
    globalArgs: async () => [],
    plugins: async () => [hello],
    script: 'berth'
  })
  const printed: string[] = []
  const original = console.log
  console.log = (line: string) => { printed.push(line) }
  try {
    await cli.parseAsync(['node', 'berth', 'hello', 'grace'])
  } finally {
    console.log = original
  }
  t.same(printed, ['Ahoy, grace!'])
})

t.test('the example building on another plugin uses its contract, with and without that plugin', async t => {
  const check = await loadExample(t, contractExample as string)
  const [{ default: secrets }, { default: tokens }] = await Promise.all([import('../../plugins/secrets/index.js'), import('../../plugins/tokens/index.js')])
  const text = 'key=${secrets.API_KEY} db=${secrets.DB_PASSWORD}'
  const withSecrets = await startKernel(t, { plugins: [tokens, secrets, check] })
  await withSecrets.service('secrets').set('API_KEY', 'k')
  const answer = await api(withSecrets, 'POST', '/api/v1/secret-check', { token: adminToken(withSecrets), body: { text } })
  t.same([answer.status, answer.body], [200, { names: ['API_KEY', 'DB_PASSWORD'], missing: ['DB_PASSWORD'] }])
  const alone = await testKernel(t, { plugins: [check] })
  const refused = await api(alone, 'POST', '/api/v1/secret-check', { body: { text } })
  t.same([refused.status, refused.body], [503, { error: 'the secrets plugin is not running', code: 'SECRET_CHECK_NO_STORE' }], 'without the secrets plugin it still runs and says why it cannot answer')
})
