// The optional generative provider: the OpenAI-compatible chat completions API that Ollama, vLLM and
// llama.cpp's server speak. Bounded: a time-out per request, at most `concurrency` requests at once
// and a short queue; every failure is a 503 naming the provider and what went wrong.
import { Unavailable, messageOf } from '../../../kernel/index.js'

export interface GeneratorSettings {
  /** Base URL of the API, up to and including `/v1` (`http://127.0.0.1:11434/v1` for Ollama). */
  url: string
  model: string
  /** Bearer key; empty sends none. */
  apiKey: string
  timeoutMs: number
  concurrency: number
}

export interface ChatMessage { role: 'system' | 'user' | 'assistant', content: string }

/** Requests that may wait for a free slot, per slot, before new ones are refused. */
const QUEUE_PER_SLOT = 8

export class Generator {
  readonly name: string
  readonly #settings: GeneratorSettings
  #running = 0
  readonly #waiting: Array<() => void> = []

  constructor (settings: GeneratorSettings) {
    this.#settings = { ...settings, url: settings.url.replace(/\/+$/, '') }
    this.name = `generative (${settings.model} at ${new URL(settings.url).host})`
  }

  /** The assistant's answer to `messages`. */
  async complete (messages: ChatMessage[], maxTokens = 600): Promise<string> {
    await this.#slot()
    try {
      return await this.#request(messages, maxTokens)
    } finally {
      this.#running--
      this.#waiting.shift()?.()
    }
  }

  async #slot (): Promise<void> {
    if (this.#running < this.#settings.concurrency) {
      this.#running++
      return
    }
    if (this.#waiting.length >= this.#settings.concurrency * QUEUE_PER_SLOT) {
      throw new Unavailable(`the generative provider is busy: ${this.#waiting.length} requests are waiting; try again shortly`)
    }
    await new Promise<void>(resolve => { this.#waiting.push(resolve) })
    this.#running++
  }

  async #request (messages: ChatMessage[], maxTokens: number): Promise<string> {
    const { url, model, apiKey, timeoutMs } = this.#settings
    const where = `the generative provider at ${url}`
    let response: Response
    try {
      response = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(apiKey !== '' ? { authorization: `Bearer ${apiKey}` } : {}) },
        body: JSON.stringify({ model, messages, max_tokens: maxTokens, temperature: 0.2, stream: false }),
        signal: AbortSignal.timeout(timeoutMs)
      })
    } catch (err) {
      const timedOut = err instanceof DOMException && err.name === 'TimeoutError'
      throw new Unavailable(timedOut ? `${where} did not answer within ${timeoutMs / 1000} s` : `${where} cannot be reached: ${messageOf((err as Error).cause ?? err)}`)
    }
    let body: unknown
    try {
      body = await response.json()
    } catch {
      throw new Unavailable(`${where} answered ${response.status} with a body that is not JSON`)
    }
    if (!response.ok) {
      const detail = (body as { error?: { message?: unknown } | string }).error
      const message = typeof detail === 'string' ? detail : typeof detail?.message === 'string' ? detail.message : ''
      throw new Unavailable(`${where} answered ${response.status}${message !== '' ? `: ${message}` : ''}`)
    }
    const content = (body as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content
    if (typeof content !== 'string' || content.trim() === '') throw new Unavailable(`${where} answered without a message`)
    return content.trim()
  }
}
