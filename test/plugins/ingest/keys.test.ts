// Keys made from client input — device ids, group names, OTA target ids, cursors — are checked before
// anything is written: too long or malformed is a 400 {"error"}, and nothing changes.
import t from 'tap'
import { telemetryServer } from './harness.js'

const DEVICE = '00000000000000d1'
const LONG = 'a'.repeat(3000)
const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

t.test('too long or malformed keys are refused with 400 and write nothing', async t => {
  const server = await telemetryServer(t)
  t.equal((await server.api('POST', '/groups', 'provisioner', { name: 'north' })).status, 201)
  t.equal((await server.api('POST', '/devices/register', 'provisioner', { id: DEVICE, group: 'north' })).status, 201)
  const target = await (await server.api('POST', '/ota/targets', 'provisioner', { software_type: 'main', version: '1.0.0', group: 'north' })).json() as { id: string }
  const state = async (): Promise<unknown> => await Promise.all(['/devices', '/groups', '/ota/targets'].map(async path => await (await server.api('GET', path, 'admin')).json()))
  const before = await state()

  const refusals: Array<[string, string, unknown, RegExp]> = [
    ['POST', '/devices/register', { id: '00000000000000d12' }, /^invalid body: id must NOT have more than 16 characters$/],
    ['POST', '/devices/register', { id: LONG }, /^invalid body: id must NOT have more than 16 characters$/],
    ['POST', '/devices/register', { id: '00000000000000D2' }, /^invalid body: id must match pattern/],
    ['POST', '/devices/register', { id: '00000000000000d2', group: 'n'.repeat(65) }, /^invalid body: group must NOT have more than 64 characters/],
    ['POST', '/devices/register', { id: '00000000000000d2', group: 'north pole' }, /^invalid body: group must match pattern/],
    ['GET', `/devices/${'0'.repeat(17)}`, undefined, /^invalid params: id must NOT have more than 16 characters$/],
    ['DELETE', `/devices/${LONG}`, undefined, /^a path parameter is longer than 100 characters$/],
    ['GET', `/devices?cursor=${LONG}`, undefined, /^cursor is not one this server issued \(a device id from next_cursor\)$/],
    ['GET', `/devices/${DEVICE}/faults?cursor=${LONG}`, undefined, /^cursor must be at most 256 characters \(one this server issued\)$/],
    ['GET', `/devices/${DEVICE}/metrics?cursor=${base64url([DEVICE, 'x'.repeat(150), 1])}`, undefined, /^cursor is not one this server issued for this device$/],
    ['GET', `/devices/${DEVICE}/traces?cursor=${base64url([DEVICE, 1, 2, 3, 4])}`, undefined, /^cursor is not one this server issued for this device$/],
    ['POST', '/groups', { name: 'n'.repeat(65) }, /^invalid body: name must NOT have more than 64 characters$/],
    ['POST', '/groups', { name: LONG }, /^invalid body: name must NOT have more than 64 characters$/],
    ['POST', '/groups', { name: '.hidden' }, /^invalid body: name must match pattern/],
    ['PUT', `/groups/${'n'.repeat(65)}`, { description: 'x' }, /^invalid params: name must NOT have more than 64 characters$/],
    ['PUT', `/groups/${LONG}`, { description: 'x' }, /^a path parameter is longer than 100 characters$/],
    ['DELETE', '/groups/north%20pole', undefined, /^invalid params: name must match pattern/],
    ['POST', '/ota/targets', { software_type: 'main', version: '2', group: LONG }, /^invalid body: group must NOT have more than 64 characters/],
    ['PUT', `/ota/targets/${target.id}`, { software_type: 'main', version: '2', group: 'n'.repeat(65) }, /^invalid body: group must NOT have more than 64 characters/],
    ['PUT', '/ota/targets/not-a-target', { software_type: 'main', version: '2' }, /^invalid params: id must NOT have fewer than 36 characters$/],
    ['PUT', `/ota/targets/${target.id}x`, { software_type: 'main', version: '2' }, /^invalid params: id must NOT have more than 36 characters$/],
    ['DELETE', `/ota/targets/${LONG}`, undefined, /^a path parameter is longer than 100 characters$/],
    ['DELETE', `/ota/targets/${target.id.toUpperCase()}`, undefined, /^invalid params: id must match pattern/]
  ]
  for (const [method, path, body, error] of refusals) {
    const response = await server.api(method, path, 'admin', body)
    t.match([response.status, await response.json()], [400, { error }], `${method} ${path.slice(0, 60)}`)
  }
  t.same(await state(), before, 'nothing was written')
  t.equal((await server.api('DELETE', `/ota/targets/${target.id.replace(/^./, c => c === '0' ? '1' : '0')}`, 'admin')).status, 404, 'a well-formed unknown id is a 404')
})
