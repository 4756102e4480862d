// The orchestration API without a container engine: the role matrix (every role × every endpoint),
// validation errors naming file, service and field, and an engine that is down giving per-service
// errors (never a crash). The socket points where no engine listens: a real fault, produced on purpose.
import t, { type Test } from 'tap'
import { hostname } from 'node:os'
import { join } from 'node:path'
import reconciler from '../../../plugins/reconciler/index.js'
import secrets from '../../../plugins/secrets/index.js'
import tokens from '../../../plugins/tokens/index.js'
import type { Kernel } from '../../../kernel/index.js'
import { adminToken, api, reconcilerSection, startKernel, testInstance, tokenFor, writeServices } from '../../support/orchestration.js'
import { tempDir } from '../../support/tmp.js'

const ROLES = ['viewer', 'deployer', 'admin'] as const
type Role = typeof ROLES[number]

async function engineless (t: Test): Promise<{ kernel: Kernel, cwd: string, socket: string }> {
  const cwd = tempDir(t)
  const socket = join(cwd, 'no-engine.sock')
  const kernel = await startKernel(t, { plugins: [tokens, secrets, reconciler], cwd, config: { reconciler: reconcilerSection(testInstance(), { docker_socket: socket }) } })
  return { kernel, cwd, socket }
}

const ENDPOINTS: Array<[method: string, path: string, role: Role, body?: unknown]> = [
  ['GET', '/api/v1/status', 'viewer'],
  ['GET', '/api/v1/status?project=x', 'viewer'],
  ['GET', '/api/v1/services/x/logs', 'viewer'],
  ['GET', '/api/v1/cluster/info', 'viewer'],
  ['GET', '/api/v1/deploys', 'viewer'],
  ['POST', '/api/v1/deploy', 'deployer'],
  ['POST', '/api/v1/reload', 'deployer'],
  ['GET', '/api/v1/reload', 'viewer'],
  ['POST', '/api/v1/services/x/promote', 'deployer'],
  ['POST', '/api/v1/services/x/rollback', 'deployer'],
  ['POST', '/api/v1/services/x/scale', 'deployer', { replicas: 1 }],
  ['POST', '/api/v1/services/x/redeploy', 'deployer'],
  ['POST', '/api/v1/services/x/restart', 'deployer'],
  ['DELETE', '/api/v1/services/x', 'deployer'],
  ['DELETE', '/api/v1/projects/x', 'deployer'],
  ['POST', '/api/v1/stop', 'deployer'],
  ['GET', '/api/v1/tokens', 'admin'],
  ['POST', '/api/v1/tokens', 'admin', { name: 'n', role: 'viewer' }],
  ['DELETE', '/api/v1/tokens/000000000000', 'admin'],
  ['GET', '/api/v1/secrets', 'admin'],
  ['PUT', '/api/v1/secrets/X', 'admin', { value: 'v' }],
  ['DELETE', '/api/v1/secrets/X', 'admin']
]

t.test('role matrix: each role gets each endpoint or 403; no token gets 401; health and metrics are public', async t => {
  const { kernel } = await engineless(t)
  const tokenOf: Record<Role, string> = { viewer: await tokenFor(kernel, 'viewer'), deployer: await tokenFor(kernel, 'deployer'), admin: adminToken(kernel) }
  for (const [method, path, needed, body] of ENDPOINTS) {
    t.equal((await api(kernel, method, path, { body })).status, 401, `no token: ${method} ${path}`)
    for (const role of ROLES) {
      const answer = await api(kernel, method, path, { token: tokenOf[role], body })
      const allowed = ROLES.indexOf(role) >= ROLES.indexOf(needed)
      if (allowed) t.not(answer.status, 403, `${role}: ${method} ${path} is allowed (${answer.status})`)
      else t.match([answer.status, answer.body], [403, { error: new RegExp(`^token "test-${role}" has role ${role}; ${method} /api/v1/\\S+ needs ${needed}$`) }], `${role}: ${method} ${path} is forbidden`)
    }
  }
  for (const path of ['/api/v1/health', '/metrics']) t.equal((await api(kernel, 'GET', path)).status, 200, `${path} needs no token`)
  const admin = tokenOf.admin
  t.match(await api(kernel, 'POST', '/api/v1/reload', { token: admin }), { status: 409, body: { error: /^this server cannot restart itself/ } }, 'a kernel without the server\'s host cannot reload')
  t.match((await api(kernel, 'GET', '/api/v1/reload', { token: admin })).body, { reload: { state: 'failed', by: 'admin', error: /^this server cannot restart itself/ } }, 'the refused reload is recorded')
})

t.test('validation errors name the file, the service and the field', async t => {
  const { kernel, cwd } = await engineless(t)
  const token = adminToken(kernel)
  const none = await api(kernel, 'POST', '/api/v1/deploy', { token })
  t.same([none.status, none.body], [400, { error: `no service files: ${join(cwd, 'services/*/service.toml')} matches nothing`, code: 'BERTH_INVALID_SPEC' }])
  writeServices(cwd, { web: '[[service]]\nname = "api"\nimage = "x:1"\nreplicas = -1\nsize = 3\n' })
  const bad = await api(kernel, 'POST', '/api/v1/deploy', { token })
  t.same([bad.status, bad.body], [400, {
    error: 'services/web/service.toml: service "api": replicas must be an integer ≥ 0, got -1; services/web/service.toml: service "api": size is not a known field',
    code: 'BERTH_INVALID_SPEC'
  }])
  const request = await api(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [{ name: 'a', project: 'p', image: 'x:1', depends_on: ['b'] }] } })
  t.same([request.status, request.body], [400, { error: 'request body: service "a": depends_on names unknown service "b"', code: 'BERTH_INVALID_SPEC' }])
  const both = await api(kernel, 'POST', '/api/v1/deploy?service=a', { token, body: { services: [{ name: 'a', project: 'p', image: 'x:1' }] } })
  t.same([both.status, both.body], [400, { error: 'give either a body with services or ?service=, not both', code: 'BERTH_BAD_REQUEST' }])
  writeServices(cwd, { web: '[[service]]\nname = "api"\nimage = "x:1"\n' })
  const unknown = await api(kernel, 'POST', '/api/v1/deploy?service=nope', { token })
  t.same([unknown.status, unknown.body], [404, { error: 'no service named "nope" in services/*/service.toml', code: 'BERTH_NO_SUCH_SERVICE' }])
})

t.test('with the engine down: per-service errors, 503 where nothing can be answered, and the server keeps running', async t => {
  const { kernel, cwd, socket } = await engineless(t)
  const token = adminToken(kernel)
  writeServices(cwd, { shop: '[[service]]\nname = "web"\nimage = "x:1"\n[[service]]\nname = "db"\nimage = "y:1"\n' })
  const down = `container engine unavailable at ${socket}: ENOENT`
  const deployed = await api(kernel, 'POST', '/api/v1/deploy', { token })
  t.same([deployed.status, deployed.body], [200, {
    deployed: [], changed: [], removed: [], errors: [{ service: 'web', project: 'shop', error: down }, { service: 'db', project: 'shop', error: down }]
  }])
  const viaBody = await api(kernel, 'POST', '/api/v1/deploy', { token, body: { services: [{ name: 'api', project: 'p', image: 'z:1' }, { name: 'far', project: 'p', image: 'z:1', placement: { node: 'elsewhere' } }] } })
  t.same(viaBody.body, { deployed: [], changed: [], removed: [], errors: [
    { service: 'far', project: 'p', error: `placed on node "elsewhere", but this node is "${hostname()}"` },
    { service: 'api', project: 'p', error: down }
  ] }, 'a service placed on another node fails with that reason')
  t.same((await api(kernel, 'GET', '/api/v1/status', { token })).body, { error: down, code: 'BERTH_ENGINE_UNAVAILABLE' })
  t.equal((await api(kernel, 'GET', '/api/v1/status', { token })).status, 503)
  t.equal((await api(kernel, 'POST', '/api/v1/stop', { token })).status, 503)
  const info = await api<{ nodes: Array<Record<string, unknown>> }>(kernel, 'GET', '/api/v1/cluster/info', { token })
  t.match(info.body, { cluster: { instance: /^test-/ }, nodes: [{ id: /^[0-9a-f]{16}$/, name: hostname(), role: 'leader', status: 'engine-unavailable', error: down, services: 4 }] })
  const health = await api<{ status: string, plugins: { reconciler: { checks: { engine: { status: string, reason: string } } } } }>(kernel, 'GET', '/api/v1/health')
  t.equal(health.status, 200, 'the server still serves')
  t.match(health.body, { status: 'degraded', plugins: { reconciler: { state: 'running', checks: { engine: { status: 'down', reason: /container engine does not answer \(container engine unavailable at .*ENOENT\)/ } } } } }, 'and its health says the engine is gone')
  t.equal((await api(kernel, 'POST', '/api/v1/services/web/scale', { token, body: { replicas: 2 } })).status, 200, 'scaling reports errors, it does not crash')
})
