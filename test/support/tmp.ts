// Temporary directories for tests, removed when the test ends.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Teardown { teardown(fn: () => void | Promise<void>): void }

export function tempDir (t: Teardown, prefix = 'berth-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}
