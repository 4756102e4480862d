// The tokens plugin: the bootstrap admin token (0600, kept across restarts, rotated by deleting the
// file), hashed storage, 401/403 answers, and creating, listing and revoking tokens per role.
import t from 'tap'
import { createHash } from 'node:crypto'
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import tokens from '../../../plugins/tokens/index.js'
import { adminToken, api, startKernel, tokenFor } from '../../support/orchestration.js'
import { tempDir } from '../../support/tmp.js'

t.test('the admin token is created 0600 on first boot, kept on restart, replaced when the file is deleted', async t => {
  const stateDir = tempDir(t)
  const first = await startKernel(t, { plugins: [tokens], stateDir })
  const file = join(stateDir, 'admin.token')
  t.equal(statSync(file).mode & 0o777, 0o600, 'admin.token is 0600')
  const original = adminToken(first)
  t.match(original, /^berth_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/)
  t.equal((await api(first, 'GET', '/api/v1/tokens', { token: original })).status, 200, 'the admin token works')
  await first.stop()

  const db = readFileSync(join(stateDir, 'berth.mdb'))
  t.notOk(db.includes(original), 'the token itself is not stored')
  t.ok(db.includes(createHash('sha256').update(original).digest('hex')), 'its SHA-256 is')

  const second = await startKernel(t, { plugins: [tokens], stateDir })
  t.equal(adminToken(second), original, 'a restart keeps the token')
  t.equal((await api(second, 'GET', '/api/v1/tokens', { token: original })).status, 200)
  await second.stop()

  rmSync(file)
  const third = await startKernel(t, { plugins: [tokens], stateDir })
  const rotated = adminToken(third)
  t.not(rotated, original, 'deleting the file makes a new token')
  t.equal((await api(third, 'GET', '/api/v1/tokens', { token: original })).status, 401, 'the previous one is revoked')
  const listed = await api<{ tokens: Array<{ name: string }> }>(third, 'GET', '/api/v1/tokens', { token: rotated })
  t.same(listed.body.tokens.map(x => x.name), ['admin'], 'one admin token remains')
})

t.test('a foreign admin.token stops the start with a clear reason', async t => {
  const stateDir = tempDir(t)
  writeFileSync(join(stateDir, 'admin.token'), 'not-a-token\n', { mode: 0o600 })
  await t.rejects(startKernel(t, { plugins: [tokens], stateDir }), /admin\.token does not hold a Berth token; delete it and restart/)
})

t.test('missing, malformed and invalid tokens get 401; too little privilege gets 403', async t => {
  const kernel = await startKernel(t, { plugins: [tokens] })
  const call = async (authorization?: string): Promise<[number, unknown]> => {
    const response = await fetch(new URL('/api/v1/tokens', kernel.url('control')), { headers: authorization === undefined ? {} : { authorization } })
    return [response.status, await response.json()]
  }
  t.same(await call(), [401, { error: 'missing bearer token (Authorization: Bearer <token>)', code: 'BERTH_UNAUTHORIZED' }])
  t.same(await call('Basic abc'), [401, { error: 'the Authorization header must be "Bearer <token>"', code: 'BERTH_UNAUTHORIZED' }])
  t.same(await call('Bearer nope'), [401, { error: 'invalid or revoked token', code: 'BERTH_TOKEN_INVALID' }])
  const admin = adminToken(kernel)
  const tampered = admin.slice(0, -1) + (admin.endsWith('A') ? 'B' : 'A')
  t.same(await call(`Bearer ${tampered}`), [401, { error: 'invalid or revoked token', code: 'BERTH_TOKEN_INVALID' }], 'a known id with a wrong secret')
  t.equal((await call(`bearer ${admin}`))[0], 200, 'the scheme is case-insensitive')

  for (const role of ['viewer', 'deployer', 'agent'] as const) {
    const token = await tokenFor(kernel, role)
    const [status, body] = await call(`Bearer ${token}`)
    t.equal(status, 403, `${role} may not manage tokens`)
    t.match(body, { error: new RegExp(`has role ${role}; GET /api/v1/tokens needs admin`), code: 'BERTH_ROLE_TOO_LOW' })
  }
  t.equal((await api(kernel, 'GET', '/api/v1/health')).status, 200, 'health stays public')
  t.equal((await api(kernel, 'GET', '/metrics')).status, 200, 'metrics stay public')
})

t.test('tokens are created, listed without secrets, and revoked', async t => {
  const kernel = await startKernel(t, { plugins: [tokens] })
  const admin = adminToken(kernel)
  const created = await api<{ id: string, name: string, role: string, token: string }>(kernel, 'POST', '/api/v1/tokens', { token: admin, body: { name: 'ci', role: 'deployer' } })
  t.equal(created.status, 201)
  t.match(created.body, { id: /^[0-9a-f]{12}$/, name: 'ci', role: 'deployer', token: /^berth_/ })

  const listed = await api<{ tokens: Array<Record<string, unknown>> }>(kernel, 'GET', '/api/v1/tokens', { token: admin })
  t.same(listed.body.tokens.map(x => x.name).sort(), ['admin', 'ci'])
  t.notOk(listed.text.includes(created.body.token), 'the secret is not listed')
  t.notOk(listed.text.includes('hash'), 'nor its hash')

  const bad = async (body: unknown): Promise<unknown> => (await api(kernel, 'POST', '/api/v1/tokens', { token: admin, body })).body
  t.same(await bad({ name: 'x', role: 'root' }), { error: 'role must be one of viewer, deployer, admin, agent; got "root"', code: 'BERTH_BAD_REQUEST' })
  t.match(await bad({ name: 'bad name!', role: 'viewer' }), { error: /^name must be/ })
  t.match(await bad({ role: 'viewer' }), { error: /^invalid body: .*name/ })

  t.equal((await api(kernel, 'DELETE', `/api/v1/tokens/${created.body.id}`, { token: admin })).status, 200)
  t.equal((await api(kernel, 'GET', '/api/v1/tokens', { token: created.body.token })).status, 401, 'a revoked token is refused')
  t.same((await api(kernel, 'DELETE', `/api/v1/tokens/${created.body.id}`, { token: admin })).body, { error: `no token with id "${created.body.id}"`, code: 'BERTH_NO_SUCH_TOKEN' })
  const adminId = admin.split('_')[1]
  const refused = await api(kernel, 'DELETE', `/api/v1/tokens/${adminId}`, { token: admin })
  t.equal(refused.status, 409, 'the bootstrap token cannot be revoked through the API')
  t.match(refused.body, { error: /delete that file and restart/, code: 'BERTH_ADMIN_TOKEN_FIXED' })
})

t.test('the agent role stands apart: admitted to agent routes only, and only it is', async t => {
  const { allows } = await import('../../../plugins/tokens/roles.js')
  t.ok(allows('agent', 'agent'))
  for (const role of ['viewer', 'deployer', 'admin'] as const) {
    t.notOk(allows('agent', role), `an agent token is no ${role}`)
    t.notOk(allows(role, 'agent'), `a ${role} token is no agent`)
  }
  t.ok(allows('admin', 'viewer'))
  t.notOk(allows('viewer', 'deployer'))
})
