//! @file sha256.h
//! SHA-256 (FIPS 180-4), fed in pieces: how an OTA image is checked against the digest the server
//! gave before it is reported ready (ports/posix/ota.c). The linker leaves it out of builds that do
//! not call it.
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t state[8];
  uint64_t length; // bytes fed so far
  uint8_t block[64];
  size_t used;     // bytes of `block` filled
} berth_sha256_t;

void berth_sha256_init(berth_sha256_t *sha);
void berth_sha256_update(berth_sha256_t *sha, const uint8_t *bytes, size_t length);
//! The digest of what was fed; `sha` must be initialised again before it is fed more.
void berth_sha256_final(berth_sha256_t *sha, uint8_t digest[32]);
