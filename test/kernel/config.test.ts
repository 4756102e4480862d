// Configuration: defaults, cluster.toml, environment overrides, and one-line refusals naming file and key.
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { definePlugin } from '../../kernel/index.js'
import { loadConfig } from '../../kernel/config.js'
import { tempDir } from '../support/tmp.js'

const backup = definePlugin({
  name: 'backup',
  version: '1.0.0',
  env: { BACKUP_RETENTION_DAYS: 'retention_days', BACKUP_TAGS: 'tags' },
  config: Type => Type.Object({
    enabled: Type.Boolean({ default: false }),
    schedule: Type.String({ format: 'cron', default: '0 0 3 * * *' }),
    retention_days: Type.Integer({ minimum: 1, default: 7 }),
    tags: Type.Array(Type.String(), { default: [] }),
    targets: Type.Array(Type.Object({ type: Type.String(), path: Type.String() }, { additionalProperties: false }), { default: [] })
  }, { additionalProperties: false })
})

function fromToml (t: Test, text: string, env: NodeJS.ProcessEnv = {}): ReturnType<typeof loadConfig> {
  const dir = tempDir(t)
  const file = join(dir, 'cluster.toml')
  writeFileSync(file, text)
  return loadConfig({ file, env, cwd: dir }, [backup])
}

t.test('no file: every default', async t => {
  const config = loadConfig({ cwd: '/srv/app', env: {} }, [backup])
  t.equal(config.origin, 'defaults')
  t.equal(config.stateDir, '/srv/app/.berth')
  t.same(config.server.listeners, { control: { host: '0.0.0.0', port: 6880, body_limit: 1048576, headers_timeout_ms: 20000, request_timeout_ms: 120000, idle_timeout_ms: 5000 } }, 'the kernel declares only control')
  t.equal(config.server.plugin_timeout_ms, 30000)
  t.equal(config.server.environment, 'development')
  t.same(config.sections.get('backup'), { enabled: false, schedule: '0 0 3 * * *', retention_days: 7, tags: [], targets: [] })
})

t.test('values from cluster.toml, environment over file', async t => {
  const config = fromToml(t, `
[server]
state_dir = "state"
[server.listeners.control]
port = 7000
[backup]
enabled = true
schedule = "0 */5 * * * *"
[[backup.targets]]
type = "local"
path = "/var/backups"
`, { BERTH_CONTROL_PORT: '7100', BACKUP_RETENTION_DAYS: '30', BACKUP_TAGS: 'a, b', BERTH_PLUGINS: 'backup', BERTH_ACCESS_LOG: 'true', NODE_ENV: 'production' })
  t.match(config.stateDir, /\/state$/)
  t.equal(config.server.environment, 'production', 'NODE_ENV is the kernel\'s')
  t.equal(config.server.access_log, true)
  t.equal(config.server.listeners.control.port, 7100)
  t.same(config.server.plugins, ['backup'])
  t.match(config.sections.get('backup'), { enabled: true, retention_days: 30, tags: ['a', 'b'], targets: [{ type: 'local', path: '/var/backups' }] })
})

t.test('refusals name the file or variable, the key path and the reason', async t => {
  const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    ['[server]\nstate_dri = "x"\n', {}, /cluster\.toml: \[server\]\.state_dri: unknown key$/],
    ['[server.listeners.control]\nport = "high"\n', {}, /cluster\.toml: \[server\]\.listeners\.control\.port: expected integer, got "high"$/],
    ['[server.listeners.control]\nport = 70000\n', {}, /\[server\]\.listeners\.control\.port: expected integer to be less or equal to 65535, got 70000$/],
    ['[server]\nlog_level = "loud"\n', {}, /\[server\]\.log_level: expected one of "fatal", .*"silent", got "loud"$/],
    ['[nosuch]\nx = 1\n', {}, /cluster\.toml: unknown section \[nosuch\] \(known: server, backup\)$/],
    ['[server.listeners.app]\nport = 1\n', {}, /cluster\.toml: \[server\]\.listeners\.app: unknown key$/],
    ['[backup]\nschedule = "0 3 * * *"\n', {}, /cluster\.toml: \[backup\]\.schedule: six fields expected \(seconds minutes hours day-of-month month day-of-week\), got 5$/],
    ['[backup]\nschedule = "0 0 99 * * *"\n', {}, /\[backup\]\.schedule: .+/],
    ['[[backup.targets]]\ntype = "local"\npath = "/x"\ncolour = "red"\n', {}, /\[backup\]\.targets\[0\]\.colour: unknown key$/],
    ['[[backup.targets]]\ntype = "local"\n', {}, /\[backup\]\.targets\[0\]\.path: is required$/],
    ['[backup]\nretention_days = 0\n', {}, /\[backup\]\.retention_days: expected integer to be greater or equal to 1, got 0$/],
    ['', { BERTH_ACCESS_LOG: 'sometimes' }, /^environment BERTH_ACCESS_LOG: \[server\]\.access_log: expected boolean, got "sometimes"$/],
    ['', { BERTH_CONTROL_PORT: 'abc' }, /^environment BERTH_CONTROL_PORT: \[server\]\.listeners\.control\.port: expected integer, got "abc"$/],
    ['[server\n', {}, /cluster\.toml: invalid TOML at line 1, column \d+: /]
  ]
  for (const [text, env, expected] of cases) {
    t.throws(() => fromToml(t, text, env), { name: 'ConfigError', message: expected }, JSON.stringify(text))
  }
})

t.test('an unreadable file is named', async t => {
  t.throws(() => loadConfig({ file: '/nonexistent/cluster.toml', cwd: '/', env: {} }, []), { message: /^\/nonexistent\/cluster\.toml: cannot read: ENOENT/ })
})

t.test('plugins declare the sections they read: values arrive typed', async t => {
  const acme = definePlugin({
    name: 'certs',
    version: '1.0.0',
    sections: { acme: Type => Type.Object({ email: Type.String(), directory: Type.String({ format: 'uri' }) }, { additionalProperties: false }) }
  })
  const dir = tempDir(t)
  const file = join(dir, 'cluster.toml')
  writeFileSync(file, '[acme]\nemail = "ops@example.com"\ndirectory = "https://acme.example.org/dir"\n')
  const config = loadConfig({ file, env: {}, cwd: dir }, [acme])
  t.same(config.sections.get('acme'), { email: 'ops@example.com', directory: 'https://acme.example.org/dir' })
  t.equal(config.owners.get('acme'), 'certs')
  writeFileSync(file, '[acme]\nemail = "ops@example.com"\ndirectory = "not a url"\n')
  t.throws(() => loadConfig({ file, env: {}, cwd: dir }, [acme]), { message: /cluster\.toml: \[acme\]\.directory: .*got "not a url"$/ })
  writeFileSync(file, '[proxy]\nhttp_port = 80\n')
  t.throws(() => loadConfig({ file, env: {}, cwd: dir }, [acme]), { name: 'ConfigError', message: `${file}: unknown section [proxy] (known: server, certs, acme)` })
})

t.test('each section and each environment variable has one owner, checked when plugins load', async t => {
  const claims = (name: string, extra: Record<string, unknown>): ReturnType<typeof definePlugin> =>
    definePlugin({ name, version: '1', config: Type => Type.Object({ url: Type.String({ default: '' }) }, { additionalProperties: false }), ...extra })
  t.throws(() => loadConfig({ env: {}, cwd: '/' }, [claims('one', { env: { SHARED_URL: 'url' } }), claims('two', { env: { SHARED_URL: 'url' } })]),
    { name: 'PluginLoadError', message: 'environment variable SHARED_URL is claimed by plugin "one" and by plugin "two"; each variable belongs to one plugin' })
  t.throws(() => loadConfig({ env: {}, cwd: '/' }, [claims('one', { env: { BERTH_STATE_DIR: 'url' } })]),
    { message: 'environment variable BERTH_STATE_DIR is claimed by the kernel and by plugin "one"; each variable belongs to one plugin' })
  t.throws(() => loadConfig({ env: {}, cwd: '/' }, [claims('one', { env: { ONE_X: 'nope' } })]),
    { message: 'plugin "one" maps environment variable ONE_X to [one].nope, which its schema does not have' })
  const section = (name: string, owned: string): ReturnType<typeof definePlugin> =>
    definePlugin({ name, version: '1', sections: { [owned]: Type => Type.Object({}) } })
  t.throws(() => loadConfig({ env: {}, cwd: '/' }, [section('one', 'shared'), section('two', 'shared')]),
    { message: 'plugin "two" declares section [shared], which plugin "one" already owns' })
  t.throws(() => loadConfig({ env: {}, cwd: '/' }, [section('one', 'server')]), { message: 'plugin "one" declares section [server], which the kernel already owns' })
  t.throws(() => loadConfig({ env: {}, cwd: '/' }, [section('one', 'two'), claims('two', {})]), { message: 'plugin "one" declares section [two], which plugin "two" already owns' })
})
