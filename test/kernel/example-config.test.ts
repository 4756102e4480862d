// The shipped example config/cluster.toml must load with every plugin there is, and match the defaults.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../../kernel/config.js'
import { discoverPlugins } from '../../kernel/loader.js'

t.test('config/cluster.toml is valid and says what the defaults are', async t => {
  const plugins = await discoverPlugins()
  const file = fileURLToPath(new URL('../../config/cluster.toml', import.meta.url))
  const example = loadConfig({ file, env: {}, cwd: '/srv' }, plugins)
  const defaults = loadConfig({ env: {}, cwd: '/srv' }, plugins)
  t.same(example.server, defaults.server)
  t.equal(example.stateDir, '/srv/.berth')
})
