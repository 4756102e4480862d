// API tokens for external clients, both ways: an admin signed in creates a token for a role and sees
// its secret once; the token, sent as a bearer, calls what its role may (a volunteer's token the
// volunteer functions, never staff's or admin's) with no cookie; listings never show a secret or its
// hash; a token cannot manage tokens; a revoked, altered or malformed token is 401, even beside a
// valid session cookie; the stored record holds only the secret's hash.
import t from 'tap'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import type { ApiTokenRecord } from '../../../plugins/campaign/api-tokens.js'
import { campaignApp, statusOf } from '../../support/campaign.js'

interface Created { id: string, name: string, role: string, token: string, created_by: string }

t.test('API tokens, created and revoked by admins, scoped to a role', async t => {
  const { kernel, baseUrl, login, call } = await campaignApp(t)
  const admin = await login('admin')
  const bearer = async <T>(token: string, name: string, args: object = {}, cookie?: string): Promise<T> =>
    await callServerFunction<T>(name, args, { baseUrl, headers: { authorization: `Bearer ${token}`, ...(cookie !== undefined && { cookie }) } })

  const volunteer = await call<Created>('admin-create-api-token', { name: 'canvass app', role: 'volunteer' }, admin)
  t.match(volunteer, { id: /^[0-9a-f]{16}$/, name: 'canvass app', role: 'volunteer', token: /^bct_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/, created_by: 'admin@campaign.test' })
  t.equal(await statusOf(call('admin-create-api-token', { name: 'x', role: 'admin' })), 403, 'staff cannot create one')
  t.equal(await statusOf(call('admin-create-api-token', { name: 'x', role: 'owner' }, admin)), 400, 'only the four roles')

  const auth = await bearer<{ role: string, functions: string[] }>(volunteer.token, 'check-auth')
  t.match(auth, { role: 'volunteer' }, 'a token is its role')
  t.same(await statusOf(bearer(volunteer.token, 'kb-query', { query: 'housing' })), 200, 'a volunteer function, with no cookie')
  t.same(await statusOf(bearer(volunteer.token, 'list-donors')), 403, 'not a staff function')
  t.same(await statusOf(bearer(volunteer.token, 'admin-list-api-tokens')), 403, 'not an admin function')
  const adminToken = await call<Created>('admin-create-api-token', { name: 'reporting', role: 'admin' }, admin)
  t.same(await statusOf(bearer(adminToken.token, 'admin-health')), 200, 'an admin token calls admin functions')
  t.same(await statusOf(bearer(adminToken.token, 'admin-create-api-token', { name: 'more', role: 'admin' })), 403, 'but never makes tokens')

  const { tokens } = await call<{ tokens: Array<Record<string, unknown>> }>('admin-list-api-tokens', {}, admin)
  t.same(tokens.map(token => [token.name, token.role]), [['canvass app', 'volunteer'], ['reporting', 'admin']])
  t.notOk(JSON.stringify(tokens).includes(volunteer.token.slice(-43)) || tokens.some(token => 'hash' in token || 'token' in token), 'no secret and no hash listed')
  const stored = await kernel.service('campaign').store.table<ApiTokenRecord>('api-tokens').get(volunteer.id)
  t.match(stored, { hash: /^[0-9a-f]{64}$/ })
  t.notOk(JSON.stringify(stored).includes(volunteer.token.slice(-43)), 'only the hash is stored')

  const altered = volunteer.token.replace(/.$/, last => last === 'A' ? 'B' : 'A')
  t.same(await statusOf(bearer(altered, 'check-auth')), 200, 'check-auth is open to all')
  t.same((await bearer<{ authenticated: boolean }>(altered, 'check-auth')).authenticated, false, 'an altered token is nobody')
  t.same(await statusOf(bearer(altered, 'kb-query', { query: 'x' })), 401)
  t.same(await statusOf(bearer('not-a-token', 'kb-query', { query: 'x' }, admin)), 401, 'a bad bearer beside an admin cookie is still 401')
  t.same(await call('admin-revoke-api-token', { id: volunteer.id }, admin), { revoked: volunteer.id })
  t.same(await statusOf(bearer(volunteer.token, 'kb-query', { query: 'x' })), 401, 'revoked: refused')
  t.same(await statusOf(call('admin-revoke-api-token', { id: volunteer.id }, admin)), 404, 'revoked once')
})
