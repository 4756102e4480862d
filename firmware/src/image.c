//! @file image.c
//! The signed image's header and its Ed25519 signature (image.h), verified by the vendored
//! orlp/ed25519 (vendor/ed25519).
#include "berth/image.h"

#if BERTH_UPDATES
#include <string.h>

#include "ed25519.h"

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

//! A NUL-padded text field into `text`: false when empty or with other bytes after its padding begins.
static bool field(const uint8_t *bytes, char *text) {
  size_t used = 0;
  while (used < BERTH_IMAGE_FIELD_SIZE && bytes[used] != 0) used++;
  if (used == 0) return false;
  for (size_t i = used; i < BERTH_IMAGE_FIELD_SIZE; i++) {
    if (bytes[i] != 0) return false;
  }
  memcpy(text, bytes, used);
  text[used] = '\0';
  return true;
}

berth_image_status_t berth_image_header(const uint8_t *bytes, size_t length, berth_image_header_t *header) {
  if (length < BERTH_IMAGE_HEADER_SIZE) return BERTH_IMAGE_TRUNCATED;
  if (le32(bytes) != BERTH_IMAGE_MAGIC || le16(bytes + 4) != BERTH_IMAGE_HEADER_SIZE ||
      le16(bytes + 6) != BERTH_IMAGE_FORMAT) {
    return BERTH_IMAGE_BAD_HEADER;
  }
  header->payload_size = le32(bytes + 8);
  header->load_address = le32(bytes + 12);
  // Empty, or so large its size does not fit 32 bits.
  if (header->payload_size == 0 ||
      header->payload_size > UINT32_MAX - BERTH_IMAGE_HEADER_SIZE - BERTH_IMAGE_SIGNATURE_SIZE) {
    return BERTH_IMAGE_BAD_HEADER;
  }
  if (!field(bytes + 16, header->version) || !field(bytes + 40, header->software_type)) {
    return BERTH_IMAGE_BAD_HEADER;
  }
  return BERTH_IMAGE_OK;
}

uint32_t berth_image_size(const berth_image_header_t *header) {
  return BERTH_IMAGE_HEADER_SIZE + header->payload_size + BERTH_IMAGE_SIGNATURE_SIZE;
}

//! Whether the 32-byte little-endian scalar is below the group order L = 2^252 + 27742317777372353535851937790883648493.
static bool below_order(const uint8_t s[32]) {
  static const uint8_t L[32] = {
    0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10
  };
  for (int i = 31; i >= 0; i--) {
    if (s[i] != L[i]) return s[i] < L[i];
  }
  return false;
}

bool berth_ed25519_verify(const uint8_t signature[64], const uint8_t *message, size_t length,
                          const uint8_t public_key[32]) {
  return below_order(signature + 32) && ed25519_verify(signature, message, length, public_key) == 1;
}

berth_image_status_t berth_image_verify(const uint8_t *bytes, size_t length, const uint8_t public_key[32],
                                        berth_image_header_t *header) {
  const berth_image_status_t status = berth_image_header(bytes, length, header);
  if (status != BERTH_IMAGE_OK) return status;
  const uint32_t signed_size = BERTH_IMAGE_HEADER_SIZE + header->payload_size;
  if (length < (size_t)signed_size + BERTH_IMAGE_SIGNATURE_SIZE) return BERTH_IMAGE_TRUNCATED;
  return berth_ed25519_verify(bytes + signed_size, bytes, signed_size, public_key) ? BERTH_IMAGE_OK
                                                                                   : BERTH_IMAGE_BAD_SIGNATURE;
}
#endif
