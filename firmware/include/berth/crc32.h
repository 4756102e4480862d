//! @file crc32.h
//! CRC-32/IEEE 802.3 (zlib's): reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF.
#pragma once
#include <stddef.h>
#include <stdint.h>

//! Continue a CRC over more bytes; start with `crc = 0`.
uint32_t berth_crc32(uint32_t crc, const uint8_t *data, size_t n);
