// Raw HTTP/1.1 over a TCP socket, for requests fetch will not send (a malformed request line, headers
// over node's limit): write the bytes, read until the server closes, and split the answer.
import { connect } from 'node:net'

export interface RawAnswer {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: Buffer
}

/**
 * Send `request` as is to `url`'s host and port; the server is expected to close after answering.
 * `open`: the writing half stays open (node:http's server drops a request whose client half-closed).
 */
export async function rawRequest (url: URL, request: string | Buffer, options: { open?: boolean } = {}): Promise<RawAnswer> {
  const chunks: Buffer[] = []
  await new Promise<void>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname)
    socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    // The server may close while the request is still being written: what it answered is kept.
    socket.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err) })
    socket.on('close', () => { resolve() })
    if (options.open === true) socket.write(request)
    else socket.end(request)
  })
  const answer = Buffer.concat(chunks)
  const split = answer.indexOf('\r\n\r\n')
  if (split === -1) throw new Error(`no HTTP answer: ${JSON.stringify(answer.toString('latin1').slice(0, 200))}`)
  const [statusLine, ...lines] = answer.subarray(0, split).toString('latin1').split('\r\n')
  const headers = Object.fromEntries(lines.map(line => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine.split(' ')[1]), headers, body: answer.subarray(split + 4) }
}
