// The development identity provider as a plugin of its own: the products that ask for it reach it
// through their optional dependency, get a provider whose passwords are kept 0600, and are refused
// at start, naming their setting, on a server that does not run it.
import t from 'tap'
import { statSync } from 'node:fs'
import campaign from '../../../plugins/campaign/index.js'
import devIdp from '../../../plugins/dev-idp/index.js'
import ingest from '../../../plugins/ingest/index.js'
import { testKernel } from '../../support/kernel.js'

t.test('a product asking for the provider on a server without dev-idp is refused at start, naming its setting', async t => {
  const app = await testKernel(t, { plugins: [campaign], config: { campaign: { dev_idp: true } }, noStart: true })
  await t.rejects(app.start(), { message: 'plugin "campaign" failed during start: [campaign].dev_idp (CAMPAIGN_DEV_IDP, berth server --dev) needs the dev-idp plugin, which this server does not run (see [server].plugins and disable)' })
  const telemetry = await testKernel(t, { plugins: [ingest], config: { ingest: { sso: { dev_idp: true } } }, noStart: true })
  await t.rejects(telemetry.start(), { message: /^plugin "ingest" failed during setup: \[ingest\]\.sso\.dev_idp needs the dev-idp plugin/ })
})

t.test('two products share the plugin, each with its own provider, realm and users', async t => {
  const kernel = await testKernel(t, { plugins: [devIdp, ingest, campaign], config: { campaign: { dev_idp: true }, ingest: { sso: { dev_idp: true } } } })
  const app = kernel.service('campaign').devIdp
  t.same(app?.users.map(user => user.username), ['admin', 'staff', 'volunteer', 'readonly'], 'the campaign\'s roles')
  t.match(app?.issuer, /^http:\/\/127\.0\.0\.1:\d+\/realms\/campaign$/)
  const notes = kernel.notes.join('\n')
  t.match(notes, /campaign app: .* sign in through the development identity provider; new passwords/)
  const files = [...notes.matchAll(/kept in (\S+)\)/g)].map(match => match[1])
  t.match(files, [/campaign-dev-idp-passwords$/, /telemetry-dev-idp-passwords$/], 'a passwords file per product')
  for (const file of files) t.equal(statSync(file).mode & 0o777, 0o600, `${file} is 0600`)
  const discovery = await fetch(`${app?.issuer ?? ''}/.well-known/openid-configuration`)
  t.equal(discovery.status, 200, 'the campaign\'s realm answers')
  await kernel.stop()
  await t.rejects(fetch(`${app?.issuer ?? ''}/.well-known/openid-configuration`), 'closed with the server')
})
