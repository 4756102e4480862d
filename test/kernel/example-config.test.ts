// The shipped example configs: config/cluster.toml loads with every plugin there is and says what the
// defaults are; config/orchestration-example.toml (every section the orchestration spec shows) is
// refused section by section as "not supported yet", and loads once plugins own those sections.
import t from 'tap'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'smol-toml'
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
  t.same(Object.keys(shipped.server.listeners).sort(), ['app', 'control', 'proxy-http', 'proxy-https', 'telemetry'])
  t.same(shipped.server.listeners.telemetry, { host: '0.0.0.0', port: 6881, body_limit: 1048576, headers_timeout_ms: 20000, request_timeout_ms: 120000, idle_timeout_ms: 5000 })
})

t.test('the specification\'s cluster.toml: each section is read by its owner, or refused as not supported yet', async t => {
  const plugins = await discoverPlugins()
  const file = example('orchestration-example.toml')
  const owners = loadConfig({ env: {}, cwd: '/srv' }, plugins).owners
  const text = readFileSync(file, 'utf8')
  const dir = tempDir(t)
  for (const name of Object.keys(parse(text))) {
    const single = join(dir, `${name}.toml`)
    writeFileSync(single, text.split(/\n(?=\[)/).filter(part => part.startsWith(`[${name}]`) || part.startsWith(`[[${name}.`)).join('\n'))
    if (owners.has(name)) {
      t.ok(loadConfig({ file: single, env: {}, cwd: '/srv' }, plugins).sections.get(name), `[${name}] is read by plugin "${owners.get(name) ?? ''}"`)
    } else {
      t.throws(() => loadConfig({ file: single, env: {}, cwd: '/srv' }, plugins), { message: `${single}: section [${name}] is not supported yet` })
    }
  }
  t.match(loadConfig({ file: join(dir, 'cluster.toml'), env: {}, cwd: '/srv' }, plugins).sections.get('cluster'), { name: 'production', domain: 'example.com', acme_email: 'ops@example.com', join: '' })
  t.same(['acme', 'proxy', 'backup'].filter(name => !owners.has(name)), [], 'no section is still planned')
})

t.test('the specification\'s cluster.toml loads with typed values: every section has its owner', async t => {
  const plugins = await discoverPlugins()
  const config = loadConfig({ file: example('orchestration-example.toml'), env: {}, cwd: '/srv' }, plugins)
  t.match(config.sections.get('cluster'), { name: 'production', domain: 'example.com' })
  t.match(config.sections.get('acme'), { email: 'ops@example.com', directory: 'https://acme-v02.api.letsencrypt.org/directory' })
  t.match(config.sections.get('proxy'), { http_port: 80, https_port: 443 })
  t.match(config.sections.get('backup'), { enabled: true, schedule: '0 0 3 * * *', retention_days: 14, targets: [{ type: 'local' }, { type: 's3', bucket: 'berth-backups' }] })
  t.match(config.server.listeners['proxy-https'], { host: '0.0.0.0', port: 443 }, 'the proxy\'s listeners take their ports from [proxy]')
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
