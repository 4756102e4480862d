//! @file berth_posix.h
//! The POSIX port, for host tests and Linux devices: uptime from CLOCK_MONOTONIC, retained RAM in a
//! static array (a "reset" longjmps back to the test's boot point), a device id set at start, entropy
//! from /dev/urandom (BERTH_PLATFORM_ENTROPY), the reset cause the caller sets
//! (BERTH_PLATFORM_RESET_CAUSE), and the HTTP transport over POSIX sockets (BERTH_TRANSPORT_HTTP).
#pragma once
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"
#include "berth/records.h"
#include "berth/transport.h"

//! Set the id berth_platform_device_id() returns.
void berth_posix_set_device_id(const uint8_t id[8]);
//! Where berth_platform_reset() jumps to (0 = exit the process instead).
void berth_posix_on_reset(jmp_buf *target);
//! A power cycle: retained RAM loses its record (cleared when `noise` is 0, else filled with bytes
//! drawn from it, as real SRAM powers up), then a reset.
void berth_posix_power_cycle(uint32_t noise);

#if BERTH_PLATFORM_RESET_CAUSE
//! What berth_platform_reset_cause() answers from now on (BERTH_REBOOT_UNKNOWN at start): on a Linux
//! device, what its reset-cause source says (a watchdog's bootstatus, a board register); in host
//! tests, the cause of the next simulated reset.
void berth_posix_set_reset_cause(berth_reboot_reason_t cause);
#endif

#if BERTH_TRANSPORT_HTTP
typedef struct {
  const char *host;   // an IPv4 address, e.g. "127.0.0.1"
  uint16_t port;
  const char *api_key;
  uint8_t *buffer;    // frames gathered for one request
  size_t capacity;
  size_t length;
  //! Post each frame as soon as it is complete (a link that delivers frame by frame), not the session's
  //! frames together when it ends.
  bool per_frame;
  //! The last answer's status code and body (0 when the server could not be reached).
  int status;
  char response[2048];
} berth_http_t;

//! Frames gathered in `http->buffer`, posted to /ingest/chunks with X-API-Key when the session ends (or
//! each frame, with `per_frame`). Results: see transport.h; the request waits 10 s for its answer.
berth_transport_t berth_http_transport(berth_http_t *http);
#endif
