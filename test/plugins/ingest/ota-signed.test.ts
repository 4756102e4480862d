// Signed firmware images on the server: with the fleet's public key configured, an upload is refused
// unless the key signed it and its header names the upload's software type and version; the record
// says it was checked; without a key, any image is taken as before; a key that is not one stops start.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildImage, generateFleetKey, parsePrivateKey } from '../../../plugins/ingest/ota-image.js'
import { tempDir } from '../../support/tmp.js'
import { basic, telemetryServer, type TelemetryServer } from './harness.js'

const fleet = generateFleetKey()
const signed = (version: string, softwareType = 'main', key = fleet.privatePem): Buffer =>
  buildImage({ version, softwareType, loadAddress: 0x00100000 }, Buffer.alloc(2000, version.length), parsePrivateKey(key, 'key'))

async function upload (server: TelemetryServer, version: string, bytes: Buffer): Promise<{ status: number, json: Record<string, unknown> }> {
  const response = await fetch(new URL(`/ota/images?software_type=main&version=${version}`, server.base), {
    method: 'POST', headers: { authorization: basic('provisioner'), 'content-type': 'application/octet-stream' }, body: bytes
  })
  return { status: response.status, json: await response.json() as Record<string, unknown> }
}

t.test('with the fleet key: only images it signed, whose header agrees with the upload', async t => {
  const keyFile = join(tempDir(t), 'fleet.key.pub')
  writeFileSync(keyFile, `${fleet.publicHex}\n`)
  const server = await telemetryServer(t, { ota_public_key: keyFile })
  const good = await upload(server, '1.1.0', signed('1.1.0'))
  t.equal(good.status, 201)
  t.match(good.json, { version: '1.1.0', software_type: 'main', signed: true, size: 2000 + 128 })
  const refusals: Array<[string, Buffer, string]> = [
    ['1.2.0', signed('1.2.0', 'main', generateFleetKey().privatePem), 'not a firmware image signed by the fleet\'s key: the signature does not verify with the fleet\'s public key'],
    ['1.2.0', Buffer.from('a plain binary, not an image at all, long enough to be read as one: '.repeat(3)), 'not a firmware image signed by the fleet\'s key: not a signed image: its first bytes are not "BTIM"'],
    ['1.3.0', signed('1.2.0'), 'the image\'s header says main 1.2.0, the upload main 1.3.0'],
    ['1.2.0', signed('1.2.0', 'other'), 'the image\'s header says other 1.2.0, the upload main 1.2.0']
  ]
  for (const [version, bytes, error] of refusals) t.same(await upload(server, version, bytes), { status: 400, json: { error, code: 'BERTH_BAD_REQUEST' } }, error)
  const tampered = signed('1.2.0')
  tampered[100] ^= 1
  t.equal((await upload(server, '1.2.0', tampered)).status, 400, 'a payload changed after signing')
  t.same((await (await server.api('GET', '/ota/images', 'viewer')).json() as { images: Array<{ version: string }> }).images.map(i => i.version), ['1.1.0'], 'nothing refused was kept')
})

t.test('without a key any image is taken, unchecked; a key that is not one stops the server at start', async t => {
  const server = await telemetryServer(t)
  const plain = await upload(server, '0.9.0', Buffer.from('an unsigned image'))
  t.match(plain, { status: 201, json: { signed: false } })
  await t.rejects(telemetryServer(t, { ota_public_key: join(tempDir(t), 'missing.pub') }), { message: /\[ingest\]\.ota_public_key: public key .*missing\.pub is neither 64 hex characters nor a file that exists/ })
})
