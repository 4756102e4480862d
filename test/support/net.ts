// A free TCP port on 127.0.0.1, for servers a test starts in another process.
import { createServer } from 'node:net'
import { randomInt } from 'node:crypto'

/**
 * Ports are drawn at random below Linux's ephemeral range (32768–60999): a port the system hands out
 * for `listen(0)` or an outgoing connection elsewhere in the suite cannot take it between this check
 * and the moment the other process binds it.
 */
const LOWEST = 20_000
const HIGHEST = 32_767

async function bindable (port: number): Promise<boolean> {
  const server = createServer()
  const bound = await new Promise<boolean>(resolve => {
    server.once('error', () => { resolve(false) })
    server.listen(port, '127.0.0.1', () => { resolve(true) })
  })
  if (bound) await new Promise(resolve => server.close(resolve))
  return bound
}

export async function freePort (): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = randomInt(LOWEST, HIGHEST + 1)
    if (await bindable(port)) return port
  }
  throw new Error(`no free port found between ${LOWEST} and ${HIGHEST} in 100 attempts`)
}
