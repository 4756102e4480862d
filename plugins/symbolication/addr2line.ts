// Addresses to `<function> at <file>:<line>` with arm-none-eabi-addr2line (-f -C), with the functions
// inlined there (-i: innermost first, then the one each was inlined into; -a marks where an address's
// lines start): many addresses per run, under a timeout past which the run's whole process group is
// killed; at most `concurrency` runs at once, results cached per build and address.
import { spawn, type ChildProcess } from 'node:child_process'

/** Addresses per run: a command line of about 11 KB. */
const ADDRESSES_PER_RUN = 1000

export class ToolUnavailable extends Error {}

export class Addr2line {
  readonly #tool: string
  readonly #timeoutMs: number
  readonly #cache = new Map<string, string[] | undefined>()
  readonly #cacheLimit: number
  #running = 0
  readonly #waiting: Array<() => void> = []
  readonly #concurrency: number
  /** Runs under way, each the leader of its own process group. */
  readonly #children = new Set<ChildProcess>()
  #closed = false

  constructor (options: { tool: string, timeoutMs: number, concurrency: number, cacheEntries: number }) {
    this.#tool = options.tool
    this.#timeoutMs = options.timeoutMs
    this.#concurrency = options.concurrency
    this.#cacheLimit = options.cacheEntries
  }

  /**
   * Resolve `addresses` in the image `elf` of build `buildId`: each the function it is in and, when that
   * was inlined, the functions it was inlined into, outwards; undefined for an address not in the image.
   */
  async resolve (buildId: string, elf: string, addresses: readonly number[]): Promise<Array<string[] | undefined>> {
    // Cached answers are taken now: other builds' runs may evict them while this one's runs go on.
    const known = new Map<number, string[] | undefined>()
    for (const address of addresses) {
      const key = `${buildId}:${address}`
      if (this.#cache.has(key)) known.set(address, this.#cache.get(key))
    }
    const missing = [...new Set(addresses.filter(a => !known.has(a)))]
    const runs: number[][] = []
    for (let i = 0; i < missing.length; i += ADDRESSES_PER_RUN) runs.push(missing.slice(i, i + ADDRESSES_PER_RUN))
    const found = await Promise.all(runs.map(async run => await this.#limited(async () => await this.#run(elf, run))))
    runs.forEach((run, r) => {
      run.forEach((address, i) => {
        known.set(address, found[r][i])
        this.#remember(`${buildId}:${address}`, found[r][i])
      })
    })
    return addresses.map(a => known.get(a))
  }

  /** Kill the runs under way (their callers get ToolUnavailable) and refuse new ones: the server stops. */
  close (): void {
    this.#closed = true
    for (const child of this.#children) killGroup(child)
  }

  #remember (key: string, value: string[] | undefined): void {
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

  async #run (elf: string, addresses: readonly number[]): Promise<Array<string[] | undefined>> {
    if (this.#closed) throw new ToolUnavailable('the server is stopping')
    const stdout = await new Promise<string>((resolve, reject) => {
      // detached: the run leads a process group of its own, so a timeout kills whatever it started too.
      const child = spawn(this.#tool, ['-f', '-C', '-i', '-a', '-e', elf, ...addresses.map(a => `0x${a.toString(16)}`)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
      this.#children.add(child)
      let out = ''
      let err = ''
      child.stdout?.setEncoding('utf8').on('data', (text: string) => { out += text })
      child.stderr?.setEncoding('utf8').on('data', (text: string) => { err += text })
      /** The first outcome counts (a killed run still closes, later). */
      const settle = (error: ToolUnavailable | undefined): void => {
        if (!this.#children.delete(child)) return
        clearTimeout(timer)
        if (error === undefined) resolve(out)
        else reject(error)
      }
      const timer = setTimeout(() => {
        killGroup(child)
        // Not waiting for its output to close: a process that left the group could hold it open.
        child.stdout?.destroy()
        child.stderr?.destroy()
        settle(new ToolUnavailable(`${this.#tool} took longer than ${this.#timeoutMs / 1000} s`))
      }, this.#timeoutMs)
      child.once('error', (error: NodeJS.ErrnoException) => {
        settle(new ToolUnavailable(error.code === 'ENOENT' ? `${this.#tool} is not installed` : `${this.#tool} failed: ${error.message}`))
      })
      child.once('close', (code, signal) => {
        if (code === 0) settle(undefined)
        else settle(new ToolUnavailable(`${this.#tool} failed: ${signal !== null ? `killed by ${signal}` : `exit ${code ?? '?'}`}${err === '' ? '' : `: ${err.split('\n')[0]}`}`))
      })
    })
    // Each address: its line (0x...), then a function and its location for each inlining level.
    const answers: string[][] = []
    for (const line of stdout.split('\n')) {
      if (/^0x[0-9a-f]+$/.test(line)) answers.push([])
      else if (line !== '') answers[answers.length - 1]?.push(line)
    }
    return addresses.map((_address, i) => {
      const lines = answers[i] ?? []
      const chain: string[] = []
      for (let at = 0; at + 1 < lines.length; at += 2) {
        const location = lines[at + 1].replace(/ \(discriminator \d+\)$/, '')
        if (lines[at] !== '??' && !location.startsWith('??')) chain.push(`${lines[at]} at ${location}`)
      }
      return chain.length === 0 ? undefined : chain
    })
  }
}

/** SIGKILL to the process group `child` leads (it may have exited already). */
function killGroup (child: ChildProcess): void {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // The group is gone already.
  }
}
