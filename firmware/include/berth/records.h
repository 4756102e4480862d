//! @file records.h
//! The six chunk payloads of docs/chunk-format.md and their serialization: Avro binary, or CBOR maps
//! when BERTH_SERIALIZATION_CBOR is set. Strings are NUL-terminated; longs are int64_t. The FaultRecord
//! exists with BERTH_FAULT_CAPTURE only; it carries the coredump's regions with BERTH_COREDUMP.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/buffer.h"
#include "berth/config.h"

typedef enum {
  BERTH_CHUNK_DEVICE_INFO = 1,
  BERTH_CHUNK_REBOOT_REASON = 2,
  BERTH_CHUNK_FAULT_RECORD = 3,
  BERTH_CHUNK_METRICS = 4,
  BERTH_CHUNK_TRACE = 5,
  BERTH_CHUNK_HEARTBEAT = 6
} berth_chunk_type_t;

typedef enum {
  BERTH_REBOOT_UNKNOWN = 0,
  BERTH_REBOOT_POWER_ON = 1,
  BERTH_REBOOT_PIN_RESET = 2,
  BERTH_REBOOT_SOFTWARE_RESET = 3,
  BERTH_REBOOT_WATCHDOG = 4,
  BERTH_REBOOT_HARD_FAULT = 5,
  BERTH_REBOOT_BROWN_OUT = 6,
  BERTH_REBOOT_ASSERT = 7,
  BERTH_REBOOT_FIRMWARE_UPDATE = 8,
  BERTH_REBOOT_LOW_POWER = 9
} berth_reboot_reason_t;

typedef enum { BERTH_METRIC_GAUGE = 0, BERTH_METRIC_INCREMENT = 1, BERTH_METRIC_OBSERVE = 2 } berth_metric_kind_t;

typedef struct {
  const char *serial;
  const char *hardware_version;
  const char *software_type;
  const char *software_version;
  //! GNU build id in lowercase hex, "" when unknown.
  const char *build_id;
} berth_device_info_t;

#if BERTH_FAULT_CAPTURE
typedef struct {
  uint32_t pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar;
  int64_t uptime_ms;
#if BERTH_FAULT_STACK_WORDS > 0
  //! The stack snapshot: `stack_words` words from `sp` upwards (at most BERTH_FAULT_STACK_WORDS).
  uint32_t stack_words;
  uint32_t stack[BERTH_FAULT_STACK_WORDS];
#endif
#if BERTH_COREDUMP
  //! The coredump sent with the fault (coredump.h), NULL when none.
  const struct berth_coredump *coredump;
#endif
} berth_fault_t;
#endif

typedef struct {
  char key[BERTH_METRIC_KEY_MAX];
  berth_metric_kind_t kind;
  int64_t value;
  int64_t uptime_ms;
} berth_metric_t;

typedef struct {
  berth_reboot_reason_t reason;
  int64_t boot_count;
  //! Of the fault that caused the reboot, 0 otherwise.
  uint32_t pc, lr;
} berth_reboot_t;

typedef struct {
  int64_t uptime_ms;
  const berth_metric_t *entries;
  size_t count;
} berth_metrics_t;

typedef struct {
  int64_t uptime_ms;
  //! Bytes the trace buffer dropped.
  int64_t dropped;
  const uint8_t *data;
  size_t length;
} berth_trace_t;

typedef struct {
  int64_t uptime_ms;
  int64_t boot_count;
} berth_heartbeat_t;

//! Serializers of the records, one per chunk type; `record` points to the type named. They have the
//! signature of berth_encoder_t (chunk.h), so a chunk can serialize its record twice (count, then send).
void berth_encode_device_info(berth_buf_t *out, const void *record);   // berth_device_info_t
void berth_encode_reboot_reason(berth_buf_t *out, const void *record); // berth_reboot_t
#if BERTH_FAULT_CAPTURE
void berth_encode_fault_record(berth_buf_t *out, const void *record);  // berth_fault_t
#endif
void berth_encode_metrics(berth_buf_t *out, const void *record);       // berth_metrics_t
void berth_encode_trace(berth_buf_t *out, const void *record);         // berth_trace_t
void berth_encode_heartbeat(berth_buf_t *out, const void *record);     // berth_heartbeat_t

//! The flags bit the serialization sets (4 for CBOR, 0 for Avro).
#define BERTH_SERIALIZATION_FLAG (BERTH_SERIALIZATION_CBOR ? 0x04 : 0x00)
