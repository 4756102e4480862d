// A small disk to fill: a tmpfs mounted on a new directory (as root), and a filler file that takes
// its last byte, so that a test can see what a full disk does to a server and give the space back.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, type Teardown } from './tmp.js'

const TMPFS_BYTES = 8 * 1024 * 1024

/** A tmpfs of 8 MiB mounted on a new directory (unmounted at the end), or the reason it cannot be had here. */
export function smallDisk (t: Teardown): string | Error {
  if (process.getuid?.() !== 0) return new Error('not root')
  const dir = tempDir(t)
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' })
  } catch (err) {
    return err as Error
  }
  t.teardown(() => { execFileSync('umount', ['-l', dir]) })
  return dir
}

/** Fill the disk to its last byte with a file of its own (removing it gives the space back). */
export function fill (dir: string): string {
  const file = join(dir, 'filler')
  for (const size of [64 * 1024, 512]) {
    const block = Buffer.alloc(size, 0x5a)
    try {
      for (;;) writeFileSync(file, block, { flag: 'a' })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
    }
  }
  return file
}
