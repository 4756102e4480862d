// The one outbound HTTP client for requests Berth makes to addresses its users give it (alert
// destinations, webhooks, providers): http and https only; never to loopback, private, link-local
// (cloud metadata), shared, multicast or reserved addresses unless `[server].outbound_allow` names
// the host or its range — checked on the addresses a name resolves to when the connection is made
// (undici's connect lookup), so a name that resolves elsewhere at send time (DNS rebinding) is
// refused too; redirects never followed; a deadline and a bound on the answer's size; URLs logged
// without their query and credentials. Destinations an operator wrote into the configuration are
// `trusted`: the same client and limits, without the address check.
import { lookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { Agent, fetch, type Response } from 'undici'

/** Ranges no user-given destination reaches unless allowed (RFC 6890 special-purpose, loopback, private, link-local, multicast). */
const REFUSED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
]
const REFUSED_V6: Array<[string, number]> = [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]
]

export interface OutboundOptions {
  /** Host names (exact), addresses or CIDR ranges a user-given destination may reach despite the refused ranges. */
  allow: readonly string[]
  /** Deadline of one request, connection included. */
  timeoutMs?: number
  /** Largest answer body read; a larger one fails the request. */
  maxBodyBytes?: number
}

export interface OutboundRequest {
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array
  signal?: AbortSignal
  /** An operator's configured destination: the address check is skipped. */
  trusted?: boolean
  /** Overrides the client's deadline. */
  timeoutMs?: number
}

export interface OutboundAnswer {
  status: number
  headers: Headers
  body: Buffer
}

/** A destination refused before anything was sent: its message says which rule. */
export class DestinationRefused extends Error {
  override name = 'DestinationRefused'
}

/** `url` for a log line: scheme, host, port and path, without credentials or query. */
export function redactedUrl (url: string | URL): string {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search === '' ? '' : '?…'}`
  } catch {
    return '<not a URL>'
  }
}

/** An IPv4 address an IPv6 one stands for (`::ffff:a.b.c.d`), else the address itself. */
function unmapped (address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped === null ? address : mapped[1]
}

function blockList (ranges: ReadonlyArray<[string, number]>, family: 'ipv4' | 'ipv6', into = new BlockList()): BlockList {
  for (const [network, prefix] of ranges) into.addSubnet(network, prefix, family)
  return into
}

export class OutboundClient {
  readonly #refused: BlockList
  readonly #allowed = new BlockList()
  readonly #allowedHosts: Set<string>
  readonly #timeoutMs: number
  readonly #maxBodyBytes: number
  readonly #checked: Agent
  readonly #trusted: Agent

  constructor (options: OutboundOptions) {
    this.#refused = blockList(REFUSED_V6, 'ipv6', blockList(REFUSED_V4, 'ipv4'))
    const hosts: string[] = []
    for (const entry of options.allow) {
      const [network, prefix] = entry.split('/')
      const family = isIP(network)
      if (family === 0) hosts.push(entry.toLowerCase())
      else this.#allowed.addSubnet(network, prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix), family === 4 ? 'ipv4' : 'ipv6')
    }
    this.#allowedHosts = new Set(hosts)
    this.#timeoutMs = options.timeoutMs ?? 10_000
    this.#maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024
    this.#checked = new Agent({ connect: { lookup: (host, opts, done) => { this.#lookup(host, opts, done) } } })
    this.#trusted = new Agent()
  }

  /** Why the address may not be reached, or undefined when it may. */
  addressProblem (address: string): string | undefined {
    const plain = unmapped(address)
    const family = isIP(plain) === 4 ? 'ipv4' : 'ipv6'
    if (this.#allowed.check(plain, family) || !this.#refused.check(plain, family)) return undefined
    return `${address} is a loopback, private, link-local or reserved address ([server].outbound_allow may allow it)`
  }

  /** Why a user may not give `url` as a destination (its name resolved now), or undefined. */
  async check (url: string): Promise<string | undefined> {
    const parsed = this.#parse(url)
    if (typeof parsed === 'string') return parsed
    const host = hostOf(parsed)
    if (this.#allowedHosts.has(host)) return undefined
    if (isIP(host) !== 0) return this.addressProblem(host)
    // The same resolution and check the connection makes.
    return await new Promise(resolve => {
      this.#lookup(host, { all: true }, err => {
        if (err === null) resolve(undefined)
        else resolve(err instanceof DestinationRefused ? err.message : `${host} does not resolve (${err.code ?? err.message})`)
      })
    })
  }

  /** Send one request (redirects are answers, never followed); throws DestinationRefused, or the transport's error. */
  async send (url: string, request: OutboundRequest = {}): Promise<OutboundAnswer> {
    const parsed = this.#parse(url)
    if (typeof parsed === 'string') throw new DestinationRefused(parsed)
    const host = hostOf(parsed)
    const trusted = request.trusted === true || this.#allowedHosts.has(host)
    if (!trusted && isIP(host) !== 0) {
      const problem = this.addressProblem(host)
      if (problem !== undefined) throw new DestinationRefused(problem)
    }
    const timeout = AbortSignal.timeout(request.timeoutMs ?? this.#timeoutMs)
    let response: Response
    try {
      response = await fetch(parsed, {
        method: request.method ?? 'POST',
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        dispatcher: trusted ? this.#trusted : this.#checked,
        signal: request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout])
      })
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause
      if (cause instanceof DestinationRefused) throw cause
      throw err
    }
    return { status: response.status, headers: response.headers as unknown as Headers, body: await this.#read(response) }
  }

  async close (): Promise<void> {
    await Promise.all([this.#checked.close(), this.#trusted.close()])
  }

  #parse (url: string): URL | string {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return 'is not a URL'
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `must be an http or https URL, not ${parsed.protocol}`
    return parsed
  }

  /** The body, refused past the bound. */
  async #read (response: Response): Promise<Buffer> {
    const chunks: Buffer[] = []
    let size = 0
    if (response.body === null) return Buffer.alloc(0)
    for await (const chunk of response.body) {
      size += (chunk as Uint8Array).length
      if (size > this.#maxBodyBytes) {
        await response.body.cancel().catch(() => undefined)
        throw new Error(`the answer is larger than ${this.#maxBodyBytes} bytes`)
      }
      chunks.push(Buffer.from(chunk as Uint8Array))
    }
    return Buffer.concat(chunks)
  }

  /** The connect-time lookup: the name resolved, every address checked before one is connected to. */
  #lookup (host: string, options: LookupOptions, done: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void {
    lookup(host, { ...options, all: true }, (err, addresses) => {
      if (err !== null) {
        done(err, [])
        return
      }
      const refused = addresses.map(a => this.addressProblem(a.address)).find(p => p !== undefined)
      if (refused !== undefined) {
        done(Object.assign(new DestinationRefused(`${host} resolves to ${refused}`), { code: 'EREFUSED_DESTINATION' }), [])
        return
      }
      if (options.all === true) done(null, addresses)
      else done(null, addresses[0].address, addresses[0].family)
    })
  }
}

/** The URL's host as a name or a bare address (IPv6 without brackets), lower case. */
function hostOf (url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
}
