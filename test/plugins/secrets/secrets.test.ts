// The secrets plugin: AES-256-GCM at rest with a 0600 key file, admin-only routes that never return
// values, resolution of ${secrets.NAME} with errors naming service and secret, and no value in any log.
import t from 'tap'
import { readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import secrets from '../../../plugins/secrets/index.js'
import { open, seal } from '../../../plugins/secrets/cipher.js'
import tokens from '../../../plugins/tokens/index.js'
import { capturedLogger } from '../../support/kernel.js'
import { adminToken, api, startKernel, tokenFor } from '../../support/orchestration.js'
import { tempDir } from '../../support/tmp.js'

const plugins = [tokens, secrets]
const VALUE = 'pa55-w0rd-3e1f9c'

t.test('values are encrypted at rest, listed by name only, and survive a restart', async t => {
  const stateDir = tempDir(t)
  const { logger, lines } = capturedLogger('trace')
  const first = await startKernel(t, { plugins, stateDir, logger })
  t.equal(statSync(join(stateDir, 'secrets.key')).mode & 0o777, 0o600, 'the key file is 0600')
  const admin = adminToken(first)
  const set = await api(first, 'PUT', '/api/v1/secrets/DB_PASSWORD', { token: admin, body: { value: VALUE } })
  t.equal(set.status, 201)
  t.match(set.body, { name: 'DB_PASSWORD', updated_at: /^\d{4}-/ })
  t.equal((await api(first, 'PUT', '/api/v1/secrets/DB_PASSWORD', { token: admin, body: { value: VALUE } })).status, 200, 'replacing answers 200')
  await api(first, 'PUT', '/api/v1/secrets/API_KEY', { token: admin, body: { value: 'k' } })

  const listed = await api<{ secrets: Array<{ name: string }> }>(first, 'GET', '/api/v1/secrets', { token: admin })
  t.same(listed.body.secrets.map(s => s.name), ['API_KEY', 'DB_PASSWORD'])
  t.notOk(listed.text.includes(VALUE), 'no value in the listing')
  t.same(first.service('secrets').resolve({ URL: 'postgres://app:${secrets.DB_PASSWORD}@db/app', PLAIN: 'x' }, 'api'),
    { URL: `postgres://app:${VALUE}@db/app`, PLAIN: 'x' })
  await first.stop()

  t.notOk(readFileSync(join(stateDir, 'berth.mdb')).includes(VALUE), 'the database holds no plaintext')
  t.notOk(lines().includes(VALUE), 'no value in the log (trace level)')

  const second = await startKernel(t, { plugins, stateDir })
  t.same(second.service('secrets').resolve({ P: '${secrets.DB_PASSWORD}' }, 'api'), { P: VALUE }, 'decrypted after a restart')
  const deleted = await api(second, 'DELETE', '/api/v1/secrets/API_KEY', { token: adminToken(second) })
  t.same(deleted.body, { deleted: 'API_KEY' })
  t.same((await api(second, 'DELETE', '/api/v1/secrets/API_KEY', { token: adminToken(second) })).body, { error: 'no secret named "API_KEY"', code: 'BERTH_NO_SUCH_SECRET' })
  await second.stop()

  rmSync(join(stateDir, 'secrets.key'))
  await t.rejects(startKernel(t, { plugins, stateDir }), /secrets\.key is missing but 1 secrets are stored; restore it/, 'a lost key is not silently replaced')
})

t.test('an unknown secret is an error naming the service, the variable and the secret', async t => {
  const kernel = await startKernel(t, { plugins })
  t.throws(() => kernel.service('secrets').resolve({ TOKEN: 'Bearer ${secrets.NOPE}' }, 'web'),
    { message: 'service "web": env.TOKEN refers to unknown secret "NOPE" (set it with: berth secrets set NOPE <value>)' })
})

t.test('bad names and values get 400; the role matrix allows admins only', async t => {
  const kernel = await startKernel(t, { plugins })
  const admin = adminToken(kernel)
  const put = async (name: string, body: unknown): Promise<unknown> => (await api(kernel, 'PUT', `/api/v1/secrets/${name}`, { token: admin, body })).body
  t.match(await put('1BAD', { value: 'x' }), { error: /^secret name "1BAD" must be letters, digits and underscores/ })
  const removed = await api(kernel, 'DELETE', `/api/v1/secrets/${encodeURIComponent('../../X💥')}`, { token: admin })
  t.match([removed.status, removed.body], [400, { error: /^secret name "..\/..\/X💥" must be letters, digits and underscores/ }], 'a name checked before the store is read to delete')
  t.match(await put('OK', { value: { a: 1 } }), { error: /^invalid body: .*string/ })
  t.match(await put('OK', { value: 'x'.repeat(64 * 1024 + 1) }), { error: 'secret "OK": the value is longer than 65536 bytes' })

  const routes: Array<[string, string, unknown?]> = [['PUT', '/api/v1/secrets/X', { value: 'v' }], ['GET', '/api/v1/secrets'], ['DELETE', '/api/v1/secrets/X']]
  for (const role of ['viewer', 'deployer'] as const) {
    const token = await tokenFor(kernel, role)
    for (const [method, path, body] of routes) {
      t.equal((await api(kernel, method, path, { token, body })).status, 403, `${role}: ${method} ${path} is forbidden`)
    }
  }
  for (const [method, path, body] of routes) {
    t.equal((await api(kernel, method, path, { body })).status, 401, `no token: ${method} ${path} is 401`)
    t.ok((await api(kernel, method, path, { token: admin, body })).status < 300, `admin: ${method} ${path} is allowed`)
  }
})

t.test('a sealed value opens only with its key and under its name', async t => {
  const key = Buffer.alloc(32, 7)
  const sealed = seal(key, 'A', 'value')
  t.equal(open(key, 'A', sealed), 'value')
  t.throws(() => open(key, 'B', sealed), /secret "B" cannot be decrypted/, 'copied under another name')
  t.throws(() => open(Buffer.alloc(32, 8), 'A', sealed), /cannot be decrypted/, 'another key')
  const flipped = { ...sealed, data: Buffer.from(sealed.data).fill(0, 0, 1) }
  t.throws(() => open(key, 'A', flipped), /cannot be decrypted/, 'damaged bytes')
})
