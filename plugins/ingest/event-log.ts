// The live event stream behind GET /events/stream: every telemetry event gets an increasing id and is
// kept in a bounded ring so a client reconnecting with Last-Event-ID receives what it missed.
import type { TelemetryEvent } from './apply.js'

export interface LoggedEvent {
  id: number
  event: TelemetryEvent
}

export type Subscriber = (entry: LoggedEvent) => void

export class EventLog {
  readonly #ring: LoggedEvent[] = []
  readonly #capacity: number
  readonly #subscribers = new Set<Subscriber>()
  #nextId = 1

  constructor (capacity = 1000) {
    this.#capacity = capacity
  }

  publish (event: TelemetryEvent): void {
    const entry = { id: this.#nextId++, event }
    this.#ring.push(entry)
    if (this.#ring.length > this.#capacity) this.#ring.shift()
    for (const subscriber of this.#subscribers) subscriber(entry)
  }

  /**
   * Events after `lastId` still in the ring, and whether some were already dropped (the client then
   * gets a `reset` event and should reload its view).
   */
  since (lastId: number): { events: LoggedEvent[], gap: boolean } {
    const oldest = this.#ring[0]?.id ?? this.#nextId
    return { events: this.#ring.filter(e => e.id > lastId), gap: lastId + 1 < oldest && lastId < this.#nextId - 1 }
  }

  subscribe (subscriber: Subscriber): () => void {
    this.#subscribers.add(subscriber)
    return () => { this.#subscribers.delete(subscriber) }
  }

  get subscribers (): number {
    return this.#subscribers.size
  }
}
