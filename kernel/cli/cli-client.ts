// The HTTP client of `berth` commands: a base URL and an Authorization header, JSON in and out, and
// every failure turned into one readable line. node:http rather than fetch: it loads faster, and no
// client-side timeout cuts off a long deploy or followed logs.
import type { IncomingMessage } from 'node:http'
import type { WebSocket } from 'ws'


export class ApiClient {
  readonly url: URL
  /** The Authorization header value (Bearer for the control API, Basic for the telemetry API), if any. */
  readonly #authorization: string | undefined
  /** Where the credentials came from, named in authentication failures. */
  readonly #credentialSource: string

  constructor (url: URL, authorization?: string, credentialSource = 'no credentials') {
    this.url = url
    this.#authorization = authorization
    this.#credentialSource = credentialSource
  }

  /** Send a request and return the parsed JSON answer. */
  async json<T> (method: string, path: string, body?: unknown): Promise<T> {
    return JSON.parse(await readAll(await this.#send(method, path, body))) as T
  }

  /** GET a plain-text answer whole (a service's last log lines). */
  async text (path: string): Promise<string> {
    return await readAll(await this.#send('GET', path))
  }

  /**
   * A WebSocket to `path` with these credentials, once open (ws loaded only then: most commands never
   * need it). A refused upgrade is the same one-line failure as any other answer.
   */
  async websocket (path: string): Promise<WebSocket> {
    const { WebSocket } = await import('ws')
    const url = new URL(path, this.url)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    const socket = new WebSocket(url, { headers: this.#authorization === undefined ? {} : { authorization: this.#authorization } })
    return await new Promise((resolve, reject) => {
      socket.once('open', () => { resolve(socket) })
      socket.once('unexpected-response', (_request, response) => {
        readAll(response).then(text => { reject(new Error(this.#failure(response.statusCode ?? 0, text))) }, reject)
      })
      socket.once('error', (err: NodeJS.ErrnoException) => { reject(new Error(`cannot reach the server at ${this.url.origin}: ${err.code ?? err.message}`)) })
    })
  }

  /** An answer as a stream of bytes (plain-text logs, line-delimited progress). */
  async stream (path: string, method = 'GET', body?: unknown): Promise<IncomingMessage> {
    return await this.#send(method, path, body)
  }

  async #send (method: string, path: string, body?: unknown): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = this.#authorization === undefined ? {} : { authorization: this.#authorization }
    if (payload !== undefined) headers['content-type'] = 'application/json'
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      // node:http is taken when the first request is made, with process.getBuiltinModule rather than an
      // ES import: building its ES namespace reads every export, and on Node 22 and later that includes
      // lazy WebSocket getters that load Node's whole fetch stack (undici, http2, zlib, web streams).
      const req = process.getBuiltinModule('node:http').request(new URL(path, this.url), { method, headers }, resolve)
      req.on('error', (err: NodeJS.ErrnoException) => {
        reject(new Error(`cannot reach the server at ${this.url.origin}: ${err.code ?? err.message}`))
      })
      req.end(payload)
    })
    const status = response.statusCode ?? 0
    if (status >= 200 && status < 300) return response
    throw new Error(this.#failure(status, await readAll(response)))
  }

  #failure (status: number, text: string): string {
    let message = `HTTP ${status}`
    try {
      const parsed = JSON.parse(text) as { error?: unknown }
      if (typeof parsed.error === 'string') message = parsed.error
    } catch {
      if (text.trim() !== '') message = `${message}: ${text.trim().split('\n')[0]}`
    }
    return status === 401 ? `${message} (credentials from ${this.#credentialSource})` : message
  }
}

async function readAll (stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
