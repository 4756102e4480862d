//! @file ccm.h
//! AES-128-CCM as the chunk format uses it (RFC 3610, M = 8 tag bytes, L = 2, 13-byte nonce). Built
//! with BERTH_ENCRYPTION only.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

#if BERTH_ENCRYPTION

#define BERTH_CCM_TAG 8
#define BERTH_CCM_NONCE 13

//! Seal `n` bytes of `plain` into `out` (n + 8 bytes: ciphertext, then tag). `out` may equal `plain`.
void berth_ccm_seal(const uint8_t key[16], const uint8_t nonce[13], const uint8_t *aad, size_t aad_len,
                    const uint8_t *plain, size_t n, uint8_t *out);

//! Open `n` sealed bytes (ciphertext and tag) into `out` (n - 8 bytes); false when the tag does not match.
bool berth_ccm_open(const uint8_t key[16], const uint8_t nonce[13], const uint8_t *aad, size_t aad_len,
                    const uint8_t *sealed, size_t n, uint8_t *out);
#endif
