// Scratch area in linear memory: one region after the static data, reused by every call and
// grown with memory.grow when an input needs more room. Nothing here is ever allocated or freed.

/** First byte of the scratch area (16-byte aligned, after static data and tables). */
export const SCRATCH_BASE: usize = (__heap_base + 15) & ~(<usize>15)

/** Bytes currently addressable (4 GiB at most, hence u64). */
export function memoryEnd(): u64 {
  return (<u64>memory.size()) << 16
}

/** Grows memory so that [0, end) is addressable; false if that exceeds 4 GiB or the engine refuses. */
export function ensureEnd(end: u64): bool {
  const have = memoryEnd()
  if (end <= have) return true
  if (end > <u64>0x100000000) return false
  return memory.grow(<i32>((end - have + 0xffff) >>> 16)) >= 0
}

/** Makes `size` scratch bytes available and returns the scratch base, or 0 when memory cannot grow. */
export function scratch(size: u32): usize {
  return ensureEnd(<u64>SCRATCH_BASE + <u64>size) ? SCRATCH_BASE : 0
}
