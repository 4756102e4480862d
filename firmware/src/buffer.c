//! @file buffer.c
//! The bounded byte writer.
#include "berth/buffer.h"

#include <string.h>

void berth_buf_put(berth_buf_t *b, const void *bytes, size_t n) {
  if (b->overflow || n > b->capacity - b->length) {
    b->overflow = true;
    return;
  }
  if (b->sink != 0) b->sink(b, (const uint8_t *)bytes, n);
  else if (b->data != 0) memcpy(b->data + b->length, bytes, n);
  b->length += n;
}

void berth_buf_byte(berth_buf_t *b, uint8_t byte) {
  berth_buf_put(b, &byte, 1);
}

void berth_buf_u16le(berth_buf_t *b, uint16_t value) {
  const uint8_t bytes[2] = { (uint8_t)value, (uint8_t)(value >> 8) };
  berth_buf_put(b, bytes, 2);
}

void berth_buf_u32le(berth_buf_t *b, uint32_t value) {
  const uint8_t bytes[4] = { (uint8_t)value, (uint8_t)(value >> 8), (uint8_t)(value >> 16), (uint8_t)(value >> 24) };
  berth_buf_put(b, bytes, 4);
}

void berth_buf_varint(berth_buf_t *b, uint64_t value) {
  do {
    uint8_t byte = (uint8_t)(value & 0x7f);
    value >>= 7;
    berth_buf_byte(b, value != 0 ? (uint8_t)(byte | 0x80) : byte);
  } while (value != 0);
}
