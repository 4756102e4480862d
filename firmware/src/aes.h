//! @file aes.h
//! AES-128 block encryption, internal to the SDK (CCM is the public interface).
#pragma once
#include <stdint.h>

#include "berth/config.h"

#if BERTH_ENCRYPTION

void berth_aes128_expand(const uint8_t key[16], uint8_t round_keys[176]);
void berth_aes128_encrypt(const uint8_t round_keys[176], uint8_t block[16]);
#endif
