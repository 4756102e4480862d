//! @file hex.c
//! Hex strings to bytes, for the host test programs.
#include "hex.h"

#include <stdio.h>

size_t unhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  for (; hex[0] && hex[1]; hex += 2) {
    unsigned byte;
    sscanf(hex, "%2x", &byte);
    out[n++] = (uint8_t)byte;
  }
  return n;
}
