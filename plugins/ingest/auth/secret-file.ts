// A generated secret kept in a 0600 file in the state directory: created on first start, read after.
import { randomBytes } from 'node:crypto'
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
