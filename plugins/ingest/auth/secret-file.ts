// A generated secret kept in a 0600 file in the state directory: created on first start, read after.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The secret in `<stateDir>/<name>`, generated (32 random bytes, hex) when the file does not exist. */
export function generatedSecret (stateDir: string, name: string): string {
  const file = join(stateDir, name)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const secret = randomBytes(32).toString('hex')
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  return secret
}

/**
 * The scrypt hash of the generated secret `<stateDir>/<name>`, kept in `<name>.scrypt` (0600) beside
 * the SHA-256 of the secret it was made from, so a start does not run scrypt again; a secret that
 * was changed by hand is hashed again.
 */
export function hashedSecret (stateDir: string, name: string, hash: (secret: string) => string): string {
  const secret = generatedSecret(stateDir, name)
  const fingerprint = createHash('sha256').update(secret).digest('hex')
  const file = join(stateDir, `${name}.scrypt`)
  const [kept, encoded] = existsSync(file) ? readFileSync(file, 'utf8').trim().split(' ') : []
  if (kept === fingerprint && encoded !== undefined) return encoded
  const fresh = hash(secret)
  writeFileSync(file, `${fingerprint} ${fresh}\n`, { mode: 0o600 })
  return fresh
}
