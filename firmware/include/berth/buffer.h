//! @file buffer.h
//! A bounded byte writer. Over caller-owned memory, every put checks the space left and a full writer
//! only records that it overflowed, so encoders need no checks of their own. With a sink, bytes go
//! straight on (to a transport) instead; with neither, the writer only counts them.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct berth_buf berth_buf_t;

struct berth_buf {
  uint8_t *data;
  size_t capacity;
  size_t length;
  bool overflow;
  //! When set, bytes are handed here instead of stored.
  void (*sink)(berth_buf_t *b, const uint8_t *bytes, size_t n);
  void *sink_context;
};

static inline berth_buf_t berth_buf(uint8_t *data, size_t capacity) {
  berth_buf_t b = { data, capacity, 0, false, 0, 0 };
  return b;
}

//! A writer that stores nothing and only counts.
static inline berth_buf_t berth_buf_counter(void) {
  berth_buf_t b = { 0, (size_t)-1, 0, false, 0, 0 };
  return b;
}

void berth_buf_put(berth_buf_t *b, const void *bytes, size_t n);
void berth_buf_byte(berth_buf_t *b, uint8_t byte);
void berth_buf_u16le(berth_buf_t *b, uint16_t value);
void berth_buf_u32le(berth_buf_t *b, uint32_t value);
//! Unsigned LEB128: 7 bits per byte, least significant group first.
void berth_buf_varint(berth_buf_t *b, uint64_t value);
