//! @file upload.c
//! The upload session as a small state machine: each step sends one chunk in the spec's order. A
//! chunk keeps its sequence number across retries of a session, so a retried chunk is recognized.
#include "berth/upload.h"

#include "berth/metrics.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth/trace.h"

enum { STEP_INFO, STEP_REBOOT, STEP_FAULT, STEP_METRICS, STEP_TRACE, STEP_HEARTBEAT, STEP_DONE };

typedef struct { berth_reboot_reason_t reason; int64_t boot_count; uint32_t pc, lr; } reboot_t;
typedef struct { int64_t uptime_ms; const berth_metric_t *entries; size_t count; } metrics_t;
typedef struct { int64_t uptime_ms; int64_t dropped; const uint8_t *data; size_t length; } trace_t;
typedef struct { int64_t uptime_ms; int64_t boot_count; } heartbeat_t;

static void encode_info(berth_buf_t *out, const void *r) { berth_encode_device_info(out, (const berth_device_info_t *)r); }
static void encode_fault(berth_buf_t *out, const void *r) { berth_encode_fault_record(out, (const berth_fault_t *)r); }
static void encode_reboot(berth_buf_t *out, const void *r) {
  const reboot_t *x = (const reboot_t *)r;
  berth_encode_reboot_reason(out, x->reason, x->boot_count, x->pc, x->lr);
}
static void encode_metrics(berth_buf_t *out, const void *r) {
  const metrics_t *x = (const metrics_t *)r;
  berth_encode_metrics(out, x->uptime_ms, x->entries, x->count);
}
static void encode_trace(berth_buf_t *out, const void *r) {
  const trace_t *x = (const trace_t *)r;
  berth_encode_trace(out, x->uptime_ms, x->dropped, x->data, x->length);
}
static void encode_heartbeat(berth_buf_t *out, const void *r) {
  const heartbeat_t *x = (const heartbeat_t *)r;
  berth_encode_heartbeat(out, x->uptime_ms, x->boot_count);
}

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
      return send(u, BERTH_CHUNK_DEVICE_INFO, encode_info, u->info);
    case STEP_REBOOT: {
      if (u->reboot_reported) return 0;
      berth_fault_t fault;
      const bool faulted = berth_fault_pending(&fault);
      const reboot_t r = { berth_reboot_reason(), berth_boot_count(), faulted ? fault.pc : 0, faulted ? fault.lr : 0 };
      return send(u, BERTH_CHUNK_REBOOT_REASON, encode_reboot, &r);
    }
    case STEP_FAULT: {
      berth_fault_t fault;
      return berth_fault_pending(&fault) ? send(u, BERTH_CHUNK_FAULT_RECORD, encode_fault, &fault) : 0;
    }
    case STEP_METRICS: {
      const metrics_t m = { now, berth_metrics_entries(), berth_metrics_count() };
      return m.count > 0 ? send(u, BERTH_CHUNK_METRICS, encode_metrics, &m) : 0;
    }
    case STEP_TRACE: {
      const trace_t t = { now, berth_trace_dropped(), berth_trace_data(), berth_trace_length() };
      return t.length > 0 || t.dropped > 0 ? send(u, BERTH_CHUNK_TRACE, encode_trace, &t) : 0;
    }
    default: {
      const heartbeat_t h = { now, berth_boot_count() };
      return send(u, BERTH_CHUNK_HEARTBEAT, encode_heartbeat, &h);
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
