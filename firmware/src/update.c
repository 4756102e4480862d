//! @file update.c
//! The update receiver (update.h): "BU" frames in and out, the download into the free slot and its
//! verification.
#include "berth/update.h"

#if BERTH_UPDATES
#include <string.h>

#include "berth/crc32.h"
#include "berth/platform.h"
#include "berth/sha256.h"

enum { STATE = 1, OFFER = 2, REQUEST = 3, BLOCK = 4, RESULT = 5, NONE = 6 };
enum { IDLE, OFFERING, DOWNLOADING };
#define HEAD 6u

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

//! Send the frame of `type` whose payload is already in out[HEAD...]: it is kept, to be sent again.
static void send(berth_update_t *u, uint8_t type, size_t payload, uint32_t now_ms) {
  u->out[0] = 'B';
  u->out[1] = 'U';
  u->out[2] = 1;
  u->out[3] = type;
  u->out[4] = (uint8_t)payload;
  u->out[5] = (uint8_t)(payload >> 8);
  put32(u->out + HEAD + payload, berth_crc32(0, u->out, HEAD + payload));
  u->out_length = HEAD + payload + 4;
  u->link->write_bytes(u->link->context, u->out, u->out_length);
  u->sent_ms = now_ms;
  u->resends_left = u->resends;
}

//! A NUL-padded 24-byte field of `text`.
static void field(uint8_t *p, const char *text) {
  memset(p, 0, BERTH_IMAGE_FIELD_SIZE);
  const size_t n = strlen(text);
  memcpy(p, text, n < BERTH_IMAGE_FIELD_SIZE ? n : BERTH_IMAGE_FIELD_SIZE);
}

static void send_state(berth_update_t *u, uint32_t now_ms) {
  uint8_t *p = u->out + HEAD;
  memset(p, 0, BERTH_UPDATE_STATE_SIZE);
  berth_platform_device_id(p);
  berth_boot_status_t status;
  berth_boot_status(&status);
  berth_image_header_t running;
  if (berth_image_header(berth_port_slot(status.running), berth_port_slot_capacity(), &running) == BERTH_IMAGE_OK) {
    field(p + 8, running.software_type);
    field(p + 32, running.version);
  }
  p[56] = status.running;
  uint8_t *slot = p + 57, *download = p + 57 + BERTH_SLOTS * 57u;
  for (uint8_t s = 0; s < BERTH_SLOTS; s++, slot += 57) {
    berth_slot_trailer_t trailer;
    berth_slot_trailer(s, &trailer);
    slot[0] = trailer.state;
    if (trailer.state != BERTH_SLOT_EMPTY) {
      memcpy(slot + 1, trailer.version, BERTH_IMAGE_FIELD_SIZE);
      memcpy(slot + 25, trailer.sha256, 32);
    } else if (trailer.received > 0) {
      memcpy(download, trailer.sha256, 32);
      put32(download + 32, trailer.received);
    }
  }
  download[36] = status.event;
  download[37] = status.event_slot;
  send(u, STATE, BERTH_UPDATE_STATE_SIZE, now_ms);
}

static void send_request(berth_update_t *u, const berth_slot_trailer_t *trailer, uint32_t now_ms) {
  const uint32_t left = trailer->size - trailer->received;
  u->offset = trailer->received;
  u->length = (uint16_t)(left < BERTH_UPDATE_BLOCK ? left : BERTH_UPDATE_BLOCK);
  uint8_t *p = u->out + HEAD;
  memcpy(p, u->sha256, 32);
  put32(p + 32, u->offset);
  p[36] = (uint8_t)u->length;
  p[37] = (uint8_t)(u->length >> 8);
  u->phase = DOWNLOADING;
  send(u, REQUEST, 38, now_ms);
}

static berth_update_status_t send_result(berth_update_t *u, berth_update_result_t result, uint32_t now_ms) {
  memcpy(u->out + HEAD, u->sha256, 32);
  u->out[HEAD + 32] = (uint8_t)result;
  send(u, RESULT, 33, now_ms);
  u->phase = IDLE;
  if (result == BERTH_RESULT_PENDING) return BERTH_UPDATE_READY;
  berth_boot_record_event(BERTH_EVENT_REFUSED, u->slot);
  return BERTH_UPDATE_REFUSED;
}

//! The whole image is in the slot: check its digest, header and signature.
static berth_update_result_t check(berth_update_t *u, const berth_slot_trailer_t *trailer) {
  const uint8_t *image = berth_port_slot(u->slot);
  uint8_t digest[32];
  berth_sha256_t sha;
  berth_sha256_init(&sha);
  berth_sha256_update(&sha, image, trailer->size);
  berth_sha256_final(&sha, digest);
  if (memcmp(digest, trailer->sha256, 32) != 0) return BERTH_RESULT_DIGEST;
  berth_image_header_t header;
  switch (berth_image_verify(image, trailer->size, u->public_key, &header)) {
    case BERTH_IMAGE_OK: break;
    case BERTH_IMAGE_BAD_SIGNATURE: return BERTH_RESULT_BAD_SIGNATURE;
    default: return BERTH_RESULT_BAD_HEADER;
  }
  if (berth_image_size(&header) != trailer->size || header.load_address != u->load_address) {
    return BERTH_RESULT_BAD_HEADER;
  }
  return BERTH_RESULT_PENDING;
}

static berth_update_status_t finish(berth_update_t *u, berth_slot_trailer_t *trailer, uint32_t now_ms) {
  const berth_update_result_t result = check(u, trailer);
  if (result == BERTH_RESULT_PENDING) {
    trailer->state = BERTH_SLOT_PENDING;
  } else {
    memset(trailer, 0, sizeof *trailer); // empty: the next offer starts over
  }
  berth_slot_set_trailer(u->slot, trailer);
  return send_result(u, result, now_ms);
}

static berth_update_status_t offered(berth_update_t *u, const uint8_t *p, uint32_t now_ms) {
  const uint32_t size = get32(p + 32);
  memcpy(u->sha256, p, 32);
  u->slot = (uint8_t)(1u - berth_update_running_slot());
  berth_slot_trailer_t running, trailer;
  berth_slot_trailer((uint8_t)(1u - u->slot), &running);
  if (size > berth_port_slot_capacity() || running.state != BERTH_SLOT_CONFIRMED) {
    return send_result(u, BERTH_RESULT_NO_ROOM, now_ms);
  }
  if (size < BERTH_IMAGE_HEADER_SIZE + 1u + BERTH_IMAGE_SIGNATURE_SIZE) {
    return send_result(u, BERTH_RESULT_BAD_HEADER, now_ms);
  }
  berth_slot_trailer(u->slot, &trailer);
  const bool same = memcmp(trailer.sha256, u->sha256, 32) == 0 && trailer.size == size;
  if (same && trailer.state == BERTH_SLOT_PENDING) return send_result(u, BERTH_RESULT_PENDING, now_ms);
  if (!same || trailer.state != BERTH_SLOT_EMPTY || trailer.received > size) {
    // A new download: whatever the slot held is given up.
    memset(&trailer, 0, sizeof trailer);
    trailer.size = size;
    memcpy(trailer.sha256, u->sha256, 32);
    memcpy(trailer.version, p + 36, BERTH_IMAGE_FIELD_SIZE);
    berth_slot_set_trailer(u->slot, &trailer);
  }
  if (trailer.received == size) return finish(u, &trailer, now_ms);
  send_request(u, &trailer, now_ms);
  return BERTH_UPDATE_WAITING;
}

static berth_update_status_t block(berth_update_t *u, const uint8_t *p, size_t length, uint32_t now_ms) {
  // Anything but the block asked for is left: the request goes again at its timeout.
  if (u->phase != DOWNLOADING || length != 36u + u->length || memcmp(p, u->sha256, 32) != 0 ||
      get32(p + 32) != u->offset) {
    return BERTH_UPDATE_WAITING;
  }
  berth_slot_trailer_t trailer;
  berth_slot_trailer(u->slot, &trailer);
  if (!berth_port_slot_write(u->slot, u->offset, p + 36, u->length)) return send_result(u, BERTH_RESULT_NO_ROOM, now_ms);
  trailer.received = u->offset + u->length;
  berth_slot_set_trailer(u->slot, &trailer);
  if (trailer.received == trailer.size) return finish(u, &trailer, now_ms);
  send_request(u, &trailer, now_ms);
  return BERTH_UPDATE_WAITING;
}

static berth_update_status_t frame(berth_update_t *u, uint8_t type, const uint8_t *p, size_t length,
                                   uint32_t now_ms) {
  if (u->phase == IDLE) return BERTH_UPDATE_IDLE;
  if (type == NONE && u->phase == OFFERING) {
    u->phase = IDLE;
    return BERTH_UPDATE_NONE;
  }
  if (type == OFFER && length == 32u + 4u + 24u) return offered(u, p, now_ms);
  if (type == BLOCK) return block(u, p, length, now_ms);
  return BERTH_UPDATE_WAITING;
}

void berth_update_start(berth_update_t *u, uint32_t now_ms) {
  u->in_length = 0;
  u->phase = OFFERING;
  send_state(u, now_ms);
}

berth_update_status_t berth_update_feed(berth_update_t *u, const uint8_t *bytes, size_t length, uint32_t now_ms) {
  berth_update_status_t status = u->phase == IDLE ? BERTH_UPDATE_IDLE : BERTH_UPDATE_WAITING;
  for (size_t i = 0; i < length && status == BERTH_UPDATE_WAITING; i++) {
    u->in[u->in_length++] = bytes[i];
    const size_t n = u->in_length;
    // Find the start of a frame: "BU", version 1, a payload length it may have.
    if ((n == 1 && u->in[0] != 'B') || (n == 2 && u->in[1] != 'U') || (n == 3 && u->in[2] != 1) ||
        (n == HEAD && (size_t)(u->in[4] | u->in[5] << 8) > BERTH_UPDATE_PAYLOAD_MAX)) {
      u->in_length = bytes[i] == 'B' ? (u->in[0] = 'B', 1u) : 0u;
      continue;
    }
    if (n < HEAD) continue;
    const size_t payload = (size_t)(u->in[4] | u->in[5] << 8);
    if (n < HEAD + payload + 4u) continue;
    u->in_length = 0;
    if (get32(u->in + HEAD + payload) != berth_crc32(0, u->in, HEAD + payload)) continue; // damaged: dropped
    status = frame(u, u->in[3], u->in + HEAD, payload, now_ms);
  }
  return status;
}

berth_update_status_t berth_update_poll(berth_update_t *u, uint32_t now_ms) {
  if (u->phase == IDLE) return BERTH_UPDATE_IDLE;
  if (now_ms - u->sent_ms < u->answer_ms) return BERTH_UPDATE_WAITING;
  if (u->resends_left == 0) {
    u->phase = IDLE;
    return BERTH_UPDATE_NO_ANSWER;
  }
  const uint8_t left = u->resends_left;
  u->link->write_bytes(u->link->context, u->out, u->out_length);
  u->sent_ms = now_ms;
  u->resends_left = (uint8_t)(left - 1u);
  return BERTH_UPDATE_WAITING;
}
#endif
