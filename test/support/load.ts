// Requests through the proxy for the zero-downtime tests: one GET with a Host header (a new connection
// each time, as a fresh client makes it, or on kept-alive connections), and a bounded load of several
// clients that records every answer until it is stopped, reaches its request cap, or runs out of time.
import { Agent, request } from 'node:http'

export interface Answer {
  /** The HTTP status; 0 when the connection failed. */
  status: number
  body: string
}

/** GET through the proxy at `base` with a Host header (on `agent`'s kept connections, else a new one); a failed connection resolves with status 0. */
export async function through (base: URL, host: string, path = '/', agent: Agent | false = false): Promise<Answer> {
  return await new Promise(resolve => {
    request(new URL(path, base), { headers: { host }, agent }, response => {
      let body = ''
      response.on('data', (chunk: Buffer) => { body += chunk.toString() })
      response.on('end', () => { resolve({ status: response.statusCode ?? 0, body }) })
    }).on('error', (err: NodeJS.ErrnoException) => { resolve({ status: 0, body: err.code ?? err.message }) }).end()
  })
}

export interface LoadOptions {
  path?: string
  /** Clients asking side by side (default 4). */
  clients?: number
  /** Requests in all before the load stops by itself (default 20,000). */
  maxRequests?: number
  /** Milliseconds before the load stops by itself (default 120,000). */
  timeoutMs?: number
  /** Keep connections alive between requests, one per client (default: a new connection per request). */
  keepAlive?: boolean
}

export interface Load {
  /** Every answer so far, in the order they arrived. */
  readonly answers: readonly Answer[]
  /** Stop asking; resolves with every answer once the requests in flight have ended. */
  stop(): Promise<Answer[]>
}

/** Start `clients` loops of GETs through the proxy, bounded in count and time. */
export function startLoad (base: URL, host: string, options: LoadOptions = {}): Load {
  const { path = '/', clients = 4, maxRequests = 20_000, timeoutMs = 120_000 } = options
  const agent = options.keepAlive === true ? new Agent({ keepAlive: true, maxSockets: clients }) : false
  const answers: Answer[] = []
  const deadline = Date.now() + timeoutMs
  let running = true
  const loops = Array.from({ length: clients }, async () => {
    while (running && Date.now() < deadline && answers.length < maxRequests) answers.push(await through(base, host, path, agent))
  })
  return {
    answers,
    stop: async () => {
      running = false
      await Promise.all(loops)
      if (agent !== false) agent.destroy()
      return answers
    }
  }
}

/** The answers that were not a 200, each as `<status> <body>` (for a readable assertion). */
export function failedAnswers (answers: readonly Answer[]): string[] {
  return answers.filter(a => a.status !== 200).map(a => `${a.status} ${a.body.slice(0, 80)}`)
}
