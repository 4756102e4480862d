//! @file upload.h
//! An upload session: device info, reboot reason (once per boot), fault record (when one is pending,
//! BERTH_FAULT_CAPTURE), metrics (when any), trace (when any), heartbeat — each one chunk through one
//! transport. A chunk's sequence number and contents are fixed when it is first sent: a failed session
//! is sent again with the same bytes (as retransmissions when the failure left it uncertain whether
//! they arrived, which the server answers `duplicate` for what it stored), and what is recorded
//! meanwhile waits for the next session. Only what a session delivered is removed from the buffers,
//! once it succeeded.
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
  uint8_t reboot_reported;
  //! A send ended BERTH_SEND_UNCERTAIN: the chunks sent before go again as retransmissions.
  uint8_t uncertain;
  //! Each chunk type's sequence number + 1 (0: not sent in this session yet).
  uint32_t sequences[6];
  //! Fixed at the session's first chunk: its uptime stamp, the metrics entries and trace bytes (and
  //! dropped count) its chunks carry.
  uint32_t stamp;
  size_t metrics_sent;
  size_t trace_sent;
  uint32_t trace_dropped;
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
