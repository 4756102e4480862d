// The optional generative provider: the OpenAI-compatible chat completions API that Ollama, vLLM and
// llama.cpp's server speak. Bounded: one time-out per call covering its wait for a slot and the
// request, at most `concurrency` requests at once and a short queue; every failure is a 503 naming
// the provider and what went wrong, or, with `fallback`, a note on the call and the local engine's answer.
import { AsyncLocalStorage } from 'node:async_hooks'
import { Unavailable, messageOf } from '../../../kernel/index.js'
import { CAMPAIGN_CODES } from '../errors.js'

export interface GeneratorSettings {
  /** Base URL of the API, up to and including `/v1` (`http://127.0.0.1:11434/v1` for Ollama). */
  url: string
  model: string
  /** Bearer key; empty sends none. */
  apiKey: string
  /** Longest a call waits for its answer, its wait for a free slot included. */
  timeoutMs: number
  concurrency: number
  /** When the provider fails, answer from the local engine with a note instead of a 503. */
  fallback: boolean
}

export interface ChatMessage { role: 'system' | 'user' | 'assistant', content: string }

/** Requests that may wait for a free slot, per slot, before new ones are refused. */
const QUEUE_PER_SLOT = 8

/** The notes of one server-function call: why its text comes from the local engine rather than the provider. */
const fallbackNotes = new AsyncLocalStorage<string[]>()

/** Run one call, collecting the fallback notes `Generator.generate` leaves in it. */
export async function collectingFallbackNotes<T> (run: () => Promise<T>): Promise<{ result: T, notes: string[] }> {
  const notes: string[] = []
  const result = await fallbackNotes.run(notes, run)
  return { result, notes }
}

/**
 * The provider's answer to the messages (built only when there is a provider) with its name as the
 * result's engine; undefined without a provider, or when it failed and falls back to the local engine.
 */
export async function generated (generator: Generator | undefined, messages: () => ChatMessage[], maxTokens?: number): Promise<{ text: string, engine: string } | undefined> {
  if (generator === undefined) return undefined
  const text = await generator.generate(messages(), maxTokens)
  return text === undefined ? undefined : { text, engine: generator.name }
}

export class Generator {
  readonly name: string
  readonly #settings: GeneratorSettings
  readonly #where: string
  #running = 0
  readonly #waiting: Array<() => void> = []

  constructor (settings: GeneratorSettings) {
    this.#settings = { ...settings, url: settings.url.replace(/\/+$/, '') }
    this.#where = `the generative provider at ${this.#settings.url}`
    this.name = `generative (${settings.model} at ${new URL(settings.url).host})`
  }

  /**
   * The assistant's answer to `messages`, or, when the provider fails and `fallback` is on, undefined
   * (the caller answers from the local engine) with a note for the call; without `fallback` the 503.
   */
  async generate (messages: ChatMessage[], maxTokens = 600): Promise<string | undefined> {
    try {
      return await this.#complete(messages, maxTokens)
    } catch (err) {
      if (!this.#settings.fallback || !(err instanceof Unavailable)) throw err
      const note = `${err.message}; this answer is the local engine's.`
      const notes = fallbackNotes.getStore()
      if (notes !== undefined && !notes.includes(note)) notes.push(note)
      return undefined
    }
  }

  /** The assistant's answer to `messages` within the time-out (the wait for a slot included); a 503 otherwise. */
  async #complete (messages: ChatMessage[], maxTokens: number): Promise<string> {
    const deadline = Date.now() + this.#settings.timeoutMs
    await this.#slot(deadline)
    try {
      return await this.#request(messages, maxTokens, deadline)
    } finally {
      const next = this.#waiting.shift()
      if (next === undefined) this.#running--
      else next()
    }
  }

  #timedOut (waited: number): Unavailable {
    const queued = waited >= 50 ? ` (${(waited / 1000).toFixed(1)} s of it waiting for a free slot)` : ''
    return new Unavailable(`${this.#where} did not answer within ${this.#settings.timeoutMs / 1000} s${queued}`, { code: CAMPAIGN_CODES.GENERATOR_UNAVAILABLE })
  }

  /** Take a slot, waiting in the queue until the deadline at the latest (a finishing call hands its slot to the first waiting). */
  async #slot (deadline: number): Promise<void> {
    if (this.#running < this.#settings.concurrency) {
      this.#running++
      return
    }
    if (this.#waiting.length >= this.#settings.concurrency * QUEUE_PER_SLOT) {
      throw new Unavailable(`${this.#where} is busy: ${this.#waiting.length} requests are waiting; try again shortly`, { code: CAMPAIGN_CODES.GENERATOR_UNAVAILABLE })
    }
    const queuedAt = Date.now()
    await new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(wake), 1)
        reject(this.#timedOut(Date.now() - queuedAt))
      }, Math.max(0, deadline - queuedAt))
      this.#waiting.push(wake)
    })
  }

  async #request (messages: ChatMessage[], maxTokens: number, deadline: number): Promise<string> {
    const { url, model, apiKey, timeoutMs } = this.#settings
    const where = this.#where
    const waited = timeoutMs - (deadline - Date.now())
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()))
    const timedOut = (err: unknown): boolean => err instanceof DOMException && err.name === 'TimeoutError'
    let response: Response
    try {
      response = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey !== '' ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({ model, messages, max_tokens: maxTokens, temperature: 0.2, stream: false }),
        signal
      })
    } catch (err) {
      throw timedOut(err) ? this.#timedOut(waited) : new Unavailable(`${where} cannot be reached: ${messageOf((err as Error).cause ?? err)}`, { code: CAMPAIGN_CODES.GENERATOR_UNAVAILABLE })
    }
    let body: unknown
    try {
      body = await response.json()
    } catch (err) {
      throw timedOut(err) ? this.#timedOut(waited) : new Unavailable(`${where} answered ${response.status} with a body that is not JSON`, { code: CAMPAIGN_CODES.GENERATOR_UNAVAILABLE })
    }
    if (!response.ok) {
      const detail = (body as { error?: { message?: unknown } | string }).error
      const message = typeof detail === 'string' ? detail : typeof detail?.message === 'string' ? detail.message : ''
      throw new Unavailable(`${where} answered ${response.status}${message !== '' ? `: ${message}` : ''}`, { code: CAMPAIGN_CODES.GENERATOR_UNAVAILABLE })
    }
    const content = (body as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content
    if (typeof content !== 'string' || content.trim() === '') throw new Unavailable(`${where} answered without a message`, { code: CAMPAIGN_CODES.GENERATOR_UNAVAILABLE })
    return content.trim()
  }
}
