//! @file records.c
//! Serializing the payloads. Avro: field values in schema order (zigzag longs, length-prefixed strings
//! and bytes, one array block). CBOR: a map of field names to values, shortest forms throughout.
#include "berth/records.h"

#include <string.h>

#include "berth/coredump.h"

static const char *const REBOOT_SYMBOLS[] = { "unknown", "power_on", "pin_reset", "software_reset", "watchdog", "hard_fault", "brown_out", "assert", "firmware_update", "low_power" };
static const char *const METRIC_SYMBOLS[] = { "gauge", "increment", "observe" };

#if BERTH_SERIALIZATION_CBOR

static void cbor_head(berth_buf_t *out, uint8_t major, uint64_t value) {
  const uint8_t type = (uint8_t)(major << 5);
  if (value < 24) {
    berth_buf_byte(out, (uint8_t)(type | value));
  } else if (value <= 0xff) {
    berth_buf_byte(out, (uint8_t)(type | 24));
    berth_buf_byte(out, (uint8_t)value);
  } else if (value <= 0xffff) {
    berth_buf_byte(out, (uint8_t)(type | 25));
    berth_buf_byte(out, (uint8_t)(value >> 8));
    berth_buf_byte(out, (uint8_t)value);
  } else if (value <= 0xffffffffu) {
    berth_buf_byte(out, (uint8_t)(type | 26));
    for (int shift = 24; shift >= 0; shift -= 8) berth_buf_byte(out, (uint8_t)(value >> shift));
  } else {
    berth_buf_byte(out, (uint8_t)(type | 27));
    for (int shift = 56; shift >= 0; shift -= 8) berth_buf_byte(out, (uint8_t)(value >> shift));
  }
}

static void text(berth_buf_t *out, const char *s) {
  const size_t n = strlen(s);
  cbor_head(out, 3, n);
  berth_buf_put(out, s, n);
}

static void field_long(berth_buf_t *out, const char *name, int64_t v) {
  text(out, name);
  if (v >= 0) cbor_head(out, 0, (uint64_t)v);
  else cbor_head(out, 1, (uint64_t)(-(v + 1)));
}

static void field_text(berth_buf_t *out, const char *name, const char *value) {
  text(out, name);
  text(out, value);
}

#define RECORD(out, fields) cbor_head(out, 5, fields)
#define LONG(out, name, v) field_long(out, name, v)
#define STRING(out, name, s) field_text(out, name, s)
#define ENUM(out, name, symbols, i) field_text(out, name, symbols[i])
#define BYTES_HEAD(out, name, n) (text(out, name), cbor_head(out, 2, n))

#else

static void avro_long(berth_buf_t *out, int64_t v) {
  berth_buf_varint(out, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void avro_string(berth_buf_t *out, const char *s) {
  const size_t n = strlen(s);
  avro_long(out, (int64_t)n);
  berth_buf_put(out, s, n);
}

#define RECORD(out, fields) ((void)(out), (void)(fields))
#define LONG(out, name, v) avro_long(out, v)
#define STRING(out, name, s) avro_string(out, s)
#define ENUM(out, name, symbols, i) ((void)(symbols), avro_long(out, (int64_t)(i)))
#define BYTES_HEAD(out, name, n) avro_long(out, (int64_t)(n))

#endif

void berth_encode_device_info(berth_buf_t *out, const void *record) {
  const berth_device_info_t *info = (const berth_device_info_t *)record;
  RECORD(out, 5);
  STRING(out, "serial", info->serial);
  STRING(out, "hardware_version", info->hardware_version);
  STRING(out, "software_type", info->software_type);
  STRING(out, "software_version", info->software_version);
  STRING(out, "build_id", info->build_id);
}

void berth_encode_reboot_reason(berth_buf_t *out, const void *record) {
  const berth_reboot_t *r = (const berth_reboot_t *)record;
  RECORD(out, 4);
  ENUM(out, "reason", REBOOT_SYMBOLS, r->reason);
  LONG(out, "boot_count", r->boot_count);
  LONG(out, "pc", r->pc);
  LONG(out, "lr", r->lr);
}

#if BERTH_COREDUMP
/** The FaultRecord's coredump fields: the regions (address and bytes each), then the bytes cut. */
static void encode_coredump(berth_buf_t *out, const berth_coredump_t *c) {
  const uint32_t regions = c == NULL ? 0 : c->regions;
#if BERTH_SERIALIZATION_CBOR
  text(out, "coredump");
  cbor_head(out, 4, regions);
#else
  if (regions > 0) avro_long(out, regions);
#endif
  for (uint32_t i = 0; i < regions; i++) {
    RECORD(out, 2);
    LONG(out, "address", (int64_t)c->region[i].address);
    BYTES_HEAD(out, "data", c->region[i].length);
    berth_buf_put(out, berth_coredump_bytes(c, i), c->region[i].length);
  }
#if !BERTH_SERIALIZATION_CBOR
  avro_long(out, 0);
#endif
  LONG(out, "coredump_truncated", c == NULL ? 0 : c->truncated);
}
#endif

#if BERTH_FAULT_CAPTURE
void berth_encode_fault_record(berth_buf_t *out, const void *record) {
  const berth_fault_t *f = (const berth_fault_t *)record;
  RECORD(out, BERTH_COREDUMP ? 12 : 10);
  LONG(out, "pc", f->pc);
  LONG(out, "lr", f->lr);
  LONG(out, "sp", f->sp);
  LONG(out, "psr", f->psr);
  LONG(out, "cfsr", f->cfsr);
  LONG(out, "hfsr", f->hfsr);
  LONG(out, "mmfar", f->mmfar);
  LONG(out, "bfar", f->bfar);
  LONG(out, "uptime_ms", f->uptime_ms);
#if BERTH_FAULT_STACK_WORDS > 0
  const uint32_t words = f->stack_words < BERTH_FAULT_STACK_WORDS ? f->stack_words : BERTH_FAULT_STACK_WORDS;
  BYTES_HEAD(out, "stack", 4 * words);
  for (uint32_t i = 0; i < words; i++) berth_buf_u32le(out, f->stack[i]); // little-endian, as in memory
#else
  BYTES_HEAD(out, "stack", 0);
#endif
#if BERTH_COREDUMP
  encode_coredump(out, f->coredump);
#endif
}
#endif

void berth_encode_metrics(berth_buf_t *out, const void *record) {
  const berth_metrics_t *m = (const berth_metrics_t *)record;
  RECORD(out, 2);
  LONG(out, "uptime_ms", m->uptime_ms);
#if BERTH_SERIALIZATION_CBOR
  text(out, "entries");
  cbor_head(out, 4, m->count);
#else
  if (m->count > 0) avro_long(out, (int64_t)m->count);
#endif
  for (size_t i = 0; i < m->count; i++) {
    const berth_metric_t *e = &m->entries[i];
    RECORD(out, 4);
    STRING(out, "key", e->key);
    ENUM(out, "kind", METRIC_SYMBOLS, e->kind);
    LONG(out, "value", e->value);
    LONG(out, "uptime_ms", e->uptime_ms);
  }
#if !BERTH_SERIALIZATION_CBOR
  avro_long(out, 0);
#endif
}

void berth_encode_trace(berth_buf_t *out, const void *record) {
  const berth_trace_t *t = (const berth_trace_t *)record;
  RECORD(out, 3);
  LONG(out, "uptime_ms", t->uptime_ms);
  LONG(out, "dropped", t->dropped);
  BYTES_HEAD(out, "data", t->length);
  berth_buf_put(out, t->data, t->length);
}

void berth_encode_heartbeat(berth_buf_t *out, const void *record) {
  const berth_heartbeat_t *h = (const berth_heartbeat_t *)record;
  RECORD(out, 2);
  LONG(out, "uptime_ms", h->uptime_ms);
  LONG(out, "boot_count", h->boot_count);
}
