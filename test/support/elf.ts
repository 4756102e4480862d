// ELF files for tests that upload one: the smallest image the telemetry server accepts.
import { createHash } from 'node:crypto'

/** The smallest image POST /ingest/elf accepts: a 32-bit little-endian ARM ELF header, no sections; `tag` makes its SHA-1 (its id) its own. */
export function headerOnlyElf (tag: string): { bytes: Buffer, id: string } {
  const bytes = Buffer.concat([Buffer.alloc(52), Buffer.from(tag)])
  bytes.writeUInt32BE(0x7f454c46, 0)
  bytes[4] = 1
  bytes[5] = 1
  bytes[6] = 1
  bytes.writeUInt16LE(40, 18)
  return { bytes, id: createHash('sha1').update(bytes).digest('hex') }
}
