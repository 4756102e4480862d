// Addresses to `<function> at <file>:<line>` with arm-none-eabi-addr2line (-f -C), several addresses
// in one run, under a timeout; at most `concurrency` runs at once, results cached per build and address.
import { execFile } from 'node:child_process'

export interface Resolution {
  /** `<function> at <file>:<line>`, or undefined when the address is not in the image. */
  symbol: string | undefined
}

export class ToolUnavailable extends Error {}

export class Addr2line {
  readonly #tool: string
  readonly #timeoutMs: number
  readonly #cache = new Map<string, string | undefined>()
  readonly #cacheLimit: number
  #running = 0
  readonly #waiting: Array<() => void> = []
  readonly #concurrency: number

  constructor (options: { tool: string, timeoutMs: number, concurrency: number, cacheEntries: number }) {
    this.#tool = options.tool
    this.#timeoutMs = options.timeoutMs
    this.#concurrency = options.concurrency
    this.#cacheLimit = options.cacheEntries
  }

  /** Resolve `addresses` in the image `elf` of build `buildId`. */
  async resolve (buildId: string, elf: string, addresses: readonly number[]): Promise<Array<string | undefined>> {
    const missing = [...new Set(addresses.filter(a => !this.#cache.has(`${buildId}:${a}`)))]
    if (missing.length > 0) {
      const found = await this.#limited(async () => await this.#run(elf, missing))
      missing.forEach((address, i) => { this.#remember(`${buildId}:${address}`, found[i]) })
    }
    return addresses.map(a => this.#cache.get(`${buildId}:${a}`))
  }

  #remember (key: string, value: string | undefined): void {
    if (this.#cache.size >= this.#cacheLimit) this.#cache.delete(this.#cache.keys().next().value as string)
    this.#cache.set(key, value)
  }

  async #limited<T> (work: () => Promise<T>): Promise<T> {
    while (this.#running >= this.#concurrency) await new Promise<void>(resolve => this.#waiting.push(resolve))
    this.#running++
    try {
      return await work()
    } finally {
      this.#running--
      this.#waiting.shift()?.()
    }
  }

  async #run (elf: string, addresses: readonly number[]): Promise<Array<string | undefined>> {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(this.#tool, ['-f', '-C', '-e', elf, ...addresses.map(a => `0x${a.toString(16)}`)], { timeout: this.#timeoutMs, killSignal: 'SIGKILL' }, (err, out) => {
        if (err === null) resolve(out)
        else if ((err as NodeJS.ErrnoException).code === 'ENOENT') reject(new ToolUnavailable(`${this.#tool} is not installed`))
        else if (err.killed) reject(new ToolUnavailable(`${this.#tool} took longer than ${this.#timeoutMs / 1000} s`))
        else reject(new ToolUnavailable(`${this.#tool} failed: ${err.message.split('\n')[0]}`))
      })
    })
    const lines = stdout.split('\n')
    return addresses.map((_address, i) => {
      const fn = lines[2 * i] ?? '??'
      const location = (lines[2 * i + 1] ?? '??:0').replace(/ \(discriminator \d+\)$/, '')
      return fn === '??' || location.startsWith('??') ? undefined : `${fn} at ${location}`
    })
  }
}
