// Polling with a deadline: the only way tests wait for something to happen (never a bare sleep).
export interface PollOptions {
  /** Give up after this many milliseconds. */
  timeout?: number
  /** Wait this long between attempts. */
  interval?: number
  /** Said in the error when the deadline passes. */
  what?: string
}

/** Call `probe` until it returns a value other than undefined/false, or throw at the deadline. */
export async function pollUntil<T> (probe: () => T | undefined | false | Promise<T | undefined | false>, options: PollOptions = {}): Promise<T> {
  const { timeout = 10_000, interval = 25, what = 'condition' } = options
  const deadline = Date.now() + timeout
  let lastError: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined && value !== false) return value
    } catch (err) {
      lastError = err
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : ''
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${detail}`)
    }
    await new Promise(resolve => setTimeout(resolve, interval))
  }
}
