// `berth exec`: a command in a service's replica over a WebSocket of the control API (deployers and
// admins). The client's first message (text, JSON) says what to run: {"command": [...], "tty": bool,
// "columns"?, "rows"?}; then binary messages are its input, and text messages {"resize": [columns,
// rows]} or {"eof": true} (its input ends). The server sends binary messages whose first byte is 1
// (output) or 2 (errors), then {"exit": <code>} and closes; a failure is {"error": "..."} and a close.
// Input sent before the command has started (its end included) waits and is delivered once it has.
// A session ends within seconds of its token being revoked. Who ran what, in which container and
// when, and how it ended, goes to the log.
import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { Logger } from 'pino'
import type { WebSocket } from 'ws'
import { BadRequest, KERNEL_CODES } from '../../kernel/index.js'
import type { ExecSession } from './container-engine.js'
import type { Reconciler } from './reconciler.js'

/** How long the client has to say what to run. */
const START_TIMEOUT_MS = 10_000
/** How often an open session's token is checked (a revoked one ends the session). */
const TOKEN_CHECK_MS = 1000
/** Bytes waiting to go to a slow client before the command's output is paused. */
const HIGH_WATER = 1024 * 1024
const MAX_ARGUMENTS = 256
const MAX_COMMAND_BYTES = 64 * 1024
/** Close codes: 1008 a message the protocol does not allow, 1011 the server failed. */
const POLICY = 1008
const FAILED = 1011

export interface ExecStart {
  command: string[]
  tty: boolean
  columns?: number
  rows?: number
}

/** The first message, checked; a string says what is wrong with it. */
export function parseStart (text: string): ExecStart | string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return 'the first message must be JSON: {"command": [...], "tty": false}'
  }
  const { command, tty, columns, rows } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  if (!Array.isArray(command) || command.length === 0 || command.length > MAX_ARGUMENTS || !command.every(a => typeof a === 'string')) {
    return `command must be a list of 1 to ${MAX_ARGUMENTS} strings`
  }
  if (Buffer.byteLength(command.join('\0')) > MAX_COMMAND_BYTES) return `command is longer than ${MAX_COMMAND_BYTES} bytes`
  if (tty !== undefined && typeof tty !== 'boolean') return 'tty must be true or false'
  const size = (n: unknown): boolean => n === undefined || (Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 1000)
  if (!size(columns) || !size(rows)) return 'columns and rows must be integers from 1 to 1000'
  return { command: command as string[], tty: tty === true, ...(columns !== undefined && { columns: columns as number }), ...(rows !== undefined && { rows: rows as number }) }
}

export interface ExecRouteDeps {
  reconciler: Reconciler
  /** The role check of deployers (and admins). */
  deployer: onRequestAsyncHookHandler
  by: (request: FastifyRequest) => string | undefined
  /** Throws the 404 of a missing service when the request's token does not reach the named one's project. */
  visible: (request: FastifyRequest, name: string) => string
  /** Whether the token the request was admitted with is still valid (not revoked). */
  stillValid: (request: FastifyRequest) => boolean
  log: Logger
}

function parseReplica (text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  if (!/^[1-9]\d{0,3}$/.test(text)) throw new BadRequest(`replica must be a replica number (1, 2, …), got ${JSON.stringify(text)}`)
  return Number(text)
}

export function execRoutes ({ reconciler, deployer, by, visible, stillValid, log }: ExecRouteDeps): FastifyPluginAsync {
  return async app => {
    app.route<{ Params: { name: string }, Querystring: { replica?: string } }>({
      method: 'GET',
      url: '/services/:name/exec',
      onRequest: deployer,
      preHandler: async request => {
        visible(request, request.params.name)
        parseReplica(request.query.replica)
      },
      handler: async (_request, reply) => {
        reply.header('upgrade', 'websocket')
        return await reply.code(KERNEL_CODES.UPGRADE_REQUIRED.status).send({ error: 'exec is a WebSocket: send Upgrade: websocket', code: KERNEL_CODES.UPGRADE_REQUIRED.code })
      },
      wsHandler: (socket, request) => {
        const fail = (code: number, error: string): void => {
          if (socket.readyState === socket.OPEN) socket.send(JSON.stringify({ error }))
          socket.close(code, error.slice(0, 120))
        }
        const timer = setTimeout(() => { fail(POLICY, `no command within ${START_TIMEOUT_MS / 1000} s`) }, START_TIMEOUT_MS)
        const tokenCheck = setInterval(() => { if (!stillValid(request)) fail(POLICY, 'the token of this session was revoked') }, TOKEN_CHECK_MS)
        socket.once('close', () => { clearTimeout(timer); clearInterval(tokenCheck) })
        // Messages after the first wait here until the command has started.
        let deliver: ((data: Buffer, binary: boolean) => void) | undefined
        const early: Array<{ data: Buffer, binary: boolean }> = []
        let earlyBytes = 0
        let started = false
        socket.on('message', (data: Buffer, binary: boolean) => {
          if (deliver !== undefined) {
            deliver(data, binary)
            return
          }
          if (started) {
            early.push({ data, binary })
            earlyBytes += data.length
            if (earlyBytes > HIGH_WATER) fail(POLICY, `more than ${HIGH_WATER} bytes of input before the command started`)
            return
          }
          started = true
          clearTimeout(timer)
          const start = binary ? 'the first message must be text' : parseStart(data.toString())
          if (typeof start === 'string') {
            fail(POLICY, start)
            return
          }
          const { name } = request.params
          reconciler.attach(name, parseReplica(request.query.replica), start).then(({ container, session }) => {
            const audit = { audit: 'exec', by: by(request) ?? 'unknown', service: name, replica: container.replica, container: container.name, command: start.command, tty: start.tty }
            log.info(audit, 'exec started')
            const began = Date.now()
            const forward = relay(socket, session, exitCode => { log.info({ ...audit, exit_code: exitCode, duration_ms: Date.now() - began }, 'exec ended') })
            for (const message of early.splice(0)) forward(message.data, message.binary)
            deliver = forward
          }, (err: Error & { statusCode?: number }) => {
            fail((err.statusCode ?? 500) >= 500 ? FAILED : POLICY, err.message)
          })
        })
      }
    })
  }
}

/** Carry a started command's output over the socket until it exits (or the client goes); returns what takes the client's messages to it. */
function relay (socket: WebSocket, session: ExecSession, ended: (exitCode: number | null) => void): (data: Buffer, binary: boolean) => void {
  const forward = (stream: NodeJS.ReadableStream, tag: number): void => {
    stream.on('data', (chunk: Buffer) => {
      if (socket.readyState !== socket.OPEN) return
      socket.send(Buffer.concat([Buffer.of(tag), chunk]), () => { if (socket.bufferedAmount < HIGH_WATER) stream.resume() })
      if (socket.bufferedAmount >= HIGH_WATER) stream.pause()
    })
  }
  forward(session.output, 1)
  forward(session.errors, 2)
  let exited = false
  socket.once('close', () => {
    if (!exited) {
      ended(null)
      session.close()
    }
  })
  session.exited.then(code => {
    exited = true
    ended(code)
    if (socket.readyState === socket.OPEN) {
      socket.send(JSON.stringify({ exit: code }))
      socket.close(1000, 'exited')
    }
  }, (err: Error) => {
    exited = true
    ended(null)
    if (socket.readyState === socket.OPEN) {
      socket.send(JSON.stringify({ error: err.message }))
      socket.close(FAILED, 'failed')
    }
  })
  return (data, binary) => {
    if (binary) {
      session.input.write(data)
      return
    }
    const control = parseControl(data.toString())
    if (control === 'eof') session.input.end()
    else if (control !== undefined) session.resize(control[0], control[1]).catch(() => undefined)
  }
}

/** A control message: end of input, or a TTY size; undefined for anything else (ignored). */
function parseControl (text: string): 'eof' | [number, number] | undefined {
  try {
    const value = JSON.parse(text) as { eof?: unknown, resize?: unknown }
    if (value.eof === true) return 'eof'
    const size = value.resize
    if (Array.isArray(size) && size.length === 2 && size.every(n => Number.isInteger(n) && n >= 1 && n <= 1000)) return [size[0], size[1]]
    return undefined
  } catch {
    return undefined
  }
}
