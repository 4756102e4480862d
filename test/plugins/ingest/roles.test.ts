// Every telemetry route against every role (and no credentials): allowed, 401 or 403, both ways.
import t from 'tap'
import { encodeChunk } from '../../../plugins/ingest/wire/encoder.js'
import { API_KEY, onPostgres, ROLES, telemetryServer, type TestRole } from './harness.js'
import { DEVICE, SAMPLES } from './samples.js'

type Need = 'public' | 'device' | 'device-or-provisioner' | TestRole
const RANK: Record<TestRole, number> = { viewer: 0, provisioner: 1, admin: 2 }

interface Route { method: string, path: string, need: Need, body?: unknown }

const ROUTES: Route[] = [
  { method: 'GET', path: '/auth/mode', need: 'public' },
  { method: 'GET', path: '/devices', need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}`, need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}/faults`, need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}/metrics`, need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}/reboots`, need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}/traces`, need: 'viewer' },
  { method: 'GET', path: '/groups', need: 'viewer' },
  { method: 'GET', path: '/ota/targets', need: 'viewer' },
  { method: 'GET', path: '/issues', need: 'viewer' },
  { method: 'GET', path: '/symbols', need: 'viewer' },
  { method: 'GET', path: '/ota/images', need: 'viewer' },
  { method: 'GET', path: '/ota/releases', need: 'viewer' },
  { method: 'GET', path: '/alerts/rules', need: 'viewer' },
  { method: 'GET', path: '/alerts/history', need: 'viewer' },
  { method: 'POST', path: '/alerts/rules', need: 'provisioner', body: { name: 'rule ROLE', condition: { kind: 'connectivity' } } },
  { method: 'GET', path: `/devices/${DEVICE}/timeline`, need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}/heartbeats`, need: 'viewer' },
  { method: 'GET', path: `/devices/${DEVICE}/slots`, need: 'viewer' },
  { method: 'GET', path: '/export/devices', need: 'viewer' },
  { method: 'GET', path: '/export/issues', need: 'viewer' },
  { method: 'GET', path: '/export/faults', need: 'viewer' },
  { method: 'GET', path: `/export/metrics?device=${DEVICE}`, need: 'viewer' },
  { method: 'GET', path: '/metrics/prometheus', need: 'viewer' },
  { method: 'POST', path: '/devices/register', need: 'provisioner', body: { id: 'aaaaaaaaaaaaaaaa' } },
  { method: 'POST', path: '/groups', need: 'provisioner', body: { name: 'g-ROLE' } },
  { method: 'PUT', path: '/groups/base', need: 'provisioner', body: { description: 'updated' } },
  { method: 'POST', path: '/ota/targets', need: 'provisioner', body: { software_type: 'main', version: '2.0.0' } },
  { method: 'GET', path: '/admin/backup', need: 'admin' },
  { method: 'DELETE', path: '/groups/empty-ROLE', need: 'admin' },
  { method: 'DELETE', path: '/devices/bbbbbbbbbbbbbbbb', need: 'admin' }
]

function allowed (role: TestRole, need: Need): boolean {
  if (need === 'public') return true
  if (need === 'device') return false
  return RANK[role] >= RANK[need === 'device-or-provisioner' ? 'provisioner' : need]
}

t.test('role × route matrix', async t => {
  const server = await telemetryServer(t)
  t.equal((await server.ingest(encodeChunk({ device: DEVICE, sequence: 1, payload: SAMPLES[5] }))).status, 200)
  t.equal((await server.ingest(encodeChunk({ device: 'bbbbbbbbbbbbbbbb', sequence: 1, payload: SAMPLES[5] }))).status, 200)
  t.equal((await server.api('POST', '/groups', 'admin', { name: 'base' })).status, 201)
  for (const role of ROLES) t.equal((await server.api('POST', '/groups', 'admin', { name: `empty-${role}` })).status, 201)
  for (const route of ROUTES) {
    const anonymous = await server.api(route.method, route.path, null, route.body)
    t.equal(anonymous.status, route.need === 'public' ? 200 : 401, `anonymous ${route.method} ${route.path}`)
    if (anonymous.status === 401) t.match(anonymous.headers.get('www-authenticate'), /^Basic realm="berth telemetry"/)
    for (const role of ROLES) {
      const body = JSON.parse(JSON.stringify(route.body ?? null)?.replace('ROLE', role) ?? 'null') as unknown
      const response = await server.api(route.method, route.path.replace('ROLE', role), role, body ?? undefined)
      const ok = allowed(role, route.need)
      // On PostgreSQL the backup of the embedded store is refused (409): that database has tools of its own.
      const refused = onPostgres() && route.path === '/admin/backup' && response.status === 409
      if (ok) t.ok(response.status < 400 || refused, `${role} ${route.method} ${route.path} → ${response.status}`)
      else {
        t.equal(response.status, 403, `${role} ${route.method} ${route.path}`)
        t.match(await response.json(), { error: new RegExp(`^role ${role} may not`) })
      }
    }
  }
})

t.test('the device key opens ingest only; users cannot post chunks; wrong passwords are refused', async t => {
  const server = await telemetryServer(t)
  const chunk = encodeChunk({ device: DEVICE, sequence: 1, payload: SAMPLES[5] })
  const asAdmin = await server.api('POST', '/ingest/chunks', 'admin', undefined, { 'content-type': 'application/octet-stream' })
  t.equal(asAdmin.status, 401, 'a user is not a device')
  const keyOnApi = await fetch(new URL('/devices', server.base), { headers: { 'x-api-key': API_KEY } })
  t.equal(keyOnApi.status, 401, 'the device key is not a user')
  const elfWithKey = await fetch(new URL('/ingest/elf', server.base), { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'application/octet-stream' }, body: Buffer.from('not an elf file at all, longer than fifty-two bytes....') })
  t.equal(elfWithKey.status, 400, 'the device key may upload ELF files (this one is refused for its content)')
  const wrongPassword = await fetch(new URL('/devices', server.base), { headers: { authorization: `Basic ${Buffer.from('admin:nope').toString('base64')}` } })
  t.equal(wrongPassword.status, 401)
  t.equal((await server.ingest(chunk)).status, 200)
})
