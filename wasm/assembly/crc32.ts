// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib) with slicing-by-8 tables.

const POLY: u32 = 0xedb88320
// Eight 256-entry tables: table k maps a byte that is k positions ahead of the CRC register.
const TABLES: usize = memory.data(8 * 256 * 4, 16)

function initTables(): void {
  for (let i: u32 = 0; i < 256; i++) {
    let c = i
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1
    store<u32>(TABLES + (<usize>i << 2), c)
  }
  for (let t: usize = 1; t < 8; t++) {
    for (let i: usize = 0; i < 256; i++) {
      const prev = load<u32>(TABLES + ((t - 1) << 10) + (i << 2))
      store<u32>(TABLES + (t << 10) + (i << 2), (prev >>> 8) ^ load<u32>(TABLES + ((<usize>(prev & 0xff)) << 2)))
    }
  }
}
initTables()

// Table k starts at TABLES + 1024·k; lookups take a pre-scaled byte index and a constant load offset.
// @ts-ignore: decorator
@inline function byteIndex(word: u32, shift: u32): usize {
  return <usize>(shift >= 2 ? (word >>> (shift - 2)) & 0x3fc : (word << 2) & 0x3fc)
}

/** CRC-32 of `len` bytes at `ptr`. */
export function crc32(ptr: usize, len: usize): u32 {
  let c: u32 = 0xffffffff
  const end = ptr + len
  while (end - ptr >= 8) {
    const a = load<u32>(ptr) ^ c
    const b = load<u32>(ptr, 4)
    c =
      load<u32>(byteIndex(a, 0), TABLES + 7168) ^ load<u32>(byteIndex(a, 8), TABLES + 6144) ^
      load<u32>(byteIndex(a, 16), TABLES + 5120) ^ load<u32>(byteIndex(a, 24), TABLES + 4096) ^
      load<u32>(byteIndex(b, 0), TABLES + 3072) ^ load<u32>(byteIndex(b, 8), TABLES + 2048) ^
      load<u32>(byteIndex(b, 16), TABLES + 1024) ^ load<u32>(byteIndex(b, 24), TABLES)
    ptr += 8
  }
  while (ptr < end) {
    c = (c >>> 8) ^ load<u32>(byteIndex(c ^ load<u8>(ptr), 0), TABLES)
    ptr++
  }
  return ~c
}
