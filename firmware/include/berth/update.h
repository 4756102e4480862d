//! @file update.h
//! The update receiver (docs/firmware-updates.md, "The update over a serial line"): "BU" frames over
//! any byte stream. The device sends its `state`; the gateway answers with an `offer` or `none`; the
//! device asks for the image a block (at most 512 bytes) at a time into the slot that is not running,
//! keeping its progress in the slot's trailer so a download resumes after a reset or a broken link;
//! once all is there it checks the SHA-256 offered and the signature, marks the slot pending and sends
//! its `result`. The application then resets into the bootloader, which tests the new image.
//! Transport-independent: the application feeds what it receives (berth_update_feed) and polls for
//! timeouts (berth_update_poll); frames go out through a berth_stream_t. With BERTH_UPDATES.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

#if BERTH_UPDATES
#include "berth/slots.h"
#include "berth/transports.h"

#define BERTH_UPDATE_BLOCK 512u
//! Largest frame payload: a block with its digest and offset.
#define BERTH_UPDATE_PAYLOAD_MAX (32u + 4u + BERTH_UPDATE_BLOCK)
//! The state frame's payload.
#define BERTH_UPDATE_STATE_SIZE (8u + 24u + 24u + 1u + BERTH_SLOTS * (1u + 24u + 32u) + 32u + 4u + 2u)

typedef enum {
  BERTH_UPDATE_WAITING = 0,  //!< a session is under way: feed what arrives, poll
  BERTH_UPDATE_IDLE = 1,     //!< no session (none started, or it ended)
  BERTH_UPDATE_NONE = 2,     //!< the gateway has nothing to offer
  BERTH_UPDATE_READY = 3,    //!< an image is downloaded, verified and pending: reset into it
  BERTH_UPDATE_REFUSED = 4,  //!< the image offered was refused (its result sent)
  BERTH_UPDATE_NO_ANSWER = 5 //!< the gateway did not answer, even after the resends
} berth_update_status_t;

//! The `result` frame's status.
typedef enum {
  BERTH_RESULT_PENDING = 1,
  BERTH_RESULT_BAD_SIGNATURE = 2,
  BERTH_RESULT_BAD_HEADER = 3, //!< truncated, or not an image for this device
  BERTH_RESULT_DIGEST = 4,
  BERTH_RESULT_NO_ROOM = 5     //!< larger than a slot, or no slot free (the running image not confirmed)
} berth_update_result_t;

typedef struct {
  // Set by the caller.
  berth_stream_t *link;          //!< where frames go
  const uint8_t *public_key;     //!< the fleet's 32-byte Ed25519 public key
  uint32_t load_address;         //!< where images for this device run
  uint32_t answer_ms;            //!< a frame unanswered this long is sent again ...
  uint8_t resends;               //!< ... this many times, then the session ends
  // The session's.
  uint8_t phase;
  uint8_t resends_left;
  uint8_t slot;                  //!< the slot downloaded into
  uint32_t sent_ms;
  uint32_t offset;               //!< of the block asked for
  uint16_t length;
  uint8_t sha256[32];            //!< of the image downloading
  size_t out_length;
  uint8_t out[6u + BERTH_UPDATE_STATE_SIZE + 4u]; //!< the last frame sent
  size_t in_length;
  uint8_t in[6u + BERTH_UPDATE_PAYLOAD_MAX + 4u]; //!< the frame arriving
} berth_update_t;

//! Start a session: send the device's state (after boot, and after each upload).
void berth_update_start(berth_update_t *update, uint32_t now_ms);
//! Take `length` bytes received from the gateway; answers what the session came to.
berth_update_status_t berth_update_feed(berth_update_t *update, const uint8_t *bytes, size_t length,
                                        uint32_t now_ms);
//! Send the last frame again when it has gone unanswered for `answer_ms`.
berth_update_status_t berth_update_poll(berth_update_t *update, uint32_t now_ms);
#endif
