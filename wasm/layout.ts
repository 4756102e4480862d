// Integer constants shared by the AssemblyScript module (wasm/assembly) and the TypeScript side.
// Compiled by both asc and tsc, so it may only hold plain `export const NAME = <integer literal>`.

// Frame format (docs/chunk-format.md, "Frame").
export const FRAME_MAGIC_0 = 0x42
export const FRAME_MAGIC_1 = 0x54
export const FRAME_VERSION_1 = 1
export const FRAME_VERSION = 2
export const FRAME_HEADER_SIZE = 22
export const FRAME_CRC_SIZE = 4
export const FRAME_MAX_PAYLOAD = 65535
export const FRAME_TYPE_MIN = 1
export const FRAME_TYPE_MAX = 6
export const FRAME_FLAGS_KNOWN_V1 = 0x07
export const FRAME_FLAGS_KNOWN = 0x0f
export const FRAME_FLAG_RETRANSMITTED = 0x08
export const FRAME_MAX_RECORDS = 65536

// One parse record = RECORD_WORDS little-endian u32 words, at these word indices.
export const RECORD_WORDS = 9
export const REC_STATUS = 0
export const REC_START = 1
export const REC_END = 2
export const REC_PAYLOAD_OFFSET = 3
export const REC_PAYLOAD_LENGTH = 4
export const REC_HEADER = 5
export const REC_SEQUENCE = 6
export const REC_DEVICE_LO = 7
export const REC_DEVICE_HI = 8

// Record status codes.
export const FRAME_OK = 0
export const FRAME_BAD_MAGIC = 1
export const FRAME_UNSUPPORTED_VERSION = 2
export const FRAME_UNKNOWN_TYPE = 3
export const FRAME_RESERVED_BITS = 4
export const FRAME_BAD_FRAGMENT = 5
export const FRAME_TRUNCATED = 6
export const FRAME_BAD_CRC = 7

// RLE format (docs/rle.md).
export const RLE_MAX_VARINT_BYTES = 3
export const RLE_MAX_LITERAL = 1048576
export const RLE_MAX_REPEAT = 1048575
export const RLE_MIN_REPEAT = 3

// RLE decoder results below zero.
export const RLE_ERR_TRUNCATED = -1
export const RLE_ERR_ZERO_HEADER = -2
export const RLE_ERR_VARINT = -3
export const RLE_ERR_LIMIT = -4
export const RLE_ERR_MEMORY = -5

// CCM engine results (the engine is generic in tag and nonce length; the public API fixes them).
export const CCM_OK = 0
export const CCM_AUTH_FAILED = 1
export const CCM_BAD_PARAMS = 2
