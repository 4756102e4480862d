// The ingest nodes sharing one PostgreSQL database tell each other the events they publish: NOTIFY on
// one channel, LISTEN on a connection of each node's own (application_name LISTENER_NAME). A node
// tells its events only while another node listens: a node that starts listening counts the others'
// listening connections (pg_stat_activity) and greets them on the channel; nodes greet every
// HELLO_INTERVAL_MS and answer a node not heard before; a node not heard for PEER_EXPIRY_MS is gone.
// So a node alone sends nothing, and a node that starts knows at once whether others listen.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { coalesced } from '../../../kernel/runtime-api.js'
import type { TelemetryEvent } from '../apply.js'

/** The channel nodes tell each other their events on. */
export const EVENTS_CHANNEL = 'berth_ingest_events'
/** A NOTIFY payload is at most 8000 bytes: events go in payloads of at most this much JSON. */
const NOTIFY_BYTES = 7000
const HELLO_INTERVAL_MS = 10_000
const PEER_EXPIRY_MS = 3 * HELLO_INTERVAL_MS
/** The application_name of the listening connections. */
const LISTENER_NAME = 'berth-ingest-events'
/** While the listening connection is lost, it is made again this often. */
const RELISTEN_MS = 1000

interface Message { node?: unknown, hello?: unknown, events?: unknown }

export class NodeChannel {
  readonly #config: pg.ClientConfig
  /** Send payloads on the channel (NOTIFY, in a transaction of its own). */
  readonly #notify: (payloads: string[]) => Promise<void>
  readonly #node = randomUUID()
  /** How this node's payloads begin: it hears them too, and skips them unparsed. */
  readonly #own = JSON.stringify({ node: this.#node }).slice(0, -1)
  /** Other nodes, by id, and when each was last heard (ms since the epoch). */
  readonly #peers = new Map<string, number>()
  /** Events announced and not yet told. */
  readonly #untold: TelemetryEvent[] = []
  /** Until when others are held to listen without having been heard (other listening connections found at the start). */
  #othersFoundUntil = 0
  #listener: pg.Client | undefined
  #relisten: NodeJS.Timeout | undefined
  #greetings: NodeJS.Timeout | undefined
  #closed = false

  constructor (config: pg.ClientConfig, notify: (payloads: string[]) => Promise<void>) {
    this.#config = config
    this.#notify = notify
  }

  /** Tell the other nodes `events`, if any listens. One telling at a time; events announced meanwhile go together in the next. */
  async announce (events: readonly TelemetryEvent[]): Promise<void> {
    if (!this.#othersListen()) return
    this.#untold.push(...events)
    await this.#tell()
  }

  readonly #tell = coalesced(async () => {
    const payloads = this.#payloads(this.#untold.splice(0))
    if (payloads.length > 0) await this.#notify(payloads)
  })

  /** LISTEN on a connection of its own, greet the other nodes; when the connection is lost, make it again every second until it is back. */
  async listen (heard: (events: TelemetryEvent[]) => void): Promise<void> {
    const attempt = async (): Promise<void> => {
      const client = new pg.Client({ ...this.#config, application_name: LISTENER_NAME })
      client.on('error', () => {})
      client.on('notification', ({ payload }) => { this.#heard(payload, heard) })
      client.on('end', () => {
        if (this.#listener === client) this.#listener = undefined
        again()
      })
      this.#listener = client
      await client.connect()
      await client.query(`listen ${EVENTS_CHANNEL}`)
      const [{ others }] = (await client.query<{ others: number }>(
        'select count(*)::int as others from pg_stat_activity where datname = current_database() and application_name = $1 and pid <> pg_backend_pid()', [LISTENER_NAME])).rows
      if (others > 0) this.#othersFoundUntil = Date.now() + PEER_EXPIRY_MS
      this.#greet()
    }
    const again = (): void => {
      if (this.#closed || this.#relisten !== undefined) return
      this.#relisten = setTimeout(() => {
        this.#relisten = undefined
        attempt().catch(() => { void this.#listener?.end().catch(() => {}) })
      }, RELISTEN_MS)
      this.#relisten.unref()
    }
    await attempt()
    this.#greetings ??= setInterval(() => { this.#greet() }, HELLO_INTERVAL_MS).unref()
  }

  async close (): Promise<void> {
    this.#closed = true
    clearTimeout(this.#relisten)
    clearInterval(this.#greetings)
    await this.#listener?.end().catch(() => {})
  }

  #heard (payload: string | undefined, heard: (events: TelemetryEvent[]) => void): void {
    if (payload === undefined || payload.startsWith(this.#own)) return
    let message: Message
    try {
      message = JSON.parse(payload) as Message
    } catch {
      return
    }
    if (typeof message.node !== 'string') return
    const known = this.#peers.has(message.node)
    this.#peers.set(message.node, Date.now())
    // A node new to this one hears back at once, so that it tells this one its events from now on.
    if (!known) this.#greet()
    if (Array.isArray(message.events)) heard(message.events as TelemetryEvent[])
  }

  #greet (): void {
    this.#notify([JSON.stringify({ node: this.#node, hello: true })]).catch(() => {})
  }

  #othersListen (): boolean {
    const now = Date.now()
    if (now < this.#othersFoundUntil) return true
    for (const [node, at] of this.#peers) {
      if (now - at <= PEER_EXPIRY_MS) return true
      this.#peers.delete(node)
    }
    return false
  }

  /** `events` as payloads of this node, each at most NOTIFY_BYTES of JSON. */
  #payloads (events: readonly TelemetryEvent[]): string[] {
    const payloads: string[] = []
    let batch: TelemetryEvent[] = []
    let bytes = 0
    const send = (): void => {
      if (batch.length > 0) payloads.push(JSON.stringify({ node: this.#node, events: batch }))
      batch = []
      bytes = 0
    }
    for (const event of events) {
      const size = JSON.stringify(event).length + 1
      if (bytes + size > NOTIFY_BYTES) send()
      batch.push(event)
      bytes += size
    }
    send()
    return payloads
  }
}
