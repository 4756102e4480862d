// An answer's head passed on as it was received, for the proxy's fast lane: when its bytes are the
// head written the usual way (`HTTP/1.1 200 OK`, then `Name: value` lines), the lines that must not
// cross the proxy are cut out of the read buffer in place and the rest goes on byte for byte, with
// the body behind it in one write; no text is built for it. Anything written another way is left
// alone (the caller writes the head anew from the parsed headers).
import { crosses, namedByConnection } from '../headers.js'
import type { ParsedHead } from './llhttp.js'

const VERSION = Buffer.from('HTTP/1.1 ')
const CR = 13
const LF = 10
const COLON = 58

/** Offsets of the lines to cut, as start/end pairs (reused from one answer to the next). */
const cuts: number[] = []

/** Whether `bytes` hold, at `at`, a line of `length` bytes that is one header line named `name`. */
function isHeaderLine (bytes: Buffer, at: number, length: number, name: string): boolean {
  const end = at + length
  if (bytes[at - 2] !== CR || bytes[at - 1] !== LF || bytes[at + name.length] !== COLON || bytes[end - 2] !== CR || bytes[end - 1] !== LF) return false
  for (let i = 0; i < name.length; i++) {
    if (bytes[at + i] !== name.charCodeAt(i)) return false
  }
  // One line: no other line ends inside it.
  for (let i = at + name.length + 1; i < end - 1; i++) {
    if (bytes[i] === LF) return false
  }
  return true
}

/** Whether `bytes` hold `expected` at `at`. */
function holds (bytes: Buffer, at: number, expected: Buffer): boolean {
  for (let i = 0; i < expected.length; i++) {
    if (bytes[at + i] !== expected[i]) return false
  }
  return true
}

/**
 * Cut the hop-by-hop lines out of the response head that llhttp parsed as `head` from
 * `bytes[start, end)`, moving what comes before each of them up; the head then starts at the offset
 * returned and still ends at `end`. -1, with nothing changed, when the bytes are not that head
 * written the usual way.
 */
export function cutHopByHop (bytes: Buffer, start: number, end: number, head: ParsedHead): number {
  const headers = head.headers
  if (head.versionMinor !== 1 || !holds(bytes, start, VERSION)) return -1
  let at = start + VERSION.length + 4 + head.statusMessage.length + 2
  if (bytes[at - 2] !== CR || bytes[at - 1] !== LF) return -1
  const named = namedByConnection(headers)
  let count = 0
  for (let i = 0; i < headers.length; i += 2) {
    const length = headers[i].length + headers[i + 1].length + 4
    if (!crosses(headers[i], false, named)) {
      if (!isHeaderLine(bytes, at, length, headers[i])) return -1
      cuts[count++] = at
      cuts[count++] = at + length
    }
    at += length
  }
  if (at + 2 !== end || bytes[at] !== CR || bytes[at + 1] !== LF) return -1
  // From the last cut back: what lies before a cut moves up by the length of all cuts after it.
  let shift = 0
  for (let j = count - 2; j >= 0; j -= 2) {
    shift += cuts[j + 1] - cuts[j]
    const kept = j === 0 ? start : cuts[j - 1]
    bytes.copyWithin(kept + shift, kept, cuts[j])
  }
  return start + shift
}
