// What every real component shares: installing its Debian packages, and requiring it in a test
// (under CI a component that cannot be had fails the test; elsewhere the test is skipped).
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { withLock } from './lock.js'

const run = promisify(execFile)
const APT_TIMEOUT = 600_000

/** Thrown when a component cannot be had on this machine; the message is the reason, on one line. */
export class Unavailable extends Error {}

export function isRoot (): boolean {
  return process.getuid?.() === 0
}

function oneLine (text: string): string {
  return text.trim().split('\n').filter(line => line.trim() !== '').at(-1)?.trim() ?? ''
}

async function missingPackages (packages: string[]): Promise<string[]> {
  let listed: string
  try {
    listed = (await run('dpkg-query', ['-W', '-f=${Package}\t${Status}\n', ...packages])).stdout
  } catch (err) {
    // dpkg-query exits 1 when it knows nothing about one of the names; it still lists the others.
    listed = (err as { stdout?: string }).stdout ?? ''
  }
  const installed = new Set(listed.split('\n').filter(line => line.endsWith('\tinstall ok installed')).map(line => line.split('\t')[0]))
  return packages.filter(name => !installed.has(name))
}

async function aptGet (args: string[]): Promise<void> {
  try {
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: APT_TIMEOUT, maxBuffer: 64 * 1024 * 1024
    })
  } catch (err) {
    const { stderr, message } = err as { stderr?: string, message: string }
    throw new Unavailable(`apt-get ${args.join(' ')} failed: ${oneLine(stderr ?? '') || oneLine(message)}`)
  }
}

let updated: Promise<void> | undefined

/**
 * Install the Debian packages that are missing (apt-get update first, once per process). Throws
 * `Unavailable` when some are missing and this process is not root, or when apt-get fails.
 */
export async function ensureDebianPackages (packages: string[]): Promise<void> {
  const missing = await missingPackages(packages)
  if (missing.length === 0) return
  if (!isRoot()) throw new Unavailable(`Debian packages missing (${missing.join(' ')}) and not root to install them`)
  await withLock('apt', async () => {
    const stillMissing = await missingPackages(packages)
    if (stillMissing.length === 0) return
    updated ??= aptGet(['update'])
    await updated
    await aptGet(['install', '-y', '--no-install-recommends', ...stillMissing])
  })
}

/** True when the CI variable is set to anything non-empty. */
export function inCI (): boolean {
  return (process.env.CI ?? '') !== ''
}

/** The parts of a tap test `requireComponent` uses. */
export interface ComponentTest {
  fail(message: string): unknown
  pass(message: string, extra: { skip: string }): unknown
}

/**
 * Get a component for a test: `acquire()`'s result, or undefined when it cannot be had (acquire
 * threw). Then, under CI, the test fails with the reason on one line; elsewhere a skipped assertion
 * `requires NAME # SKIP reason` is recorded. Either way the caller returns at once when it gets undefined.
 */
export async function requireComponent<T> (t: ComponentTest, name: string, acquire: () => Promise<T>): Promise<T | undefined> {
  if (process.env.BERTH_TEST_TIER === 'fast') {
    t.fail(`${name} is an external component: this file is not of the fast tier (scripts/test-tier.js placed it there)`)
    return undefined
  }
  try {
    return await acquire()
  } catch (err) {
    const reason = `${name} unavailable: ${oneLine(err instanceof Error ? err.message : String(err))}`
    if (inCI()) t.fail(reason)
    else t.pass(`requires ${name}`, { skip: reason })
    return undefined
  }
}
