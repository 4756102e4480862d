// Signed firmware images (docs/firmware-updates.md): the header's layout byte by byte, the signature
// over header and payload (RFC 8032's second test vector through the same key parsing), tampering and
// bad layouts refused; and `berth ota keygen`, `sign` and `verify` as an operator runs them, with
// their one-line refusals.
import t from 'tap'
import { createPrivateKey, sign } from 'node:crypto'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildImage, generateFleetKey, parseImage, parsePrivateKey, parsePublicKey, verifyImage } from '../../../plugins/ingest/ota-image.js'
import { runCli } from '../../support/cli.js'
import { tempDir } from '../../support/tmp.js'

t.test('an image is its header, its payload and their signature; any change is refused', async t => {
  const { privatePem, publicHex } = generateFleetKey()
  const payload = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256))
  const image = buildImage({ version: '1.1.0', softwareType: 'main', loadAddress: 0x00100000 }, payload, parsePrivateKey(privatePem, 'key'))
  t.equal(image.length, 64 + 1000 + 64)
  t.equal(image.subarray(0, 4).toString('latin1'), 'BTIM', 'magic 0x4D495442 little-endian')
  t.same([image.readUInt16LE(4), image.readUInt16LE(6), image.readUInt32LE(8), image.readUInt32LE(12)], [64, 1, 1000, 0x00100000])
  t.equal(image.subarray(16, 40).toString('latin1'), `1.1.0${'\0'.repeat(19)}`, 'the version NUL-padded')
  t.equal(image.subarray(40, 64).toString('latin1'), `main${'\0'.repeat(20)}`)
  t.ok(image.subarray(64, 1064).equals(payload))
  const key = parsePublicKey(publicHex, 'pub')
  t.same(verifyImage(image, key), { payloadSize: 1000, loadAddress: 0x00100000, version: '1.1.0', softwareType: 'main' })
  for (const at of [5, 20, 500, image.length - 1]) {
    const changed = Buffer.from(image)
    changed[at] ^= 1
    t.throws(() => verifyImage(changed, key), /./, `a bit changed at byte ${at}`)
  }
  t.throws(() => verifyImage(image, parsePublicKey(generateFleetKey().publicHex, 'other')), { message: 'the signature does not verify with the fleet\'s public key' })
  t.throws(() => parseImage(image.subarray(0, 100)), { message: /too few/ })
  t.throws(() => parseImage(image.subarray(0, image.length - 1)), { message: 'the header says 1000 payload bytes, the image holds 999' })
  t.throws(() => parseImage(Buffer.alloc(200)), { message: /not a signed image/ })
  t.throws(() => buildImage({ version: 'x'.repeat(25), softwareType: 'main', loadAddress: 0 }, payload, parsePrivateKey(privatePem, 'key')), { message: 'version "xxxxxxxxxxxxxxxxxxxxxxxxx" must be 1-24 bytes, it is 25' })
  t.throws(() => parsePublicKey('abc', 'the key'), { message: 'the key is neither 64 hex characters nor a PEM key' })
})

t.test('the key parsing agrees with RFC 8032 (test 2): its public key in hex checks its signature', async t => {
  const secret = Buffer.from('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb', 'hex')
  const publicHex = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c'
  const expected = '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00'
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: secret.toString('base64url'), x: Buffer.from(publicHex, 'hex').toString('base64url') }, format: 'jwk' })
  t.equal(sign(null, Buffer.from([0x72]), privateKey).toString('hex'), expected)
  const { verify } = await import('node:crypto')
  t.ok(verify(null, Buffer.from([0x72]), parsePublicKey(publicHex, 'pub'), Buffer.from(expected, 'hex')))
})

t.test('berth ota keygen, sign and verify; bad input refused in one line', async t => {
  const dir = tempDir(t)
  const at = (name: string): string => join(dir, name)
  const keygen = await runCli(['ota', 'keygen', '--out', at('fleet.key')])
  t.equal(keygen.code, 0, keygen.stderr)
  t.equal(statSync(at('fleet.key')).mode & 0o777, 0o600, 'the private key is 0600')
  const publicHex = readFileSync(at('fleet.key.pub'), 'utf8').trim()
  t.match(publicHex, /^[0-9a-f]{64}$/, 'the public key: 64 hex characters')
  t.match(keygen.stdout, publicHex)
  writeFileSync(at('app.bin'), Buffer.alloc(3000, 7))
  const signArgs = (key: string, extra: string[] = []): string[] => ['ota', 'sign', '--key', key, '--image-version', '2.0.0', '--software-type', 'main', '--load-address', '0x00100000', at('app.bin'), '--out', at('app.img'), ...extra]
  const signed = await runCli(signArgs(at('fleet.key')))
  t.equal(signed.code, 0, signed.stderr)
  t.match(signed.stdout, /app\.img: main 2\.0\.0, 3000 payload bytes at 0x00100000, 3128 bytes, sha256 [0-9a-f]{64}\n$/)
  t.same(verifyImage(readFileSync(at('app.img')), parsePublicKey(publicHex, 'pub')).version, '2.0.0', 'the image verifies with the key written')
  const verified = await runCli(['ota', 'verify', '--pub', at('fleet.key.pub'), at('app.img')])
  t.same([verified.code, verified.stdout], [0, `${at('app.img')}: verified: main 2.0.0, 3000 payload bytes at 0x00100000\n`])

  await runCli(['ota', 'keygen', '--out', at('other.key')])
  const refusals: Array<[string[], number, string]> = [
    [['ota', 'verify', '--pub', at('other.key.pub'), at('app.img')], 1, `berth: ${at('app.img')}: the signature does not verify with the fleet's public key\n`],
    [['ota', 'verify', '--pub', at('fleet.key.pub'), at('app.bin')], 1, `berth: ${at('app.bin')}: not a signed image: its first bytes are not "BTIM"\n`],
    [['ota', 'verify', '--pub', at('fleet.key.pub'), at('none.img')], 2, `berth: image ${at('none.img')} does not exist\n`],
    [['ota', 'keygen', '--out', at('fleet.key')], 2, `berth: ${at('fleet.key')} exists; a key is never overwritten (remove it, or give another --out)\n`],
    [signArgs(at('missing.key')), 2, `berth: key ${at('missing.key')} does not exist\n`],
    [signArgs(at('fleet.key.pub')), 2, `berth: ${at('fleet.key.pub')} is not a PEM private key (error:1E08010C:DECODER routines::unsupported)\n`],
    [signArgs(at('fleet.key'), ['--software-type', 'a-software-type-of-25-byt']), 2, 'berth: software type "a-software-type-of-25-byt" must be 1-24 bytes, it is 25\n'],
    [signArgs(at('fleet.key'), ['--load-address', '0x100000000']), 2, 'berth: --load-address 0x100000000: give a 32-bit address (0x00100000)\n']
  ]
  for (const [args, code, stderr] of refusals) {
    const result = await runCli(args)
    t.same([result.code, result.stderr], [code, stderr], args.slice(1, 2).concat(args.slice(-3)).join(' '))
  }
})
