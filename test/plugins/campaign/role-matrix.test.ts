// Each role against each server function, signed in through the development IDP: allowed functions
// answer 200, the others 403; without a session every function but check-auth answers 401.
import t from 'tap'
import campaign from '../../../plugins/campaign/index.js'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import { ROLES, type Role } from '../../../plugins/campaign/roles.js'
import { scriptedLogin, statusOf } from '../../support/campaign.js'
import { testKernel } from '../../support/kernel.js'

const ALL: readonly Role[] = ROLES
const STAFF: readonly Role[] = ['admin', 'staff']
const VIEWERS: readonly Role[] = ['admin', 'staff', 'volunteer', 'readonly']
const READERS: readonly Role[] = ['admin', 'staff', 'readonly']

/** Who may call what: written out here, independently of the plugin's declarations. */
const EXPECTED: Record<string, readonly Role[]> = {
  'check-auth': ALL,
  'record-feedback': ['admin', 'staff', 'volunteer'],
  'admin-health': ['admin'],
  'admin-list-users': ['admin'],
  'kb-ingest': STAFF,
  'kb-query': VIEWERS,
  'save-volunteer': STAFF,
  'list-volunteers': VIEWERS,
  'volunteer-detail': VIEWERS,
  'match-volunteer': VIEWERS,
  'list-donors': ['admin', 'staff', 'readonly'],
  'record-donation': STAFF,
  'draft-solicitation': STAFF,
  'ingest-posts': STAFF,
  'sentiment-summary': READERS,
  'detect-spikes': READERS,
  'extract-narratives': READERS,
  'predict-virality': READERS
}

const place = { lat: 52.52, lon: 13.4 }

t.test('role × server function', async t => {
  const kernel = await testKernel(t, { plugins: [campaign] })
  const baseUrl = kernel.url('app')
  const { registry, devIdp } = kernel.service('campaign')
  t.same(registry.names.sort(), Object.keys(EXPECTED).sort(), 'every registered function is in the matrix')

  const cookies = Object.fromEntries(await Promise.all((devIdp?.users ?? []).map(async user =>
    [user.role, (await scriptedLogin(baseUrl, user)).cookie] as const)))
  const call = async (name: string, args: object, role?: Role): Promise<unknown> =>
    await callServerFunction(name, args, { baseUrl, headers: role === undefined ? {} : { cookie: cookies[role] } })

  const volunteer = await call('save-volunteer', { name: 'Vera', email: 'vera@x.test', skills: ['canvassing'], availability: ['sat-am'], location: place }, 'admin') as { volunteer_id: string }
  const donation = await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 1000 }, 'admin') as { donor_id: string }
  const args: Record<string, object> = {
    'check-auth': {},
    'record-feedback': { module_id: 'knowledge-base', resource_id: 'doc-1', is_positive: true, is_active: true },
    'admin-health': {},
    'admin-list-users': {},
    'kb-ingest': { title: 'Platform', text: 'We will build housing near transit.' },
    'kb-query': { query: 'housing' },
    'save-volunteer': { name: 'Sam', email: 'sam@x.test', location: place },
    'list-volunteers': {},
    'volunteer-detail': { volunteer_id: volunteer.volunteer_id },
    'match-volunteer': { skills: ['canvassing'], location: place },
    'list-donors': {},
    'record-donation': { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 100 },
    'draft-solicitation': { donor_id: donation.donor_id },
    'ingest-posts': { posts: [{ text: 'The new bridge is great.' }] },
    'sentiment-summary': {},
    'detect-spikes': {},
    'extract-narratives': {},
    'predict-virality': { terms: ['bridge'] }
  }

  for (const [name, allowed] of Object.entries(EXPECTED)) {
    for (const role of ROLES) {
      const outcome = await statusOf(call(name, args[name], role))
      t.equal(outcome, allowed.includes(role) ? 200 : 403, `${role} → ${name}`)
    }
    const anonymous = await statusOf(call(name, args[name]))
    t.equal(anonymous, name === 'check-auth' ? 200 : 401, `no session → ${name}`)
  }

  const infos = Object.fromEntries(await Promise.all(ROLES.map(async role => [role, await call('check-auth', {}, role) as { modules: string[], functions: string[] }] as const)))
  for (const role of ROLES) {
    t.same(infos[role].functions.sort(), Object.keys(EXPECTED).filter(name => EXPECTED[name].includes(role)).sort(), `check-auth lists what ${role} may call`)
  }
  t.same(Object.fromEntries(ROLES.map(role => [role, infos[role].modules])), {
    admin: ['admin', 'knowledge-base', 'volunteers', 'fundraising', 'sentiment-monitor', 'narrative-contagion'],
    staff: ['knowledge-base', 'volunteers', 'fundraising', 'sentiment-monitor', 'narrative-contagion'],
    volunteer: ['knowledge-base', 'volunteers'],
    readonly: ['knowledge-base', 'volunteers', 'fundraising', 'sentiment-monitor', 'narrative-contagion']
  }, 'the navigation each role sees')
})
