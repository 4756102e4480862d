//! @file upload.h
//! An upload session: device info, reboot reason (once per boot), fault record (when one is pending),
//! metrics (when any), trace (when any), heartbeat — each one chunk through one transport. Delivered
//! buffers are emptied only after the session succeeded; a failed session is sent again whole (the
//! server drops chunks it has already stored).
#pragma once
#include <stdint.h>

#include "berth/chunk.h"
#include "berth/config.h"
#include "berth/records.h"

typedef struct {
  berth_transport_t *transport;
  berth_chunk_options_t options;
  const berth_device_info_t *info;
  // Internal state of the session.
  uint8_t step;
  uint32_t sequences[6];
  uint8_t reboot_reported;
} berth_upload_t;

//! Send the whole session now. 0 on success.
int berth_upload(berth_upload_t *upload);

#if BERTH_ASYNC_UPLOAD
//! Begin a session that berth_upload_step() carries out one chunk per call.
void berth_upload_start(berth_upload_t *upload);
//! Send the next chunk: 1 when more follow, 0 when the session is complete, negative on failure (the
//! session can be started again).
int berth_upload_step(berth_upload_t *upload);
#endif
