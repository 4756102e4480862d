// `berth ota …`: the fleet's signing key and signed firmware images (ota-image.ts, docs/firmware-updates.md):
// keygen (an Ed25519 private key, PEM 0600, and its public key as hex beside it), sign (a payload into
// a signed image) and verify (an image against the public key). No server is needed.
import { UsageError, type CliRegistry } from '../../kernel/index.js'
// node:fs without an ES import: its ES namespace loads fs streams, which every `berth` command would pay for.
const { existsSync, readFileSync, writeFileSync } = process.getBuiltinModule('node:fs')

/** The bytes of a file the command was given, or a one-line refusal. */
function readGiven (path: string, what: string): Buffer {
  if (!existsSync(path)) throw new UsageError(`${what} ${path} does not exist`)
  return readFileSync(path)
}

/** A 32-bit address: 0x-prefixed hex or decimal. */
function address (text: string): number {
  const value = /^0x[0-9a-f]{1,8}$/i.test(text) ? Number.parseInt(text.slice(2), 16) : /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isInteger(value) || value > 0xffffffff) throw new UsageError(`--load-address ${text}: give a 32-bit address (0x00100000)`)
  return value
}

/** Run `work`, turning an image or key that is not right into a one-line refusal. */
async function refusing<T> (work: () => T): Promise<T> {
  const { ImageError } = await import('./ota-image.js')
  try {
    return work()
  } catch (err) {
    if (err instanceof ImageError) throw new UsageError(err.message)
    throw err
  }
}

export function otaCommands (cli: CliRegistry): void {
  const ota = cli.program.command('ota').description('firmware update images: the fleet\'s signing key, signing and verifying images')

  ota.command('keygen')
    .description('make the fleet\'s Ed25519 key pair: the private key (PEM, 0600) at --out, the public key (64 hex characters) at <out>.pub')
    .requiredOption('--out <file>', 'where the private key goes (never overwritten)')
    .action(async (options: { out: string }) => {
      const pub = `${options.out}.pub`
      for (const path of [options.out, pub]) if (existsSync(path)) throw new UsageError(`${path} exists; a key is never overwritten (remove it, or give another --out)`)
      const { generateFleetKey } = await import('./ota-image.js')
      const { privatePem, publicHex } = generateFleetKey()
      writeFileSync(options.out, privatePem, { mode: 0o600, flag: 'wx' })
      writeFileSync(pub, `${publicHex}\n`, { mode: 0o644, flag: 'wx' })
      console.log(`private key: ${options.out} (keep it secret)`)
      console.log(`public key: ${pub}: ${publicHex}`)
    })

  ota.command('sign <payload>')
    .description('sign a payload (the application\'s flat binary) into a firmware image')
    .requiredOption('--key <file>', 'the private key (from berth ota keygen)')
    .requiredOption('--image-version <version>', 'the image\'s version (1-24 bytes; --version is the command\'s own)')
    .requiredOption('--software-type <type>', 'the software type it is for (1-24 bytes)')
    .requiredOption('--load-address <address>', 'where the payload runs: its vector table\'s address (0x00100000)')
    .requiredOption('--out <file>', 'where the signed image goes')
    .action(async (payloadPath: string, options: { key: string, imageVersion: string, softwareType: string, loadAddress: string, out: string }) => {
      const loadAddress = address(options.loadAddress)
      const payload = readGiven(payloadPath, 'payload')
      const pem = readGiven(options.key, 'key').toString('utf8')
      const { buildImage, parsePrivateKey } = await import('./ota-image.js')
      const { createHash } = await import('node:crypto')
      const image = await refusing(() => buildImage({ version: options.imageVersion, softwareType: options.softwareType, loadAddress }, payload, parsePrivateKey(pem, options.key)))
      writeFileSync(options.out, image)
      console.log(`${options.out}: ${options.softwareType} ${options.imageVersion}, ${payload.length} payload bytes at 0x${loadAddress.toString(16).padStart(8, '0')}, ${image.length} bytes, sha256 ${createHash('sha256').update(image).digest('hex')}`)
    })

  ota.command('verify <image>')
    .description('check a firmware image\'s header and signature against the fleet\'s public key (exit 1 when it does not verify)')
    .requiredOption('--pub <key>', 'the public key: a file of 64 hex characters or a PEM key, or the 64 hex characters themselves')
    .action(async (imagePath: string, options: { pub: string }) => {
      const image = readGiven(imagePath, 'image')
      const { fleetPublicKey, verifyImage, ImageError } = await import('./ota-image.js')
      const key = await refusing(() => fleetPublicKey(options.pub, process.cwd()))
      if (key === undefined) throw new UsageError('--pub: give the public key')
      try {
        const header = verifyImage(image, key)
        console.log(`${imagePath}: verified: ${header.softwareType} ${header.version}, ${header.payloadSize} payload bytes at 0x${header.loadAddress.toString(16).padStart(8, '0')}`)
      } catch (err) {
        if (err instanceof ImageError) throw new Error(`${imagePath}: ${err.message}`)
        throw err
      }
    })
}
