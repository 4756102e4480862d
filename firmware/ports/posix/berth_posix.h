//! @file berth_posix.h
//! The POSIX port, for host tests and Linux devices: uptime from CLOCK_MONOTONIC, retained RAM in a
//! static array (a "reset" longjmps back to the test's boot point), a device id set at start, entropy
//! from /dev/urandom (BERTH_PLATFORM_ENTROPY), the reset cause the caller sets
//! (BERTH_PLATFORM_RESET_CAUSE), and the HTTP transport over POSIX sockets (BERTH_TRANSPORT_HTTP) with
//! the OTA update check and the image's download (ota.c).
#pragma once
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"
#include "berth/records.h"
#include "berth/sha256.h"
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

//! A TCP connection to the server `http` names (answers waited for 10 s at most), or -1.
int berth_posix_connect(const berth_http_t *http);
//! Send all of `data` on `fd`; 0, or -1 when the connection failed.
int berth_posix_send_all(int fd, const void *data, size_t length);

//! An update the server offers this device (GET /ota/update).
typedef struct {
  char release[40];
  char version[65];
  uint32_t size;
  uint8_t sha256[32];
  char url[160];
} berth_ota_offer_t;

//! A download into the update slot. The port supplies `write` (its flash hook: write `length` bytes at
//! `offset` of the slot, 0 on success) and, when it boots the image, does the flashing or the bank
//! swap itself. Keep the struct between calls: a transfer that broke off resumes at `received`, with
//! the digest of what is in the slot so far (after a reset, either start again with
//! berth_ota_download_start or hash the slot's first `received` bytes into `digest` first).
typedef struct {
  int (*write)(void *context, uint32_t offset, const uint8_t *bytes, size_t length);
  void *context;
  uint32_t received;
  berth_sha256_t digest;
} berth_ota_download_t;

#define BERTH_OTA_NONE 0          //!< no update offered
#define BERTH_OTA_OFFERED 1       //!< an update is offered: `offer` is filled in
#define BERTH_OTA_READY 2         //!< the whole image is in the slot and its SHA-256 is the offer's
#define BERTH_OTA_CORRUPT (-10)   //!< the image's SHA-256 differs: the slot was started over (received = 0)
#define BERTH_OTA_WRITE_FAILED (-11) //!< the port's write failed; what it took is kept (call again to resume)

//! Ask the server whether an update is offered to `device`: BERTH_OTA_OFFERED, BERTH_OTA_NONE, or
//! BERTH_SEND_FAILED (no answer) / BERTH_SEND_UNCERTAIN (an answer that is not one).
int berth_ota_check(berth_http_t *http, const uint8_t device[8], berth_ota_offer_t *offer);
//! Start a download of `offer` from its first byte.
void berth_ota_download_start(berth_ota_download_t *download);
//! Fetch the rest of the image (HTTP Range from `received`) into the slot: BERTH_OTA_READY once it is
//! all there and verified; BERTH_OTA_CORRUPT; BERTH_OTA_WRITE_FAILED; BERTH_SEND_FAILED or
//! BERTH_SEND_UNCERTAIN when the transfer broke (call again: it resumes).
int berth_ota_download(berth_http_t *http, const berth_ota_offer_t *offer, berth_ota_download_t *download);
#endif
