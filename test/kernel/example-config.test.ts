// The shipped example configs: config/cluster.toml loads with every plugin there is and says what the
// defaults are; config/orchestration-example.toml (every section the orchestration spec shows) is
// refused section by section as "not supported yet", and loads once plugins own those sections.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'smol-toml'
import { definePlugin } from '../../kernel/index.js'
import { loadConfig } from '../../kernel/config.js'
import { discoverPlugins } from '../../kernel/loader.js'
import { tempDir } from '../support/tmp.js'

const example = (name: string): string => fileURLToPath(new URL(`../../config/${name}`, import.meta.url))

t.test('config/cluster.toml is valid and says what the defaults are', async t => {
  const plugins = await discoverPlugins()
  const shipped = loadConfig({ file: example('cluster.toml'), env: {}, cwd: '/srv' }, plugins)
  const defaults = loadConfig({ env: {}, cwd: '/srv' }, plugins)
  t.same(shipped.server, defaults.server)
  t.equal(shipped.stateDir, '/srv/.berth')
  t.same(Object.keys(shipped.server.listeners).sort(), ['app', 'control', 'telemetry'])
  t.same(shipped.server.listeners.telemetry, { host: '0.0.0.0', port: 6881, body_limit: 1048576 })
})

t.test('the specification\'s cluster.toml: each section is refused as not supported yet, by name', async t => {
  const plugins = await discoverPlugins()
  const file = example('orchestration-example.toml')
  t.throws(() => loadConfig({ file, env: {}, cwd: '/srv' }, plugins), { name: 'ConfigError', message: `${file}: section [cluster] is not supported yet` })
  const sections = parse(readFileSync(file, 'utf8'))
  const dir = tempDir(t)
  for (const [name, value] of Object.entries(sections)) {
    const single = join(dir, `${name}.toml`)
    writeFileSync(single, readFileSync(file, 'utf8').split(/\n(?=\[)/).filter(part => part.startsWith(`[${name}]`) || part.startsWith(`[[${name}.`)).join('\n'))
    t.ok(value, `[${name}] is in the example`)
    t.throws(() => loadConfig({ file: single, env: {}, cwd: '/srv' }, plugins), { message: `${single}: section [${name}] is not supported yet` })
  }
})

t.test('the specification\'s cluster.toml loads once plugins own its sections, with typed values', async t => {
  const plugins = await discoverPlugins()
  const owners = [
    definePlugin({
      name: 'cluster',
      version: '0',
      config: Type => Type.Object({ name: Type.String(), domain: Type.String(), acme_email: Type.String() }, { additionalProperties: false }),
      sections: { acme: Type => Type.Object({ email: Type.String(), directory: Type.String({ format: 'uri' }) }, { additionalProperties: false }) }
    }),
    definePlugin({
      name: 'proxy',
      version: '0',
      config: Type => Type.Object({ http_port: Type.Integer({ default: 80 }), https_port: Type.Integer({ default: 443 }) }, { additionalProperties: false }),
      listeners: [{ name: 'proxy-http', port: 80, kind: 'raw', portKey: 'http_port' }, { name: 'proxy-https', port: 443, kind: 'raw', portKey: 'https_port' }]
    }),
    definePlugin({
      name: 'backup',
      version: '0',
      config: Type => Type.Object({
        enabled: Type.Boolean({ default: false }),
        schedule: Type.String({ format: 'cron' }),
        retention_days: Type.Integer({ minimum: 1 }),
        targets: Type.Array(Type.Union([
          Type.Object({ type: Type.Literal('local'), path: Type.String() }, { additionalProperties: false }),
          Type.Object({ type: Type.Literal('s3'), endpoint: Type.String({ format: 'uri' }), bucket: Type.String(), region: Type.String(), access_key: Type.String(), secret_key: Type.String() }, { additionalProperties: false })
        ]))
      }, { additionalProperties: false })
    })
  ]
  const config = loadConfig({ file: example('orchestration-example.toml'), env: {}, cwd: '/srv' }, [...plugins, ...owners])
  t.match(config.sections.get('cluster'), { name: 'production', domain: 'example.com' })
  t.same(config.sections.get('acme'), { email: 'ops@example.com', directory: 'https://acme-v02.api.letsencrypt.org/directory' })
  t.same(config.sections.get('proxy'), { http_port: 80, https_port: 443 })
  t.match(config.sections.get('backup'), { enabled: true, schedule: '0 0 3 * * *', retention_days: 14, targets: [{ type: 'local' }, { type: 's3', bucket: 'berth-backups' }] })
  t.same(config.server.listeners['proxy-https'], { host: '0.0.0.0', port: 443, body_limit: 1048576 }, 'the proxy\'s listeners take their ports from [proxy]')
})

t.test('the telemetry and campaign products read their identity provider from their own variables', async t => {
  const plugins = await discoverPlugins()
  const campaignOnly = loadConfig({ env: { CAMPAIGN_IDP_URL: 'https://id.example.org', CAMPAIGN_IDP_REALM: 'hq' }, cwd: '/srv' }, plugins)
  t.match(campaignOnly.sections.get('campaign'), { idp_url: 'https://id.example.org', idp_realm: 'hq' })
  t.match(campaignOnly.sections.get('ingest'), { sso: { idp_url: '', realm: '' } }, 'configuring the campaign IDP leaves telemetry in Basic mode')
  const telemetryOnly = loadConfig({ env: { IDP_URL: 'https://sso.example.org', IDP_REALM: 'fleet', IDP_CLIENT_ID: 'dash' }, cwd: '/srv' }, plugins)
  t.match(telemetryOnly.sections.get('ingest'), { sso: { idp_url: 'https://sso.example.org', realm: 'fleet', client_id: 'dash' } })
  t.match(telemetryOnly.sections.get('campaign'), { idp_url: '', idp_realm: 'campaign' }, 'and the other way round')
})
