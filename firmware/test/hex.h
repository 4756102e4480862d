//! @file hex.h
//! Hex strings to bytes, for the host test programs.
#pragma once
#include <stddef.h>
#include <stdint.h>

//! Decode pairs of hex digits from `hex` into `out`; returns the number of bytes written.
size_t unhex(const char *hex, uint8_t *out);
