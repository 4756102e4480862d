//! @file image.c
//! Host checks of image verification (include/berth/image.h), built with BERTH_UPDATES:
//!   image rfc8032                    RFC 8032's Ed25519 vectors verified, each with a flipped bit refused
//!   image verify <key hex> <file>    the status of the image in <file> against the public key
//! (test/firmware/image.test.ts signs images with node:crypto and runs the second form on them).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/image.h"
#include "hex.h"
#include "rfc8032.h"

static int s_failed;

static void check(int ok, const char *what, const char *name) {
  printf("%sok - %s: %s\n", ok ? "" : "not ", name, what);
  if (!ok) s_failed = 1;
}

static int rfc8032(void) {
  for (size_t i = 0; i < sizeof RFC8032 / sizeof RFC8032[0]; i++) {
    const rfc8032_vector_t *v = &RFC8032[i];
    uint8_t key[32], signature[64], message[1024];
    unhex(v->public_key, key);
    unhex(v->signature, signature);
    const size_t length = unhex(v->message, message);
    check(berth_ed25519_verify(signature, message, length, key), "verifies", v->name);
    signature[5] ^= 0x10; // in R
    check(!berth_ed25519_verify(signature, message, length, key), "a bit flipped in R is refused", v->name);
    signature[5] ^= 0x10;
    signature[40] ^= 0x01; // in S
    check(!berth_ed25519_verify(signature, message, length, key), "a bit flipped in S is refused", v->name);
    signature[40] ^= 0x01;
    if (length > 0) {
      message[length - 1] ^= 0x80;
      check(!berth_ed25519_verify(signature, message, length, key), "a bit flipped in the message is refused", v->name);
      message[length - 1] ^= 0x80;
    }
    key[0] ^= 0x02;
    check(!berth_ed25519_verify(signature, message, length, key), "a bit flipped in the key is refused", v->name);
  }
  return s_failed;
}

static int verify(const char *key_hex, const char *path) {
  uint8_t key[32];
  if (strlen(key_hex) != 64 || unhex(key_hex, key) != 32) {
    fprintf(stderr, "the key must be 64 hex characters\n");
    return 2;
  }
  FILE *file = fopen(path, "rb");
  if (file == NULL) {
    perror(path);
    return 2;
  }
  static uint8_t image[1 << 20];
  const size_t length = fread(image, 1, sizeof image, file);
  fclose(file);
  static const char *const NAMES[] = { "ok", "bad-header", "truncated", "bad-signature" };
  berth_image_header_t header;
  const berth_image_status_t status = berth_image_verify(image, length, key, &header);
  printf("%s", NAMES[status]);
  if (status == BERTH_IMAGE_OK) {
    printf(" %s %s %u 0x%08x", header.software_type, header.version, (unsigned)header.payload_size,
           (unsigned)header.load_address);
  }
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "rfc8032") == 0) return rfc8032();
  if (argc == 4 && strcmp(argv[1], "verify") == 0) return verify(argv[2], argv[3]);
  fprintf(stderr, "usage: image rfc8032 | image verify <public key hex> <image file>\n");
  return 2;
}
