//! @file rle.c
//! RLE encoder and decoder (docs/rle.md), in one pass with no lookahead beyond three bytes.
#include "berth/rle.h"

#if BERTH_COMPRESSION
#include "berth/buffer.h"

#define MAX_LITERAL 1048576u
#define MAX_REPEAT 1048575u

static void literal(berth_buf_t *out, const uint8_t *start, size_t n) {
  while (n > 0) {
    size_t take = n > MAX_LITERAL ? MAX_LITERAL : n;
    berth_buf_varint(out, (uint64_t)take * 2 - 1); // zigzag(-take)
    berth_buf_put(out, start, take);
    start += take;
    n -= take;
  }
}

size_t berth_rle_encode(const uint8_t *in, size_t n, uint8_t *out, size_t capacity) {
  berth_buf_t b = berth_buf(out, capacity);
  size_t pending = 0; // start of the literal not yet written
  size_t i = 0;
  while (i < n) {
    size_t run = 1;
    while (i + run < n && in[i + run] == in[i]) run++;
    if (run < 3) {
      i += run;
      continue;
    }
    literal(&b, in + pending, i - pending);
    while (run >= 3) {
      size_t take = run > MAX_REPEAT ? MAX_REPEAT : run;
      berth_buf_varint(&b, (uint64_t)take * 2); // zigzag(+take)
      berth_buf_byte(&b, in[i]);
      i += take;
      run -= take;
    }
    pending = i; // a remainder shorter than 3 joins the next literal
    i += run;
  }
  literal(&b, in + pending, n - pending);
  return b.overflow ? 0 : b.length;
}

long berth_rle_decode(const uint8_t *in, size_t n, uint8_t *out, size_t capacity) {
  size_t at = 0;
  size_t written = 0;
  while (at < n) {
    uint32_t z = 0;
    int shift = 0;
    uint8_t byte;
    do {
      if (at >= n || shift > 14) return -1;
      byte = in[at++];
      z |= (uint32_t)(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift > 7 && byte == 0) return -1; // not minimal
    if (z == 0) return -1;
    if (z & 1) {
      size_t count = (z + 1) / 2;
      if (count > n - at || count > capacity - written) return -1;
      for (size_t k = 0; k < count; k++) out[written++] = in[at++];
    } else {
      size_t count = z / 2;
      if (at >= n || count > capacity - written) return -1;
      for (size_t k = 0; k < count; k++) out[written++] = in[at];
      at++;
    }
  }
  return (long)written;
}
#endif
