// Memory sizes with a unit suffix ("512m", "1.5GiB", "256MB"): powers of 1024, as the container engine counts.
const MEMORY = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?$/i
const POWERS: Record<string, number> = { '': 0, k: 1, m: 2, g: 3, t: 4 }

/** Bytes, or undefined when the text is not a size. */
export function parseMemory (text: string): number | undefined {
  const match = MEMORY.exec(text.trim())
  if (match === null || (match[2] === '' && match[3] !== undefined && match[3].toLowerCase() !== 'b')) return undefined
  return Math.round(Number(match[1]) * 1024 ** POWERS[match[2].toLowerCase()])
}
