// The rapid-reset attacker of the HTTP/2 abuse test and benchmark: a batch of streams opened and reset
// at once (HEADERS then RST_STREAM CANCEL), then a PING, whose answer says the server has read the batch.
import { constants, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2'

/** Streams of one batch. */
export const RESET_BATCH = 50

/** Open and reset `RESET_BATCH` streams; whether the connection still answers a PING within 2 s after them. */
export async function resetBatch (client: ClientHttp2Session, headers: OutgoingHttpHeaders): Promise<boolean> {
  for (let i = 0; i < RESET_BATCH; i++) {
    const stream = client.request(headers)
    stream.on('error', () => undefined)
    stream.close(constants.NGHTTP2_CANCEL)
  }
  return await new Promise<boolean>(resolve => {
    const timer = setTimeout(() => { resolve(false) }, 2000)
    try {
      client.ping(err => { clearTimeout(timer); resolve(err === null) })
    } catch {
      clearTimeout(timer)
      resolve(false)
    }
  })
}
