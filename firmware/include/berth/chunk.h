//! @file chunk.h
//! From a record to frames on a transport: serialize, RLE (optional), AES-128-CCM (optional), then
//! fragment to the transport's MTU, each frame with its header and CRC-32. Without RLE and CCM the
//! record is serialized twice (once to count, once straight into the frames), so no payload buffer
//! is needed; with either, one static buffer of BERTH_PAYLOAD_MAX (two with both) holds it.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/buffer.h"
#include "berth/transport.h"

#define BERTH_FRAME_HEADER 22
#define BERTH_FRAME_OVERHEAD 26
#define BERTH_FLAG_ENCRYPTED 0x01
#define BERTH_FLAG_COMPRESSED 0x02
#define BERTH_FLAG_CBOR 0x04

typedef struct {
  //! RLE-compress payloads (flag bit 1); needs BERTH_COMPRESSION.
  bool compress;
  //! AES-128 key to seal payloads with (flag bit 0), or NULL; needs BERTH_ENCRYPTION.
  const uint8_t *key;
} berth_chunk_options_t;

//! Serializes one record (records.h) into `out`.
typedef void (*berth_encoder_t)(berth_buf_t *out, const void *record);

//! Send one chunk of `type` holding `record` with sequence number `sequence`. 0 on success; negative
//! when the transport failed, or the payload does not fit BERTH_PAYLOAD_MAX, an MTU or the format.
int berth_chunk_send(berth_transport_t *transport, const berth_chunk_options_t *options, uint8_t type,
                     const uint8_t device_id[8], uint32_t sequence, berth_encoder_t encode, const void *record);
