// Volunteers: the matching score, and through the API the roster, a volunteer's detail, and matches
// ranked by score.
import t from 'tap'
import { ServerFunctionError } from '../../../../plugins/campaign/client.js'
import { distanceKm, volunteerScore } from '../../../../plugins/campaign/modules/volunteers/volunteer-score.js'
import { campaignApp, statusOf } from '../../../support/campaign.js'

t.test('volunteer score = 0.5·skills + 0.3·availability + 0.2·distance', async t => {
  const here = { lat: 52.5, lon: 13.4 }
  const north = { lat: 52.6, lon: 13.4 }
  t.ok(Math.abs(distanceKm(here, north) - 11.12) < 0.01, '0.1° of latitude ≈ 11.12 km')
  const parts = volunteerScore({ skills: ['Canvassing'], availability: ['sat-am'], location: north },
    { skills: ['canvassing', 'phone'], slots: ['sat-am', 'sun-am'], location: here, max_km: 25 })
  t.same({ skills: parts.skills, availability: parts.availability, distance: parts.distance }, { skills: 0.5, availability: 0.5, distance: 0.555 })
  t.equal(parts.score, 0.511, '0.25 + 0.15 + 0.2·0.5552')
  t.equal(volunteerScore({ skills: [], availability: [], location: here }, { skills: [], slots: [], location: here, max_km: 1 }).score, 1, 'nothing asked: full marks')
  t.equal(volunteerScore({ skills: [], availability: [], location: north }, { skills: ['x'], slots: ['mon-am'], location: here, max_km: 5 }).score, 0, 'too far, nothing matching')
})

t.test('through the API', async t => {
  const { call } = await campaignApp(t)

  await t.test('volunteers: roster, detail, and matches ranked by score', async t => {
    const base = { availability: ['sat-am'], location: { lat: 52.5, lon: 13.4 } }
    await call('save-volunteer', { ...base, name: 'Near Nia', email: 'nia@x.test', skills: ['canvassing'] })
    await call('save-volunteer', { ...base, name: 'Far Finn', email: 'finn@x.test', skills: ['canvassing'], location: { lat: 53.5, lon: 13.4 } })
    const wrong = await call<{ volunteer_id: string }>('save-volunteer', { ...base, name: 'Phone Pia', email: 'pia@x.test', skills: ['phone'], availability: [] })
    const list = await call<{ volunteers: Array<{ name: string }> }>('list-volunteers', { skill: 'CANVASSING' })
    t.same(list.volunteers.map(v => v.name), ['Far Finn', 'Near Nia'])
    const matches = await call<{ matches: Array<{ name: string, score: number }> }>('match-volunteer', { skills: ['canvassing'], slots: ['sat-am'], location: base.location, max_km: 25 })
    t.same(matches.matches.map(m => [m.name, m.score]), [['Near Nia', 1], ['Far Finn', 0.8], ['Phone Pia', 0.2]])
    t.match(await call('volunteer-detail', { volunteer_id: wrong.volunteer_id }), { name: 'Phone Pia', email: 'pia@x.test', skills: ['phone'] })
    await t.rejects(call('volunteer-detail', { volunteer_id: 'nobody' }), new ServerFunctionError(404, 'no volunteer "nobody"', 'BERTH_NOT_FOUND'))
    t.equal(await statusOf(call('save-volunteer', { ...base, name: 'X', email: 'not-an-email' })), 400)
  })
})
