//! @file image.h
//! The signed firmware image of docs/firmware-updates.md: a 64-byte header (magic "BTIM", header size,
//! format, payload size, load address, version, software type), the payload, and an Ed25519 signature
//! (RFC 8032) over both. The header is read and checked, and the whole image verified against the
//! fleet's 32-byte public key, where it lies in memory (a memory-mapped slot). With BERTH_UPDATES.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

#if BERTH_UPDATES
#define BERTH_IMAGE_MAGIC 0x4D495442u // "BTIM" little-endian
#define BERTH_IMAGE_HEADER_SIZE 64u
#define BERTH_IMAGE_FORMAT 1u
#define BERTH_IMAGE_SIGNATURE_SIZE 64u
//! Bytes of the version and software type fields in the header (NUL-padded).
#define BERTH_IMAGE_FIELD_SIZE 24u

typedef struct {
  uint32_t payload_size;
  uint32_t load_address; //!< where the payload runs: its vector table is its first bytes
  char version[BERTH_IMAGE_FIELD_SIZE + 1];
  char software_type[BERTH_IMAGE_FIELD_SIZE + 1];
} berth_image_header_t;

typedef enum {
  BERTH_IMAGE_OK = 0,
  BERTH_IMAGE_BAD_HEADER = 1,    //!< not this format: magic, header size, format, empty payload, fields
  BERTH_IMAGE_TRUNCATED = 2,     //!< fewer bytes than the header says the image has
  BERTH_IMAGE_BAD_SIGNATURE = 3  //!< the signature does not verify with the key
} berth_image_status_t;

//! Read and check the header of the image in `bytes` (`length` of them available): BERTH_IMAGE_OK with
//! `header` filled, BERTH_IMAGE_TRUNCATED when fewer than 64 bytes are there, else BAD_HEADER.
berth_image_status_t berth_image_header(const uint8_t *bytes, size_t length, berth_image_header_t *header);

//! The image's whole size: header, payload and signature.
uint32_t berth_image_size(const berth_image_header_t *header);

//! Check the header and the signature of the image in `bytes` (`length` available, at least the image's
//! size; more is ignored) against `public_key`; `header` is filled when the header is good.
berth_image_status_t berth_image_verify(const uint8_t *bytes, size_t length, const uint8_t public_key[32],
                                        berth_image_header_t *header);

//! RFC 8032 Ed25519 verification of `signature` over `message` with `public_key` (orlp/ed25519's, with
//! the check that S is below the group order, which RFC 8032 requires and it leaves out).
bool berth_ed25519_verify(const uint8_t signature[64], const uint8_t *message, size_t length,
                          const uint8_t public_key[32]);
#endif
