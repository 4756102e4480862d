//! @file trace.h
//! The trace buffer: BERTH_TRACE_CAPACITY (512) bytes of text, drained by each upload session. Bytes
//! that do not fit are dropped (the oldest are kept) and counted; the Trace chunk reports the count.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

void berth_trace_write(const char *text, size_t length);
#if BERTH_LOG_CAPTURE
//! Capture one log line (a newline is added).
void berth_log(const char *line);
#else
//! Log capture is off: the line is evaluated and discarded.
#define berth_log(line) ((void)(line))
#endif

size_t berth_trace_length(void);
const uint8_t *berth_trace_data(void);
//! Bytes dropped since the last upload because the buffer was full.
uint32_t berth_trace_dropped(void);
void berth_trace_clear(void);
//! The first `length` bytes and `dropped` of the dropped count were delivered: remove them, keep what
//! was written since.
void berth_trace_consume(size_t length, uint32_t dropped);
