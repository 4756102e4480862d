// Idempotency marks: what the server remembers of each stored chunk (device, sequence), and the rule
// that tells a copy of a stored chunk (answered `duplicate`) from a new chunk reusing its sequence
// number (stored). See docs/chunk-format.md, "Idempotency".
import { crc32 } from 'node:zlib'

/** The mark of a stored (device, sequence): when it was last stored and what it held. */
export interface ChunkMark {
  /** Receive time of the latest chunk stored under this sequence, ms since the epoch. */
  at: number
  /** Content digests of the chunks stored under this sequence, newest first, DIGEST_BYTES each. */
  digests: Uint8Array
}

/** Marks written before content digests were kept hold only the receive time. */
export type StoredMark = ChunkMark | number

export const DIGEST_BYTES = 8
/** Digests kept per mark: a sequence reused more often than this forgets its oldest contents. */
const KEPT_DIGESTS = 4

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/** FNV-1a (32 bits) of the type, the flags and the bytes. */
function fnv1a (type: number, flags: number, bytes: Uint8Array): number {
  let h = Math.imul(Math.imul(FNV_OFFSET ^ type, FNV_PRIME) ^ flags, FNV_PRIME)
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME)
  return h >>> 0
}

/**
 * Digest of a chunk's content: its type, its flags (without the retransmission bit, which says how it
 * travelled, not what it holds) and its bytes as sent (sealed and compressed as the device sent them),
 * as CRC-32 and FNV-1a, 32 bits each: two unrelated hashes, so contents that differ collide once in
 * about 2^64, and a change of one byte never does. It is a fingerprint, not a seal: forging a
 * collision needs the device key, which forges chunks outright. Cheap (a third of a microsecond for
 * 60 bytes), as it runs for every chunk.
 */
export function chunkDigest (type: number, flags: number, bytes: Uint8Array): Uint8Array {
  const digest = Buffer.allocUnsafe(DIGEST_BYTES)
  digest.writeUInt32LE(crc32(bytes, crc32(Uint8Array.of(type, flags))), 0)
  digest.writeUInt32LE(fnv1a(type, flags, bytes), 4)
  return digest
}

/**
 * Whether a chunk is a copy of one stored under the same (device, sequence): never when the device says
 * this is its first transmission of that sequence (version 2, retransmission bit clear), since the mark
 * then belongs to an earlier boot; otherwise when its digest is one the mark holds. A mark from before
 * digests were kept cannot tell contents apart and counts every such chunk as a copy, as it always did.
 */
export function isCopy (mark: StoredMark, digest: Uint8Array, firstTransmission: boolean): boolean {
  if (firstTransmission) return false
  if (typeof mark === 'number') return true
  for (let at = 0; at < mark.digests.length; at += DIGEST_BYTES) {
    if (Buffer.compare(mark.digests.subarray(at, at + DIGEST_BYTES), digest) === 0) return true
  }
  return false
}

/** The receive time a mark records. */
export function markTime (mark: StoredMark): number {
  return typeof mark === 'number' ? mark : mark.at
}

/** The mark after storing a chunk of `digest` at `at` under it. */
export function markWith (mark: StoredMark | undefined, digest: Uint8Array, at: number): ChunkMark {
  const earlier = mark === undefined || typeof mark === 'number' ? new Uint8Array(0) : mark.digests
  const kept = earlier.subarray(0, (KEPT_DIGESTS - 1) * DIGEST_BYTES)
  const digests = new Uint8Array(DIGEST_BYTES + kept.length)
  digests.set(digest, 0)
  digests.set(kept, DIGEST_BYTES)
  return { at, digests }
}
