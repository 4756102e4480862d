//! @file upload.c
//! The upload session as a small state machine: each step sends one chunk in the spec's order. A
//! chunk keeps its sequence number across retries of a session, so a retried chunk is recognized.
#include "berth/upload.h"

#include "berth/metrics.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth/trace.h"

enum { STEP_INFO, STEP_REBOOT, STEP_FAULT, STEP_METRICS, STEP_TRACE, STEP_HEARTBEAT, STEP_DONE };

static int send(berth_upload_t *u, uint8_t type, berth_encoder_t encode, const void *record) {
  uint32_t *sequence = &u->sequences[type - 1];
  if (*sequence == 0) *sequence = berth_next_sequence() + 1; // stored +1: 0 means "none yet"
  uint8_t id[8];
  berth_platform_device_id(id);
  return berth_chunk_send(u->transport, &u->options, type, id, *sequence - 1, encode, record);
}

/** Send the chunk of the current step, if it has one; advance past steps with nothing to send. */
static int run_step(berth_upload_t *u) {
  const int64_t now = berth_platform_uptime_ms();
  switch (u->step) {
    case STEP_INFO:
      return send(u, BERTH_CHUNK_DEVICE_INFO, berth_encode_device_info, u->info);
    case STEP_REBOOT: {
      if (u->reboot_reported) return 0;
      berth_fault_t fault;
      const bool faulted = berth_fault_pending(&fault);
      const berth_reboot_t r = { berth_reboot_reason(), berth_boot_count(), faulted ? fault.pc : 0, faulted ? fault.lr : 0 };
      return send(u, BERTH_CHUNK_REBOOT_REASON, berth_encode_reboot_reason, &r);
    }
    case STEP_FAULT: {
      berth_fault_t fault;
      return berth_fault_pending(&fault) ? send(u, BERTH_CHUNK_FAULT_RECORD, berth_encode_fault_record, &fault) : 0;
    }
    case STEP_METRICS: {
      const berth_metrics_t m = { now, berth_metrics_entries(), berth_metrics_count() };
      return m.count > 0 ? send(u, BERTH_CHUNK_METRICS, berth_encode_metrics, &m) : 0;
    }
    case STEP_TRACE: {
      const berth_trace_t t = { now, berth_trace_dropped(), berth_trace_data(), berth_trace_length() };
      return t.length > 0 || t.dropped > 0 ? send(u, BERTH_CHUNK_TRACE, berth_encode_trace, &t) : 0;
    }
    default: {
      const berth_heartbeat_t h = { now, berth_boot_count() };
      return send(u, BERTH_CHUNK_HEARTBEAT, berth_encode_heartbeat, &h);
    }
  }
}

/** The session got through: empty what it delivered, forget its sequence numbers. */
static int complete(berth_upload_t *u) {
  if (u->transport->flush != NULL && u->transport->flush(u->transport) != 0) return -1;
  u->reboot_reported = 1;
  berth_fault_clear();
  berth_metrics_clear();
  berth_trace_clear();
  for (int i = 0; i < 6; i++) u->sequences[i] = 0;
  return 0;
}

#if !BERTH_ASYNC_UPLOAD
static
#endif
void berth_upload_start(berth_upload_t *u) {
  u->step = STEP_INFO;
}

#if !BERTH_ASYNC_UPLOAD
static
#endif
int berth_upload_step(berth_upload_t *u) {
  if (u->step >= STEP_DONE) return 0;
  const int status = run_step(u);
  if (status != 0) return status;
  if (++u->step < STEP_DONE) return 1;
  return complete(u);
}

int berth_upload(berth_upload_t *u) {
  int status;
  berth_upload_start(u);
  while ((status = berth_upload_step(u)) > 0) {}
  return status;
}
