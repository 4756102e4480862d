//! @file crc32.c
//! CRC-32 bit by bit: no table, a few hundred bytes of code, fast enough for chunks of a few KiB.
#include "berth/crc32.h"

uint32_t berth_crc32(uint32_t crc, const uint8_t *data, size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}
