//! @file vectors.c
//! The golden vectors of test/vectors/ from the C side. `vectors check`: each record sent through a
//! transport of the vector's MTU must give the vector's frames byte for byte, and each compressed or
//! encrypted vector's frames must open and expand back to its serialized payload. `vectors print`
//! (built with BERTH_SERIALIZATION_CBOR=1): each record's frames in hex, for the server to decode.
//! The records come from vectors_data.c, generated from the JSON files by the test that builds this.
#include <stdio.h>
#include <string.h>

#include "berth/ccm.h"
#include "berth/chunk.h"
#include "berth/rle.h"
#include "vectors.h"
#include "hex.h"

static uint8_t s_out[8192];
static size_t s_length;

static int capture(berth_transport_t *t, const uint8_t *bytes, size_t length, bool end_of_frame) {
  (void)t;
  (void)end_of_frame;
  if (length > sizeof s_out - s_length) return -1;
  memcpy(s_out + s_length, bytes, length);
  s_length += length;
  return 0;
}

static const uint8_t DEVICE[8] = { 0x00, 0x11, 0x22, 0x33, 0xaa, 0xbb, 0xcc, 0xdd };
static const uint8_t KEY[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

static int send_vector(const vector_t *v, uint8_t flags) {
  berth_transport_t t = { v->mtu, capture, NULL, NULL };
  const berth_chunk_options_t options = { (flags & BERTH_FLAG_COMPRESSED) != 0, (flags & BERTH_FLAG_ENCRYPTED) != 0 ? KEY : NULL };
  s_length = 0;
  return berth_chunk_send(&t, &options, v->type, DEVICE, v->sequence, v->encode, v->record, false);
}

/** The vector's frames opened and expanded back to the serialized payload. */
static int decodes(const vector_t *v, const uint8_t *frames, size_t n) {
  uint8_t chunk[4096], plain[4096], serialized[4096];
  size_t length = 0;
  for (size_t at = 0; at + 26 <= n;) { // concatenate the fragments' payloads
    const size_t payload = (size_t)(frames[at + 20] | frames[at + 21] << 8);
    memcpy(chunk + length, frames + at + 22, payload);
    length += payload;
    at += 26 + payload;
  }
  const uint8_t *bytes = chunk;
  if (v->flags & BERTH_FLAG_ENCRYPTED) {
    uint8_t nonce[13], aad[22];
    memcpy(nonce, DEVICE, 8);
    for (int k = 0; k < 4; k++) nonce[8 + k] = (uint8_t)(v->sequence >> (8 * k));
    nonce[12] = 0;
    memcpy(aad, frames, 22);
    aad[5] = aad[6] = 0; // as one unfragmented frame
    aad[20] = (uint8_t)length;
    aad[21] = (uint8_t)(length >> 8);
    if (!berth_ccm_open(KEY, nonce, aad, sizeof aad, chunk, length, plain)) return 0;
    bytes = plain;
    length -= 8;
  }
  uint8_t expanded[4096];
  if (v->flags & BERTH_FLAG_COMPRESSED) {
    const long m = berth_rle_decode(bytes, length, expanded, sizeof expanded);
    if (m < 0) return 0;
    bytes = expanded;
    length = (size_t)m;
  }
  return length == unhex(v->serialized, serialized) && memcmp(bytes, serialized, length) == 0;
}

int main(int argc, char **argv) {
  const int print = argc > 1 && strcmp(argv[1], "print") == 0;
  int failed = 0;
  uint8_t expected[8192];
  for (size_t i = 0; i < VECTOR_COUNT; i++) {
    const vector_t *v = &VECTORS[i];
    if (print) {
      if (send_vector(v, 0) != 0) return 2;
      printf("%s ", v->name);
      for (size_t k = 0; k < s_length; k++) printf("%02x", s_out[k]);
      printf("\n");
      continue;
    }
    const size_t n = unhex(v->frames, expected);
    const int sent = send_vector(v, v->flags) == 0 && s_length == n && memcmp(s_out, expected, n) == 0;
    printf("%sok - %s: the C encoder gives the vector's frames\n", sent ? "" : "not ", v->name);
    failed += !sent;
    if (v->flags & (BERTH_FLAG_ENCRYPTED | BERTH_FLAG_COMPRESSED)) {
      const int opened = decodes(v, expected, n);
      printf("%sok - %s: the C side opens and expands the vector\n", opened ? "" : "not ", v->name);
      failed += !opened;
    }
  }
  return failed == 0 ? 0 : 1;
}
