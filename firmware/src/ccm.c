//! @file ccm.c
//! AES-128-CCM (RFC 3610) with M = 8 and L = 2: CBC-MAC over B0, the associated data and the
//! message, then CTR mode from counter 1 for the message and counter 0 for the tag.
#include "berth/ccm.h"

#if BERTH_ENCRYPTION
#include "aes.h"

typedef struct {
  uint8_t keys[176];
  uint8_t mac[16];
  uint8_t fill; // bytes of the current MAC block taken
} ccm_t;

static void mac_bytes(ccm_t *c, const uint8_t *data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    c->mac[c->fill++] ^= data[i];
    if (c->fill == 16) {
      berth_aes128_encrypt(c->keys, c->mac);
      c->fill = 0;
    }
  }
}

static void mac_pad(ccm_t *c) {
  if (c->fill != 0) {
    berth_aes128_encrypt(c->keys, c->mac);
    c->fill = 0;
  }
}

static void counter_block(const uint8_t nonce[13], uint16_t i, uint8_t block[16]) {
  block[0] = 0x01; // L - 1
  for (int k = 0; k < 13; k++) block[1 + k] = nonce[k];
  block[14] = (uint8_t)(i >> 8);
  block[15] = (uint8_t)i;
}

static void start(ccm_t *c, const uint8_t key[16], const uint8_t nonce[13], const uint8_t *aad, size_t aad_len, size_t n) {
  berth_aes128_expand(key, c->keys);
  c->mac[0] = (uint8_t)((aad_len > 0 ? 0x40 : 0) | (((BERTH_CCM_TAG - 2) / 2) << 3) | 0x01);
  for (int k = 0; k < 13; k++) c->mac[1 + k] = nonce[k];
  c->mac[14] = (uint8_t)(n >> 8);
  c->mac[15] = (uint8_t)n;
  berth_aes128_encrypt(c->keys, c->mac);
  c->fill = 0;
  if (aad_len > 0) {
    const uint8_t length[2] = { (uint8_t)(aad_len >> 8), (uint8_t)aad_len };
    mac_bytes(c, length, 2);
    mac_bytes(c, aad, aad_len);
    mac_pad(c);
  }
}

/** XOR `n` bytes with the key stream from counter 1. */
static void ctr(const ccm_t *c, const uint8_t nonce[13], const uint8_t *in, size_t n, uint8_t *out) {
  uint8_t stream[16];
  for (size_t at = 0; at < n; at += 16) {
    counter_block(nonce, (uint16_t)(at / 16 + 1), stream);
    berth_aes128_encrypt(c->keys, stream);
    for (size_t k = 0; k < 16 && at + k < n; k++) out[at + k] = (uint8_t)(in[at + k] ^ stream[k]);
  }
}

static void tag(ccm_t *c, const uint8_t nonce[13], uint8_t out[BERTH_CCM_TAG]) {
  uint8_t s0[16];
  mac_pad(c);
  counter_block(nonce, 0, s0);
  berth_aes128_encrypt(c->keys, s0);
  for (int k = 0; k < BERTH_CCM_TAG; k++) out[k] = (uint8_t)(c->mac[k] ^ s0[k]);
}

void berth_ccm_seal(const uint8_t key[16], const uint8_t nonce[13], const uint8_t *aad, size_t aad_len,
                    const uint8_t *plain, size_t n, uint8_t *out) {
  ccm_t c;
  start(&c, key, nonce, aad, aad_len, n);
  mac_bytes(&c, plain, n);
  ctr(&c, nonce, plain, n, out);
  tag(&c, nonce, out + n);
}

bool berth_ccm_open(const uint8_t key[16], const uint8_t nonce[13], const uint8_t *aad, size_t aad_len,
                    const uint8_t *sealed, size_t n, uint8_t *out) {
  if (n < BERTH_CCM_TAG) return false;
  const size_t length = n - BERTH_CCM_TAG;
  ccm_t c;
  uint8_t expected[BERTH_CCM_TAG];
  start(&c, key, nonce, aad, aad_len, length);
  ctr(&c, nonce, sealed, length, out);
  mac_bytes(&c, out, length);
  tag(&c, nonce, expected);
  uint8_t diff = 0; // constant time
  for (int k = 0; k < BERTH_CCM_TAG; k++) diff |= (uint8_t)(expected[k] ^ sealed[length + k]);
  return diff == 0;
}
#endif
