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

//! The frame version the SDK writes (docs/chunk-format.md, "Versions").
#define BERTH_FRAME_VERSION 2
#define BERTH_FRAME_HEADER 22
#define BERTH_FRAME_OVERHEAD 26
#define BERTH_FLAG_ENCRYPTED 0x01
#define BERTH_FLAG_COMPRESSED 0x02
#define BERTH_FLAG_CBOR 0x04
//! The chunk may have reached the server before: a copy of it there makes this one a duplicate.
#define BERTH_FLAG_RETRANSMITTED 0x08

typedef struct {
  //! RLE-compress payloads (flag bit 1); needs BERTH_COMPRESSION.
  bool compress;
  //! AES-128 key to seal payloads with (flag bit 0), or NULL; needs BERTH_ENCRYPTION.
  const uint8_t *key;
} berth_chunk_options_t;

//! Serializes one record (records.h) into `out`.
typedef void (*berth_encoder_t)(berth_buf_t *out, const void *record);

//! The payload does not fit BERTH_PAYLOAD_MAX, the transport's MTU or the format.
#define BERTH_CHUNK_TOO_LARGE (-2)
//! The options ask for RLE or CCM, which this build leaves out (BERTH_COMPRESSION, BERTH_ENCRYPTION).
#define BERTH_CHUNK_UNSUPPORTED (-4)

//! Send one chunk of `type` holding `record` with sequence number `sequence`; `retransmission` when the
//! same chunk may have reached the server before (a send of it ended BERTH_SEND_UNCERTAIN). 0 on
//! success, the transport's BERTH_SEND_FAILED or BERTH_SEND_UNCERTAIN, BERTH_CHUNK_TOO_LARGE or
//! BERTH_CHUNK_UNSUPPORTED.
int berth_chunk_send(berth_transport_t *transport, const berth_chunk_options_t *options, uint8_t type,
                     const uint8_t device_id[8], uint32_t sequence, berth_encoder_t encode, const void *record,
                     bool retransmission);
