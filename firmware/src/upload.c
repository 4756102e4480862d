//! @file upload.c
//! The upload session as a small state machine: each step sends one chunk in the spec's order. A
//! chunk keeps its sequence number and its contents across retries of a session, so a retried chunk is
//! the same chunk; the buffers give up only what the completed session delivered.
#include "berth/upload.h"

#include "berth/metrics.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth/trace.h"

enum {
  STEP_INFO,
  STEP_REBOOT,
#if BERTH_FAULT_CAPTURE
  STEP_FAULT,
#endif
  STEP_METRICS,
  STEP_TRACE,
  STEP_HEARTBEAT,
  STEP_DONE
};

/** Whether the chunk of `type` was sent before in this session (and so holds fixed contents). */
static bool sent_before(const berth_upload_t *u, uint8_t type) {
  return u->sequences[type - 1] != 0;
}

static int send(berth_upload_t *u, uint8_t type, berth_encoder_t encode, const void *record) {
  uint32_t *sequence = &u->sequences[type - 1];
  const bool again = *sequence != 0;
  if (!again) *sequence = berth_next_sequence() + 1; // stored +1: 0 means "none yet"
  uint8_t id[8];
  berth_platform_device_id(id);
  return berth_chunk_send(u->transport, &u->options, type, id, *sequence - 1, encode, record, again && u->uncertain);
}

/** Send the chunk of the current step, if it has one; advance past steps with nothing to send. */
static int run_step(berth_upload_t *u) {
  switch (u->step) {
    case STEP_INFO:
      return send(u, BERTH_CHUNK_DEVICE_INFO, berth_encode_device_info, u->info);
    case STEP_REBOOT: {
      if (u->reboot_reported) return 0;
      berth_reboot_t r = { berth_reboot_reason(), berth_boot_count(), 0, 0 };
#if BERTH_FAULT_CAPTURE
      berth_fault_t fault;
      if (berth_fault_pending(&fault)) {
        r.pc = fault.pc;
        r.lr = fault.lr;
      }
#endif
      return send(u, BERTH_CHUNK_REBOOT_REASON, berth_encode_reboot_reason, &r);
    }
#if BERTH_FAULT_CAPTURE
    case STEP_FAULT: {
      berth_fault_t fault;
      return berth_fault_pending(&fault) ? send(u, BERTH_CHUNK_FAULT_RECORD, berth_encode_fault_record, &fault) : 0;
    }
#endif
    case STEP_METRICS: {
      if (!sent_before(u, BERTH_CHUNK_METRICS)) u->metrics_sent = berth_metrics_seal();
      const berth_metrics_t m = { u->stamp, berth_metrics_entries(), u->metrics_sent };
      return m.count > 0 ? send(u, BERTH_CHUNK_METRICS, berth_encode_metrics, &m) : 0;
    }
    case STEP_TRACE: {
      if (!sent_before(u, BERTH_CHUNK_TRACE)) {
        u->trace_sent = berth_trace_length();
        u->trace_dropped = berth_trace_dropped();
      }
      const berth_trace_t t = { u->stamp, u->trace_dropped, berth_trace_data(), u->trace_sent };
      return t.length > 0 || t.dropped > 0 ? send(u, BERTH_CHUNK_TRACE, berth_encode_trace, &t) : 0;
    }
    default: {
      const berth_heartbeat_t h = { u->stamp, berth_boot_count() };
      return send(u, BERTH_CHUNK_HEARTBEAT, berth_encode_heartbeat, &h);
    }
  }
}

/** The session got through: remove what it delivered, forget its sequence numbers. */
static int complete(berth_upload_t *u) {
  if (u->transport->flush != NULL) {
    const int status = u->transport->flush(u->transport);
    if (status != 0) return status;
  }
  u->reboot_reported = 1;
#if BERTH_FAULT_CAPTURE
  berth_fault_clear();
#endif
  berth_metrics_consume(u->metrics_sent);
  berth_trace_consume(u->trace_sent, u->trace_dropped);
  for (int i = 0; i < 6; i++) u->sequences[i] = 0;
  u->metrics_sent = u->trace_sent = 0;
  u->trace_dropped = 0;
  u->uncertain = 0;
  return 0;
}

#if !BERTH_ASYNC_UPLOAD
static
#endif
void berth_upload_start(berth_upload_t *u) {
  u->step = STEP_INFO;
  bool fresh = true;
  for (int i = 0; i < 6; i++) fresh = fresh && u->sequences[i] == 0;
  if (fresh) u->stamp = berth_platform_uptime_ms();
}

#if !BERTH_ASYNC_UPLOAD
static
#endif
int berth_upload_step(berth_upload_t *u) {
  if (u->step >= STEP_DONE) return 0;
  int status = run_step(u);
  if (status == 0 && ++u->step < STEP_DONE) return 1;
  if (status == 0) status = complete(u);
  if (status == BERTH_SEND_UNCERTAIN) u->uncertain = 1;
  return status;
}

int berth_upload(berth_upload_t *u) {
  int status;
  berth_upload_start(u);
  while ((status = berth_upload_step(u)) > 0) {}
  return status;
}
