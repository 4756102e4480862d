// Regular time axes for the charts: the buckets of a series are only those with data, so a chart
// drawn from them alone would join the points on either side of an empty stretch. Here every step
// from the first bucket to the last gets a slot, empty where no bucket fell: a gap stays a gap.

/** Seconds per bucket of the server functions' series (`bucket`: hour, day, week; UTC). */
export const STEP_SECONDS = { hour: 3_600, day: 86_400, week: 604_800 } as const

export interface Slot<T> {
  /** Seconds since the epoch. */
  at: number
  /** The bucket starting there, or undefined: no data in that step. */
  item: T | undefined
}

/** A slot per step from the first item's time to the last (items in time order, on the step's grid). */
export function regularSlots<T> (items: readonly T[], timeOf: (item: T) => string, stepSeconds: number): Array<Slot<T>> {
  if (items.length === 0) return []
  const seconds = items.map(item => Date.parse(timeOf(item)) / 1000)
  const first = seconds[0]
  const slots: Array<Slot<T>> = Array.from({ length: Math.round((seconds[seconds.length - 1] - first) / stepSeconds) + 1 }, (_, i) => ({ at: first + i * stepSeconds, item: undefined }))
  items.forEach((item, i) => { slots[Math.round((seconds[i] - first) / stepSeconds)].item = item })
  return slots
}

/** Indices of the values with no value on either side: alone between gaps, a line cannot show them, so they are drawn as points. */
export function isolated (values: ReadonlyArray<number | null>): number[] {
  return values.flatMap((value, i) => value !== null && (values[i - 1] ?? null) === null && (values[i + 1] ?? null) === null ? [i] : [])
}
