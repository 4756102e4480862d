// The control API as `berth` commands reach it: the base URL and token from the CLI settings (or
// BERTH_URL / BERTH_TOKEN), JSON in and out, and every failure turned into one readable line.
// node:http rather than fetch: no client-side timeouts cut off long deploys or followed logs.
import { existsSync, readFileSync } from 'node:fs'
import { request, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import type { CliRegistry } from '../../kernel/index.js'
import { ADMIN_TOKEN_FILE } from './token-store.js'

export class ControlClient {
  readonly url: URL
  /** The Authorization header value (Bearer for the control API, Basic for the telemetry API). */
  readonly #authorization: string
  /** Where the credentials came from, named in authentication failures. */
  readonly #tokenSource: string

  constructor (url: URL, authorization: string, tokenSource: string) {
    this.url = url
    this.#authorization = authorization
    this.#tokenSource = tokenSource
  }

  /** A client for the server the CLI settings point at, with BERTH_TOKEN or the state directory's admin token. */
  static async connect (cli: CliRegistry): Promise<ControlClient> {
    const { controlUrl, stateDir } = await cli.settings()
    const fromEnv = process.env.BERTH_TOKEN
    if (fromEnv !== undefined && fromEnv !== '') return new ControlClient(controlUrl, `Bearer ${fromEnv.trim()}`, 'BERTH_TOKEN')
    const file = join(stateDir, ADMIN_TOKEN_FILE)
    if (!existsSync(file)) {
      throw new Error(`no token: ${file} does not exist (start the server with this state directory first, pass --state-dir, or set BERTH_TOKEN)`)
    }
    return new ControlClient(controlUrl, `Bearer ${readFileSync(file, 'utf8').trim()}`, file)
  }

  /** Send a request and return the parsed JSON answer. */
  async json<T> (method: string, path: string, body?: unknown): Promise<T> {
    return JSON.parse(await readAll(await this.#send(method, path, body))) as T
  }

  /** GET an answer as a stream of bytes (plain-text logs). */
  async stream (path: string): Promise<IncomingMessage> {
    return await this.#send('GET', path)
  }

  async #send (method: string, path: string, body?: unknown): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = { authorization: this.#authorization }
    if (payload !== undefined) headers['content-type'] = 'application/json'
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(new URL(path, this.url), { method, headers }, resolve)
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
    return status === 401 ? `${message} (credentials from ${this.#tokenSource})` : message
  }
}

async function readAll (stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
