// Each role against each server function, signed in through the development IDP: allowed functions
// answer 200, the others 403; without a session every function but check-auth answers 401. No result
// a volunteer or readonly member gets names who recorded anything (attribution is staff's).
import t from 'tap'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import { ATTRIBUTION_FIELDS } from '../../../plugins/campaign/people.js'
import { ROLES, type Role } from '../../../plugins/campaign/roles.js'
import { campaignKernel, scriptedLogin, statusOf } from '../../support/campaign.js'

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
  'admin-create-api-token': ['admin'],
  'admin-list-api-tokens': ['admin'],
  'admin-revoke-api-token': ['admin'],
  'audit-log': ['admin'],
  'save-person': STAFF,
  'person-detail': READERS,
  'list-people': READERS,
  'delete-person': STAFF,
  'find-duplicates': STAFF,
  'merge-people': STAFF,
  'save-list': STAFF,
  'list-lists': READERS,
  'delete-list': STAFF,
  'import-csv': STAFF,
  'kb-ingest': STAFF,
  'kb-query': VIEWERS,
  'save-volunteer': STAFF,
  'list-volunteers': VIEWERS,
  'volunteer-detail': VIEWERS,
  'delete-volunteer': STAFF,
  'match-volunteer': VIEWERS,
  'save-event': STAFF,
  'publish-event': STAFF,
  'list-events': VIEWERS,
  'event-detail': VIEWERS,
  'rsvp-shift': ['admin', 'staff', 'volunteer'],
  'cancel-rsvp': ['admin', 'staff', 'volunteer'],
  'check-in': STAFF,
  'shift-roster': STAFF,
  'person-attendance': STAFF,
  'send-shift-reminders': STAFF,
  'save-form': STAFF,
  'list-forms': READERS,
  'form-signatures': STAFF,
  'public-page-stats': READERS,
  'list-donors': ['admin', 'staff', 'readonly'],
  'list-donations': READERS,
  'record-donation': STAFF,
  'correct-donation': STAFF,
  'refund-donation': STAFF,
  'draft-solicitation': STAFF,
  'analyze-transcript': ['admin', 'staff', 'volunteer'],
  'call-trends': READERS,
  'extract-commitments': STAFF,
  'add-evidence': STAFF,
  'accountability-report': READERS,
  'summarize-meeting': STAFF,
  'translate-content': ['admin', 'staff', 'volunteer'],
  'anticipate-questions': READERS,
  'preparation-checklist': STAFF,
  'compare-policies': READERS,
  'compliance-check': STAFF,
  'generate-report': STAFF,
  'generate-copy': STAFF,
  'list-copy-history': READERS,
  'send-email': STAFF,
  'send-sms': STAFF,
  'preview-send': STAFF,
  'list-send-log': READERS,
  'list-suppressions': STAFF,
  'list-sms-replies': STAFF,
  'add-suppression': STAFF,
  'remove-suppression': ['admin'],
  'generate-script': ['admin', 'staff', 'volunteer'],
  'generate-briefing': STAFF,
  'list-opponents': READERS,
  'generate-opposition-briefing': STAFF,
  'detect-contradictions': READERS,
  'policy-chat': ['admin', 'staff', 'volunteer'],
  'policy-ingest': STAFF,
  'list-policy-sessions': ['admin', 'staff', 'volunteer'],
  'coaching-exchange': STAFF,
  'simulate-reaction': READERS,
  'detect-tensions': READERS,
  'analyze-local-issues': VIEWERS,
  'map-factions': READERS,
  'consensus-finder': READERS,
  'analyze-regulation': STAFF,
  'analyze-article': STAFF,
  'compare-coverage': READERS,
  'analyze-disinfo': STAFF,
  'counter-messaging': STAFF,
  'ingest-posts': STAFF,
  'sentiment-summary': READERS,
  'detect-spikes': READERS,
  'extract-narratives': READERS,
  'predict-virality': READERS
}

const place = { lat: 52.52, lon: 13.4 }

t.test('role × server function', async t => {
  const kernel = await campaignKernel(t, { smtp_url: 'smtp://127.0.0.1:9', mail_from: 'matrix@x.test', sms_url: 'http://127.0.0.1:9/sms' })
  const baseUrl = kernel.url('app')
  const { registry, devIdp } = kernel.service('campaign')
  t.same(registry.names.sort(), Object.keys(EXPECTED).sort(), 'every registered function is in the matrix')

  const cookies = Object.fromEntries(await Promise.all((devIdp?.users ?? []).map(async user =>
    [user.role, (await scriptedLogin(baseUrl, user)).cookie] as const)))
  const call = async (name: string, args: object, role?: Role): Promise<unknown> =>
    await callServerFunction(name, args, { baseUrl, headers: role === undefined ? {} : { cookie: cookies[role] } })

  const volunteer = await call('save-volunteer', { name: 'Vera', email: 'vera@x.test', skills: ['canvassing'], availability: ['sat-am'], location: place }, 'admin') as { volunteer_id: string }
  const donation = await call('record-donation', { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 1000 }, 'admin') as { donor_id: string, donation_id: string }
  const canvass = await call('save-event', { title: 'Canvass', location: { text: 'Hall', ...place }, shifts: [{ starts_at: new Date(Date.now() + 86_400_000).toISOString(), ends_at: new Date(Date.now() + 90_000_000).toISOString(), capacity: 10 }] }, 'admin') as { event_id: string, shifts: Array<{ shift_id: string }> }
  const petition = await call('save-form', { title: 'Keep the library open' }, 'admin') as { form_id: string }
  const shiftId = canvass.shifts[0].shift_id
  const rsvp = await call('rsvp-shift', { shift_id: shiftId, person: { name: 'Rita', email: 'rita@x.test' } }, 'admin') as { person_id: string }
  const [commitment] = (await call('extract-commitments', { text: 'We will build homes by 2030.', actor: 'Maria' }, 'admin') as { commitments: Array<{ commitment_id: string }> }).commitments
  await call('generate-opposition-briefing', { opponent: 'Dan Reyes', statements: [{ text: 'I oppose new housing.' }] }, 'admin')
  const person = await call('save-person', { name: 'Mat Rix', email: 'mat@x.test', tags: ['matrix'] }, 'admin') as { person_id: string }
  const perRole = async (make: (role: Role) => Promise<string>): Promise<Record<string, string>> => Object.fromEntries(await Promise.all(ROLES.map(async role => [role, await make(role)] as const)))
  const doomed = await perRole(async role => (await call('save-person', { name: `Doomed ${role}` }, 'admin') as { person_id: string }).person_id)
  const twins = await perRole(async role => (await call('save-person', { name: `Twin ${role}` }, 'admin') as { person_id: string }).person_id)
  const lists = await perRole(async role => (await call('save-list', { name: `List ${role}`, filter: {} }, 'admin') as { list_id: string }).list_id)
  const leaving = await perRole(async role => (await call('save-volunteer', { name: `Leaving ${role}`, email: `leaving-${role}@x.test`, location: place }, 'admin') as { volunteer_id: string }).volunteer_id)
  const revocable = await call('admin-create-api-token', { name: 'matrix', role: 'readonly' }, 'admin') as { id: string }
  const args: Record<string, object | ((role: Role) => object)> = {
    'check-auth': {},
    'record-feedback': { module_id: 'knowledge-base', resource_id: 'doc-1', is_positive: true, is_active: true },
    'admin-health': {},
    'admin-list-users': {},
    'admin-create-api-token': { name: 'matrix', role: 'volunteer' },
    'admin-list-api-tokens': {},
    'admin-revoke-api-token': { id: revocable.id },
    'audit-log': { limit: 5 },
    'save-person': role => ({ name: `Pat ${role}`, email: `pat-${role}@x.test`, tags: ['matrix'] }),
    'person-detail': { person_id: person.person_id },
    'list-people': { filter: { tags: ['matrix'] } },
    'delete-person': role => ({ person_id: doomed[role] }),
    'find-duplicates': {},
    'merge-people': role => ({ keep_id: person.person_id, merge_ids: [twins[role]] }),
    'save-list': { name: 'Matrix', filter: { tags: ['matrix'] } },
    'list-lists': {},
    'delete-list': role => ({ list_id: lists[role] }),
    'import-csv': { kind: 'people', csv: 'name,email\nImp Orted,imp@x.test\n' },
    'kb-ingest': { title: 'Platform', text: 'We will build housing near transit.' },
    'kb-query': { query: 'housing' },
    'save-volunteer': role => ({ name: 'Sam', email: `sam-${role}@x.test`, location: place }),
    'list-volunteers': {},
    'volunteer-detail': { volunteer_id: volunteer.volunteer_id },
    'delete-volunteer': role => ({ volunteer_id: leaving[role] }),
    'match-volunteer': { skills: ['canvassing'], location: place },
    'save-event': { title: 'Canvass', location: { text: 'Hall', ...place } },
    'publish-event': { event_id: canvass.event_id, published: true },
    'list-events': {},
    'event-detail': { event_id: canvass.event_id },
    'rsvp-shift': { shift_id: shiftId },
    'cancel-rsvp': { shift_id: shiftId },
    'check-in': { shift_id: shiftId, person_id: rsvp.person_id },
    'shift-roster': { shift_id: shiftId },
    'person-attendance': { person_id: rsvp.person_id },
    'send-shift-reminders': {},
    'save-form': { title: 'Keep the library open', fields: [{ field: 'first_name', required: true }], target: 500 },
    'list-forms': {},
    'form-signatures': { form_id: petition.form_id },
    'public-page-stats': {},
    'list-donors': {},
    'list-donations': { donor_id: donation.donor_id },
    'record-donation': { donor_name: 'Dora Donor', donor_email: 'dora@x.test', amount_cents: 100 },
    'correct-donation': role => ({ donation_id: donation.donation_id, amount_cents: 1001 + ROLES.indexOf(role), reason: 'typed wrong' }),
    'refund-donation': { donation_id: donation.donation_id, amount_cents: 100, reason: 'asked for it back' },
    'draft-solicitation': { donor_id: donation.donor_id },
    'analyze-transcript': { transcript: 'Volunteer: Hi!\nVoter: Count me in.' },
    'call-trends': {},
    'extract-commitments': { text: 'We will build homes by 2030.', actor: 'Maria' },
    'add-evidence': { commitment_id: commitment.commitment_id, text: 'The homes opened.' },
    'accountability-report': {},
    'summarize-meeting': { title: 'Standup', text: 'Ana: Ana will send the flyer by Friday.' },
    'translate-content': { text: 'Thank you for your support.', target_language: 'es' },
    'anticipate-questions': { topic: 'housing' },
    'preparation-checklist': { event: 'Town hall', topics: ['housing'] },
    'compare-policies': { a: { text: 'Volunteers may canvass.' }, b: { text: 'Volunteers must canvass.' } },
    'compliance-check': { text: 'Vote for Maria. Paid for by Lopez for Council.', channel: 'post' },
    'generate-report': { period_from: '2026-01-01', period_to: '2026-12-31' },
    'generate-copy': { topic: 'housing', channel: 'sms' },
    'list-copy-history': {},
    // Unknown people are skipped: nothing reaches the (absent) mail server or SMS provider.
    'send-email': { person_ids: ['nobody'], subject: 'Hi {{first_name}}', body: 'Hello {{name}}' },
    'send-sms': { person_ids: ['nobody'], body: 'Hello {{first_name}}' },
    'preview-send': { channel: 'email', person_ids: ['nobody'], subject: 'Hi', body: 'Hello {{name}}' },
    'list-send-log': {},
    'list-suppressions': {},
    'list-sms-replies': {},
    'add-suppression': { address: 'matrix@x.test', reason: 'asked not to be contacted' },
    'remove-suppression': { address: 'matrix@x.test' },
    'generate-script': { topic: 'housing' },
    'generate-briefing': { subject: 'housing' },
    'list-opponents': {},
    'generate-opposition-briefing': { opponent: 'Dan Reyes', statements: [{ text: 'I support new housing.' }] },
    'detect-contradictions': { opponent: 'Dan Reyes' },
    'policy-chat': { message: 'What is the housing plan?' },
    'policy-ingest': { title: 'Platform', text: 'We will build housing near transit.' },
    'list-policy-sessions': {},
    'coaching-exchange': { mode: 'coaching', topic: 'Housing?', message: 'We will build housing near transit.' },
    'simulate-reaction': { message: 'We will build housing near transit.' },
    'detect-tensions': { groups: [{ name: 'A', statements: ['We support transit.'] }, { name: 'B', statements: ['We oppose transit.'] }] },
    'analyze-local-issues': { texts: [{ text: 'Rent is too high.', location: 'Eastside' }] },
    'map-factions': {},
    'consensus-finder': {},
    'analyze-regulation': { title: 'Act', text: 'Each committee shall file a report within 30 days.' },
    'analyze-article': { title: 'Bridge opens', text: 'The new bridge opened on Saturday.', outlet: 'Herald' },
    'compare-coverage': {},
    'analyze-disinfo': { text: 'Share before it is deleted! Voting machines were hacked.' },
    'counter-messaging': { text: 'Voting machines were hacked.' },
    'ingest-posts': { posts: [{ text: 'The new bridge is great.' }] },
    'sentiment-summary': {},
    'detect-spikes': {},
    'extract-narratives': {},
    'predict-virality': { terms: ['bridge'] }
  }

  for (const [name, allowed] of Object.entries(EXPECTED)) {
    const argsOf = (role: Role): object => { const given = args[name]; return typeof given === 'function' ? given(role) : given }
    for (const role of ROLES) {
      const result = call(name, argsOf(role), role)
      t.equal(await statusOf(result), allowed.includes(role) ? 200 : 403, `${role} → ${name}`)
      if (allowed.includes(role) && ['volunteer', 'readonly'].includes(role)) {
        t.notOk(JSON.stringify(await result).match(new RegExp(`"(${ATTRIBUTION_FIELDS.join('|')})":`)), `${role} → ${name}: no attribution`)
      }
    }
    const anonymous = await statusOf(call(name, argsOf('readonly')))
    t.equal(anonymous, name === 'check-auth' ? 200 : 401, `no session → ${name}`)
  }

  const infos = Object.fromEntries(await Promise.all(ROLES.map(async role => [role, await call('check-auth', {}, role) as { modules: string[], functions: string[] }] as const)))
  for (const role of ROLES) {
    t.same(infos[role].functions.sort(), Object.keys(EXPECTED).filter(name => EXPECTED[name].includes(role)).sort(), `check-auth lists what ${role} may call`)
  }
  t.same(Object.fromEntries(ROLES.map(role => [role, infos[role].modules])), {
    admin: ['knowledge-base', 'people', 'volunteers', 'events', 'canvassing', 'fundraising', 'meetings', 'sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'disinfo-warning', 'campaign-copy', 'sending', 'policy-chatbot', 'multilingual', 'empathy-simulator', 'question-anticipation', 'candidate-briefings', 'coaching-debate', 'opposition-research', 'coalition-detector', 'faction-mapper', 'policy-diff', 'regulatory-monitor', 'compliance', 'accountability', 'admin'],
    staff: ['knowledge-base', 'people', 'volunteers', 'events', 'canvassing', 'fundraising', 'meetings', 'sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'disinfo-warning', 'campaign-copy', 'sending', 'policy-chatbot', 'multilingual', 'empathy-simulator', 'question-anticipation', 'candidate-briefings', 'coaching-debate', 'opposition-research', 'coalition-detector', 'faction-mapper', 'policy-diff', 'regulatory-monitor', 'compliance', 'accountability'],
    volunteer: ['knowledge-base', 'volunteers', 'events', 'canvassing', 'local-issues', 'call-intelligence', 'policy-chatbot', 'multilingual'],
    readonly: ['knowledge-base', 'people', 'volunteers', 'events', 'fundraising', 'sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'campaign-copy', 'sending', 'empathy-simulator', 'question-anticipation', 'opposition-research', 'coalition-detector', 'faction-mapper', 'policy-diff', 'accountability']
  }, 'the navigation each role sees')
})
