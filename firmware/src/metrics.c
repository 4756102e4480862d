//! @file metrics.c
//! The metrics buffer: a fixed array, no allocation; keys longer than BERTH_METRIC_KEY_MAX - 1 are cut.
#include "berth/metrics.h"

#include <string.h>

#include "berth/platform.h"

static berth_metric_t s_entries[BERTH_METRICS_CAPACITY];
static size_t s_count;
static size_t s_sealed; // entries [0, s_sealed) are being uploaded and never change
static uint32_t s_dropped;

static berth_metric_t *find(const char *key, berth_metric_kind_t kind) {
  for (size_t i = s_sealed; i < s_count; i++) {
    if (s_entries[i].kind == kind && strncmp(s_entries[i].key, key, BERTH_METRIC_KEY_MAX - 1) == 0) return &s_entries[i];
  }
  return NULL;
}

static berth_metric_t *add(const char *key, berth_metric_kind_t kind) {
  if (s_count == BERTH_METRICS_CAPACITY) {
    s_dropped++;
    return NULL;
  }
  berth_metric_t *entry = &s_entries[s_count++];
  strncpy(entry->key, key, BERTH_METRIC_KEY_MAX - 1);
  entry->key[BERTH_METRIC_KEY_MAX - 1] = '\0';
  entry->kind = kind;
  entry->value = 0;
  return entry;
}

static void record(const char *key, berth_metric_kind_t kind, int64_t value, int accumulate) {
  berth_metric_t *entry = kind == BERTH_METRIC_OBSERVE ? NULL : find(key, kind);
  if (entry == NULL) entry = add(key, kind);
  if (entry == NULL) return;
  entry->value = accumulate ? entry->value + value : value;
  entry->uptime_ms = berth_platform_uptime_ms();
}

void berth_metrics_gauge(const char *key, int64_t value) { record(key, BERTH_METRIC_GAUGE, value, 0); }
void berth_metrics_increment(const char *key, int64_t delta) { record(key, BERTH_METRIC_INCREMENT, delta, 1); }
void berth_metrics_observe(const char *key, int64_t value) { record(key, BERTH_METRIC_OBSERVE, value, 0); }

size_t berth_metrics_count(void) { return s_count; }
const berth_metric_t *berth_metrics_entries(void) { return s_entries; }
uint32_t berth_metrics_dropped(void) { return s_dropped; }
void berth_metrics_clear(void) {
  s_count = 0;
  s_sealed = 0;
}

size_t berth_metrics_seal(void) {
  s_sealed = s_count;
  return s_sealed;
}

void berth_metrics_consume(size_t count) {
  if (count > s_count) count = s_count;
  memmove(s_entries, s_entries + count, (s_count - count) * sizeof s_entries[0]);
  s_count -= count;
  s_sealed = 0;
}
