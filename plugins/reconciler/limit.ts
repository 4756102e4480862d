// Bounded parallelism: at most `max` of the functions handed to the limiter run at once.
export type Limiter = <T>(fn: () => Promise<T>) => Promise<T>

export function limiter (max: number): Limiter {
  let running = 0
  const waiting: Array<() => void> = []
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (running >= max) await new Promise<void>(resolve => waiting.push(resolve))
    running++
    try {
      return await fn()
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}
