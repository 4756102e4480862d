// The [campaign] section: environment variables, and the start-up refusals (the development fallback
// and the embedded IDP in production, the embedded IDP beside a configured one, plain HTTP to a remote
// IDP); the fallback itself when opted in.
import t from 'tap'
import devIdpPlugin from '../../../plugins/dev-idp/index.js'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction, ServerFunctionError } from '../../../plugins/campaign/client.js'
import { testKernel } from '../../support/kernel.js'
import { pollUntil } from '../../support/poll.js'

t.test('refused at start, each in one clear line: development aids in production, the embedded IDP beside a configured one, bad URLs', async t => {
  const cases: Array<[string, NodeJS.ProcessEnv, Record<string, unknown>, RegExp]> = [
    ['fallback', { NODE_ENV: 'production', CAMPAIGN_IDP_URL: 'https://id.example.org' }, { dev_fallback: true },
      /plugin "campaign" failed during setup: \[campaign\]\.dev_fallback \(CAMPAIGN_DEV_FALLBACK\) is for development and is refused when NODE_ENV=production/],
    ['fallback by env', { NODE_ENV: 'production', CAMPAIGN_IDP_URL: 'https://id.example.org', CAMPAIGN_DEV_FALLBACK: 'true' }, {}, /dev_fallback .* refused when NODE_ENV=production/],
    ['embedded IDP', { NODE_ENV: 'production' }, { dev_idp: true },
      /plugin "campaign" failed during setup: \[campaign\]\.dev_idp \(CAMPAIGN_DEV_IDP, berth server --dev\) is for development and is refused when NODE_ENV=production$/],
    ['embedded IDP by env', { NODE_ENV: 'production', CAMPAIGN_DEV_IDP: 'true' }, {}, /dev_idp .* refused when NODE_ENV=production/],
    ['embedded IDP beside a configured one', { CAMPAIGN_IDP_URL: 'https://id.example.org', CAMPAIGN_DEV_IDP: 'true' }, {},
      /\[campaign\]\.dev_idp \(CAMPAIGN_DEV_IDP, berth server --dev\) runs its own identity provider; leave \[campaign\]\.idp_url \(CAMPAIGN_IDP_URL\) empty, or turn dev_idp off/],
    ['plain HTTP to a remote IDP', { CAMPAIGN_IDP_URL: 'http://id.example.org' }, {}, /must use https unless the provider is on loopback/],
    ['not a URL', { APP_URL: 'app.example.org' }, {}, /\[campaign\]\.app_url \(APP_URL\) must be an http\(s\) URL/]
  ]
  for (const [what, env, config, message] of cases) {
    const kernel = await testKernel(t, { plugins: [devIdpPlugin, campaign], env, config: { campaign: config }, noStart: true })
    await t.rejects(kernel.start(), message, what)
  }
})

t.test('the environment names the IDP, realm, client and app address', async t => {
  const kernel = await testKernel(t, {
    plugins: [devIdpPlugin, campaign],
    env: { CAMPAIGN_IDP_URL: 'http://127.0.0.1:9/', CAMPAIGN_IDP_REALM: 'hq', CAMPAIGN_IDP_CLIENT_ID: 'web', APP_URL: 'https://app.example.org/' }
  })
  const { login, devIdp } = kernel.service('campaign')
  t.equal(devIdp, undefined, 'no embedded IDP when one is configured')
  t.equal(login?.issuer, 'http://127.0.0.1:9/realms/hq')
  t.equal(login?.appUrl.href, 'https://app.example.org/')
  t.same(kernel.notes, ['campaign app: https://app.example.org/ — sign in through http://127.0.0.1:9/realms/hq'], 'the start-up summary says where to sign in')
  const down = await pollUntil(() => kernel.health().plugins.campaign.checks?.['identity-provider'], { what: 'the identity provider check' })
  t.match(down, { status: 'down', reason: /^http:\/\/127\.0\.0\.1:9\/realms\/hq\/\.well-known\/openid-configuration is unreachable \(bad port\): nobody can sign in/ }, 'health says nobody can sign in')
  t.equal(kernel.health().status, 'degraded')
})

t.test('opted in, check-auth reports the fixed admin to nobody; other functions still need a session', async t => {
  const kernel = await testKernel(t, { plugins: [devIdpPlugin, campaign], config: { campaign: { dev_fallback: true } } })
  const baseUrl = kernel.url('app')
  t.match(await callServerFunction('check-auth', {}, { baseUrl }), { authenticated: true, email: 'dev@localhost', name: 'Development Admin', role: 'admin' })
  await t.rejects(callServerFunction('admin-health', {}, { baseUrl }), new ServerFunctionError(401, 'sign in first: no valid session', 'BERTH_UNAUTHORIZED'))
  const off = await testKernel(t, { plugins: [devIdpPlugin, campaign] })
  t.match(await callServerFunction('check-auth', {}, { baseUrl: off.url('app') }), { authenticated: false }, 'off by default')
})
