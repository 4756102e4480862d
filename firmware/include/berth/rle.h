//! @file rle.h
//! The run-length code of docs/rle.md: zigzag-varint run headers, repeats of 3 or more equal bytes.
//! Deterministic: every implementation emits the same bytes for the same input. Built with
//! BERTH_COMPRESSION only.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

#if BERTH_COMPRESSION

//! Most bytes berth_rle_encode writes for `n` input bytes.
#define BERTH_RLE_MAX(n) ((n) + 1 + (n) / 64 + (n) / 1048576)

//! Encode `in` into `out`; returns the encoded length, or 0 when `capacity` is too small.
size_t berth_rle_encode(const uint8_t *in, size_t n, uint8_t *out, size_t capacity);

//! Decode into `out`; returns the decoded length, or -1 for a malformed stream or too little space.
long berth_rle_decode(const uint8_t *in, size_t n, uint8_t *out, size_t capacity);
#endif
