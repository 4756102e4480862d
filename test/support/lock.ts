// A lock shared by all processes of a test run (tap runs test files in parallel), so that only one of
// them starts a daemon or builds an image. It is an abstract Unix socket: the kernel frees it if the
// holder dies, so a crashed test never leaves a stale lock behind.
import { createServer, type Server } from 'node:net'
import { pollUntil } from './poll.js'

async function tryListen (name: string): Promise<Server | undefined> {
  const server = createServer()
  return await new Promise(resolve => {
    server.once('error', () => { resolve(undefined) })
    server.listen(`\0berth-test-lock:${name}`, () => { resolve(server) })
  })
}

/** Run `critical` while holding the run-wide lock `name`; wait at most `timeout` ms to get it. */
export async function withLock<T> (name: string, critical: () => Promise<T>, timeout = 600_000): Promise<T> {
  const held = await pollUntil(async () => await tryListen(name), { timeout, interval: 50, what: `lock ${name}` })
  try {
    return await critical()
  } finally {
    await new Promise(resolve => held.close(resolve))
  }
}
