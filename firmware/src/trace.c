//! @file trace.c
//! The trace buffer and log capture.
#include "berth/config.h"
#include "berth/trace.h"

#include <string.h>

static uint8_t s_data[BERTH_TRACE_CAPACITY];
static size_t s_length;
static uint32_t s_dropped;

void berth_trace_write(const char *text, size_t length) {
  const size_t room = BERTH_TRACE_CAPACITY - s_length;
  const size_t take = length < room ? length : room;
  memcpy(s_data + s_length, text, take);
  s_length += take;
  s_dropped += (uint32_t)(length - take);
}

#if BERTH_LOG_CAPTURE
void berth_log(const char *line) {
  berth_trace_write(line, strlen(line));
  berth_trace_write("\n", 1);
}
#endif

size_t berth_trace_length(void) { return s_length; }
const uint8_t *berth_trace_data(void) { return s_data; }
uint32_t berth_trace_dropped(void) { return s_dropped; }

void berth_trace_clear(void) {
  s_length = 0;
  s_dropped = 0;
}

void berth_trace_consume(size_t length, uint32_t dropped) {
  if (length > s_length) length = s_length;
  memmove(s_data, s_data + length, s_length - length);
  s_length -= length;
  s_dropped = dropped < s_dropped ? s_dropped - dropped : 0;
}
