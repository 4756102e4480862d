// Node's own HTTP/1 parser (llhttp, the C parser node:http runs on), for the proxy's fast lane: the
// same parser, limits and strictness as node:http, without node:http's request and response objects.
// Node exposes it only through node:http's internal module `_http_common`, so it is checked once on
// a request and a response before use; on a Node where that check fails it is absent and every
// connection takes node:http's path (correct, only slower).
import { createRequire } from 'node:module'
import type { Socket } from 'node:net'

/** The arguments llhttp passes when a message's head is complete. */
type HeadCallback = (versionMajor: number, versionMinor: number, headers: string[] | undefined, method: number | undefined,
  url: string | undefined, statusCode: number | undefined, statusMessage: string | undefined, upgrade: boolean, keepAlive: boolean) => number | undefined

export interface ParserEvents {
  /**
   * A head is complete; for a response, return 1 when it can have no body (the answer to HEAD).
   * The same object comes with each head of a parser, filled anew: it is read, not kept.
   */
  head: (head: ParsedHead) => number | undefined
  /** A piece of a body (a copy llhttp makes); without it, bodies are parsed and skipped. */
  body?: (chunk: Buffer) => void
  /** The message has ended; without it, the end is not told. */
  complete?: () => void
}

export interface ParsedHead {
  versionMinor: number
  /** Flat name/value list as received. */
  headers: string[]
  method: string
  url: string
  statusCode: number
  statusMessage: string
  upgrade: boolean
  keepAlive: boolean
}

export interface HttpParser {
  /** Bytes parsed, or the parse error. */
  execute: (data: Buffer) => number | Error
  /**
   * Inside a callback of `execute`: the caller passes on the rest of this message, its body (it knows
   * where the head ends, and the length) and its end, itself. Until `execute` returns, the body and
   * complete events, and the copy llhttp makes of each body piece, are skipped; the parser still
   * counts the bytes.
   */
  passOnRest: () => void
  /** Parse bytes the caller knows to be body and passes on itself (as `passOnRest`). */
  executeBody: (data: Buffer) => number | Error
  /**
   * Read `socket` in C++, straight into the parser (as node:http does), without a 'data' event per
   * read; `executed` follows each read with its result. False when the socket cannot be read so.
   */
  consume: (socket: Socket, executed: (result: number | Error) => void) => boolean
  /** Back to 'data' events (nothing when not consuming). */
  unconsume: () => void
  /** While consuming, inside `executed`: a copy of the bytes of this read. */
  currentBuffer: () => Buffer
  /** The end of the stream (a response delimited by the connection's close ends here). */
  finish: () => number | Error | undefined
  /** Stop consuming, and free the parser soon. */
  close: () => void
}

interface NativeParser {
  initialize: (type: number, resource: object, maxHeaderSize: number, lenient: number) => void
  execute: (data: Buffer) => number | Error
  finish: () => number | Error | undefined
  close: () => void
  consume: (handle: object) => void
  unconsume: () => void
  getCurrentBuffer: () => Buffer
  [slot: number]: unknown
}

interface NativeModule {
  HTTPParser: (new () => NativeParser) & { REQUEST: number, RESPONSE: number, kOnHeaders: number, kOnHeadersComplete: number, kOnBody: number, kOnMessageComplete: number, kOnExecute: number }
  methods: string[]
}

export type ParserKind = 'request' | 'response'

export type ParserFactory = (kind: ParserKind, maxHeaderSize: number, events: ParserEvents) => HttpParser

function load (): NativeModule | undefined {
  try {
    const native = createRequire(import.meta.url)('_http_common') as Partial<NativeModule>
    return typeof native.HTTPParser === 'function' && Array.isArray(native.methods) ? native as NativeModule : undefined
  } catch {
    return undefined
  }
}

function factoryOf (native: NativeModule): ParserFactory {
  const { HTTPParser, methods } = native
  return (kind, maxHeaderSize, events) => {
    const parser = new HTTPParser()
    parser.initialize(kind === 'request' ? HTTPParser.REQUEST : HTTPParser.RESPONSE, {}, maxHeaderSize, 0)
    // A head of many headers arrives in parts before it is complete.
    let pending: string[] = []
    let pendingUrl = ''
    parser[HTTPParser.kOnHeaders] = (headers: string[], url: string) => {
      for (const item of headers) pending.push(item)
      pendingUrl += url
    }
    const head: ParsedHead = { versionMinor: 0, headers: pending, method: '', url: '', statusCode: 0, statusMessage: '', upgrade: false, keepAlive: false }
    const onHead: HeadCallback = (_major, minor, headers, method, url, statusCode, statusMessage, upgrade, keepAlive) => {
      if (headers === undefined) {
        headers = pending
        pending = []
      }
      if (url === undefined || url === '') {
        url = pendingUrl
        pendingUrl = ''
      }
      head.versionMinor = minor
      head.headers = headers
      head.method = method === undefined ? '' : methods[method]
      head.url = url
      head.statusCode = statusCode ?? 0
      head.statusMessage = statusMessage ?? ''
      head.upgrade = upgrade
      head.keepAlive = keepAlive
      return events.head(head)
    }
    parser[HTTPParser.kOnHeadersComplete] = onHead
    parser[HTTPParser.kOnBody] = events.body
    parser[HTTPParser.kOnMessageComplete] = events.complete
    // llhttp looks its callbacks up on the parser object each time it has an event.
    let passingOn = false
    const passOnRest = (): void => {
      passingOn = true
      parser[HTTPParser.kOnBody] = undefined
      parser[HTTPParser.kOnMessageComplete] = undefined
    }
    const execute = (data: Buffer): number | Error => {
      const result = parser.execute(data)
      if (passingOn) {
        passingOn = false
        parser[HTTPParser.kOnBody] = events.body
        parser[HTTPParser.kOnMessageComplete] = events.complete
      }
      return result
    }
    let consumed = false
    const unconsume = (): void => {
      if (!consumed) return
      consumed = false
      parser.unconsume()
    }
    return {
      execute,
      passOnRest,
      executeBody: data => {
        passOnRest()
        return execute(data)
      },
      finish: () => parser.finish(),
      close: () => {
        unconsume()
        // The C++ parser is freed once the stack that may be inside it has unwound (as node:http does).
        setImmediate(() => { parser.close() })
      },
      consume: (socket, executed) => {
        const handle = (socket as unknown as { _handle?: { isStreamBase?: boolean } | null })._handle
        if (handle?.isStreamBase !== true || typeof parser.consume !== 'function') return false
        parser[HTTPParser.kOnExecute] = executed
        parser.consume(handle)
        consumed = true
        return true
      },
      unconsume,
      currentBuffer: () => parser.getCurrentBuffer()
    }
  }
}

const HEAD_END = Buffer.from('\r\n\r\n')

/**
 * Where the head of a message that starts at `from` in `bytes` ends (the offset after its empty
 * line), or -1 when it does not end there. llhttp skips empty lines before a message and, strict,
 * ends a head at its first empty line (checked by `behaves`).
 */
export function headEnd (bytes: Buffer, from: number): number {
  while (bytes[from] === 13 || bytes[from] === 10) from++
  const end = bytes.indexOf(HEAD_END, from)
  return end === -1 ? -1 : end + HEAD_END.length
}

/**
 * True when `factory` parses a request with a body, a HEAD answer and a body passed on by the caller
 * (no body or complete event) the way llhttp does, and is strict: a head ends at its first empty line (CR LF CR LF), as the fast
 * lane relies on when it passes a body on from where it found that line.
 */
function behaves (factory: ParserFactory): boolean {
  const seen: string[] = []
  const events = (skipBody: boolean): ParserEvents => ({
    head: h => { seen.push(`${h.method}${h.url}${h.statusCode} ${h.headers.join(',')} ${String(h.keepAlive)}`); return skipBody ? 1 : undefined },
    body: chunk => { seen.push(chunk.toString()) },
    complete: () => { seen.push('.') }
  })
  const request = factory('request', 1024, events(false))
  const response = factory('response', 1024, events(true))
  const passedOn = factory('response', 1024, events(false))
  const lenient = factory('response', 1024, { head: () => undefined })
  try {
    request.execute(Buffer.from('POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok'))
    response.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n'))
    passedOn.execute(Buffer.from('HTTP/1.1 201 OK\r\nContent-Length: 3\r\n\r\n'))
    passedOn.executeBody(Buffer.from('abc'))
    if (!(lenient.execute(Buffer.from('HTTP/1.1 200 OK\nContent-Length: 2\n\nok')) instanceof Error)) return false
  } catch {
    return false
  } finally {
    request.close()
    response.close()
    passedOn.close()
    lenient.close()
  }
  return seen.join('|') === 'POST/a0 Host,h,Content-Length,2 true|ok|.|200 Content-Length,5 true|.|201 Content-Length,3 true'
}

const native = load()
const candidate = native === undefined ? undefined : factoryOf(native)

/** The parser factory, or undefined when this Node does not offer its parser as expected. */
export const createParser: ParserFactory | undefined = candidate !== undefined && behaves(candidate) ? candidate : undefined
