// A free TCP port on 127.0.0.1, for servers a test starts in another process.
import { createServer } from 'node:net'

export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}
