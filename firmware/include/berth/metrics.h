//! @file metrics.h
//! The metrics buffer: BERTH_METRICS_CAPACITY (32) entries, drained by each upload session.
//! - gauge: the latest value of a key (one entry per key, updated in place);
//! - increment: a counter per key (one entry, the deltas added up);
//! - observe: one entry per sample.
//! When the buffer is full a new entry is dropped and counted (berth_metrics_dropped), never an old one.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/records.h"

void berth_metrics_gauge(const char *key, int64_t value);
void berth_metrics_increment(const char *key, int64_t delta);
void berth_metrics_observe(const char *key, int64_t value);

//! Entries held now, and the entries themselves (for the upload).
size_t berth_metrics_count(void);
const berth_metric_t *berth_metrics_entries(void);
//! Entries dropped since boot because the buffer was full.
uint32_t berth_metrics_dropped(void);
//! Empty the buffer.
void berth_metrics_clear(void);
//! Freeze the entries held now (an upload is sending them): later records of their keys start new
//! entries after them instead of changing them, so a retried chunk holds the same values. Returns how
//! many are frozen.
size_t berth_metrics_seal(void);
//! The first `count` entries were delivered: remove them, keep what was recorded since, unfreeze.
void berth_metrics_consume(size_t count);
