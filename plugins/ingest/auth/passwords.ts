// Password hashes for Basic-auth users: scrypt$N$r$p$salt$hash (base64), verified in constant time.
// Verification runs scrypt on libuv's thread pool, never on the event loop.
import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto'

const N = 16384
const R = 8
const P = 1
const KEY_LENGTH = 32

/** A new hash (synchronous: used once at start-up and by `berth telemetry hash-password`). */
export function hashPassword (password: string): string {
  const salt = randomBytes(16)
  const hash = scryptSync(password, salt, KEY_LENGTH, { N, r: R, p: P })
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`
}

export async function verifyPassword (password: string, encoded: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = encoded.split('$')
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false
  const expected = Buffer.from(hash, 'base64')
  const options: ScryptOptions = { N: Number(n), r: Number(r), p: Number(p) }
  const actual = await new Promise<Buffer>((resolve, reject) => {
    scrypt(password, Buffer.from(salt, 'base64'), expected.length, options, (err, key) => { if (err === null) resolve(key); else reject(err) })
  })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
