//! @file chunk.c
//! Chunk assembly, in the order and with the nonce and associated data of docs/chunk-format.md:
//! serialize → RLE → seal → fragment → frames. Frames are streamed to the transport piece by piece,
//! the CRC computed on the way.
#include "berth/chunk.h"

#include <string.h>

#include "berth/ccm.h"
#include "berth/config.h"
#include "berth/crc32.h"
#include "berth/records.h"
#include "berth/rle.h"

#define MAX_PAYLOAD 65535u

typedef struct {
  berth_transport_t *transport;
  uint8_t type, flags;
  const uint8_t *device_id;
  uint32_t sequence;
  size_t length;   // of the chunk's bytes (after RLE and CCM)
  size_t mtu;
  size_t count;    // fragments; 1 when not fragmented
  size_t at;       // bytes of the chunk sent so far
  uint32_t crc;    // of the current frame so far
  int status;
} frames_t;

static void piece(frames_t *f, const uint8_t *bytes, size_t n, bool end) {
  if (f->status != 0) return;
  f->status = f->transport->write(f->transport, bytes, n, end);
}

static void header_bytes(uint8_t out[BERTH_FRAME_HEADER], uint8_t type, uint8_t flags, uint8_t index, uint8_t count,
                         const uint8_t device_id[8], uint32_t sequence, uint16_t length) {
  const uint8_t start[8] = { 0x42, 0x54, BERTH_FRAME_VERSION, type, flags, index, count, 0 };
  memcpy(out, start, 8);
  memcpy(out + 8, device_id, 8);
  for (int k = 0; k < 4; k++) out[16 + k] = (uint8_t)(sequence >> (8 * k));
  out[20] = (uint8_t)length;
  out[21] = (uint8_t)(length >> 8);
}

/** The sink of the chunk's bytes: opens a frame at each fragment boundary, closes it with its CRC. */
static void stream(berth_buf_t *b, const uint8_t *bytes, size_t n) {
  frames_t *f = (frames_t *)b->sink_context;
  while (n > 0 && f->status == 0) {
    const size_t index = f->at / f->mtu;
    const size_t start = index * f->mtu;
    const size_t end = start + f->mtu < f->length ? start + f->mtu : f->length;
    if (f->at == start) {
      uint8_t header[BERTH_FRAME_HEADER];
      const bool fragmented = f->count > 1;
      header_bytes(header, f->type, f->flags, (uint8_t)(fragmented ? index : 0), (uint8_t)(fragmented ? f->count : 0),
                   f->device_id, f->sequence, (uint16_t)(end - start));
      f->crc = berth_crc32(0, header, sizeof header);
      piece(f, header, sizeof header, false);
    }
    const size_t take = end - f->at < n ? end - f->at : n;
    f->crc = berth_crc32(f->crc, bytes, take);
    piece(f, bytes, take, false);
    f->at += take;
    bytes += take;
    n -= take;
    if (f->at == end) {
      uint8_t crc[4];
      for (int k = 0; k < 4; k++) crc[k] = (uint8_t)(f->crc >> (8 * k));
      piece(f, crc, sizeof crc, true);
    }
  }
}

/** Plan the frames of a chunk of `length` bytes; false when it cannot be sent. */
static bool plan(frames_t *f, size_t length) {
  if (length == 0 || length > MAX_PAYLOAD) return false;
  f->length = length;
  f->mtu = f->transport->mtu == 0 ? MAX_PAYLOAD : f->transport->mtu;
  f->count = length <= f->mtu ? 1 : (length + f->mtu - 1) / f->mtu;
  return f->count <= 255;
}

#if BERTH_COMPRESSION || BERTH_ENCRYPTION
static uint8_t s_payload[BERTH_PAYLOAD_MAX + 8];
#if BERTH_COMPRESSION
static uint8_t s_packed[BERTH_RLE_MAX(BERTH_PAYLOAD_MAX) + 8];
#endif

/** Serialize into the payload buffer, compress and seal it as `options` ask, then send the frames. */
static int send_transformed(frames_t *f, berth_buf_t *sink, const berth_chunk_options_t *options, uint8_t sent_as,
                            berth_encoder_t encode, const void *record) {
  berth_buf_t out = berth_buf(s_payload, BERTH_PAYLOAD_MAX);
  encode(&out, record);
  if (out.overflow) return BERTH_CHUNK_TOO_LARGE;
  uint8_t *bytes = s_payload;
  size_t length = out.length;
#if BERTH_COMPRESSION
  if (options->compress) {
    length = berth_rle_encode(bytes, length, s_packed, sizeof s_packed - 8);
    if (length == 0 && out.length > 0) return BERTH_CHUNK_TOO_LARGE;
    bytes = s_packed;
    f->flags |= BERTH_FLAG_COMPRESSED;
  }
#endif
#if BERTH_ENCRYPTION
  if (options->key != NULL) {
    f->flags |= BERTH_FLAG_ENCRYPTED;
    uint8_t nonce[BERTH_CCM_NONCE];
    memcpy(nonce, f->device_id, 8);
    for (int k = 0; k < 4; k++) nonce[8 + k] = (uint8_t)(f->sequence >> (8 * k));
    nonce[12] = 0;
    uint8_t aad[BERTH_FRAME_HEADER];
    header_bytes(aad, f->type, f->flags, 0, 0, f->device_id, f->sequence, (uint16_t)(length + BERTH_CCM_TAG));
    berth_ccm_seal(options->key, nonce, aad, sizeof aad, bytes, length, bytes); // in place
    length += BERTH_CCM_TAG;
  }
#endif
  if (!plan(f, length)) return BERTH_CHUNK_TOO_LARGE;
  f->flags |= sent_as;
  berth_buf_put(sink, bytes, length);
  return f->status;
}
#endif

int berth_chunk_send(berth_transport_t *transport, const berth_chunk_options_t *options, uint8_t type,
                     const uint8_t device_id[8], uint32_t sequence, berth_encoder_t encode, const void *record,
                     bool retransmission) {
  frames_t f = { transport, type, BERTH_SERIALIZATION_FLAG, device_id, sequence, 0, 0, 0, 0, 0, 0 };
  // The seal covers the flags without the retransmission bit, so a retransmission seals the same bytes.
  const uint8_t sent_as = retransmission ? BERTH_FLAG_RETRANSMITTED : 0;
  berth_buf_t sink = { 0, (size_t)-1, 0, false, stream, &f };
  if ((options->compress && !BERTH_COMPRESSION) || (options->key != NULL && !BERTH_ENCRYPTION)) return BERTH_CHUNK_UNSUPPORTED;
#if BERTH_COMPRESSION || BERTH_ENCRYPTION
  if (options->compress || options->key != NULL) return send_transformed(&f, &sink, options, sent_as, encode, record);
#endif
  berth_buf_t counter = berth_buf_counter();
  encode(&counter, record);
  if (!plan(&f, counter.length)) return BERTH_CHUNK_TOO_LARGE;
  f.flags |= sent_as;
  encode(&sink, record);
  return f.status;
}
