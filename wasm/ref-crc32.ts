// Reference CRC-32 (IEEE 802.3, reflected poly 0xEDB88320, init/xorout 0xFFFFFFFF), one table lookup per byte.

const TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1
  return c
})

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (let i = 0; i < bytes.length; i++) c = (c >>> 8) ^ TABLE[(c ^ bytes[i]) & 0xff]
  return (c ^ 0xffffffff) >>> 0
}
