//! @file session.c
//! Upload sessions against a real server, as a device on the POSIX port would run them:
//!   session <host> <port> <api key> transports <device hex> <device hex for CCM> <key hex>
//!     1. boot (power on), record metrics and log lines, upload over HTTP;
//!     2. a hard fault is recorded and the device resets; the next session goes over a LoRa link
//!        (51-byte packets: 25 payload bytes per fragment) with RLE, its frames posted over HTTP;
//!     3. a second device, registered for encryption, uploads over a BLE link (20-byte notifications,
//!        each frame spread over several) with RLE and AES-128-CCM.
//!   session <host> <port> <api key> retry <device hex>
//!     frames posted one by one; the answer to the Trace frame is lost (the frame was stored), more is
//!     recorded, the session is retried and completes, and a second session carries what came later.
//!   session <host> <port> <api key> gap <device hex>
//!     frames of at most 24 payload bytes posted one by one; after the first fragment of the first
//!     fragmented chunk the device goes quiet until a line comes on stdin (meanwhile the server drops
//!     that fragment for its age); the next fragment is refused with `retry`, the session ends
//!     uncertain, and its retry sends the whole chunk again, which the server stores.
//!   session <host> <port> <api key> ota <device hex> <version> [crash]
//!     boots on <version> and reports it, asks for an update, downloads it into a RAM slot whose write
//!     fails part-way once (the download resumes by range), checks its SHA-256, reboots into it and
//!     reports the new version (with `crash`, then crashes twice, each fault uploaded after its reset),
//!     and asks again: nothing more is offered.
//!   session <host> <port> <api key> power <device hex> <zeros|noise>
//!     two power-on boots, each with the same session; between them retained RAM is cleared (zeros) or
//!     powers up as noise. Built with BERTH_PLATFORM_ENTROPY=1, the port adds /dev/urandom.
//! Prints `ok - ...` / `not ok - ...` lines, and each answer of the server. It needs the HTTP transport,
//! and `transports` the LoRa and BLE transports, RLE, CCM and fault capture: in a build that leaves out
//! what a mode needs, the mode says so and exits with 2.
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "berth/metrics.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth/trace.h"
#include "berth/transports.h"
#include "berth/upload.h"
#include "berth_posix.h"
#include "hex.h"

#if BERTH_TRANSPORT_HTTP

//! Whether the build has all that the transports mode uses.
#define TRANSPORTS_MODE (BERTH_TRANSPORT_LORA && BERTH_TRANSPORT_BLE && BERTH_COMPRESSION && BERTH_ENCRYPTION && BERTH_FAULT_CAPTURE)

static uint8_t s_body[16384];
static berth_http_t s_http;
static const berth_device_info_t INFO = { "SN-C-0001", "evt-2", "c-sdk-test", "0.1.0", "" };
static jmp_buf s_reset;

/** The body of the last answer. */
static const char *answer(void) {
  const char *body = strstr(s_http.response, "\r\n\r\n");
  return body != NULL ? body + 4 : "(no answer)";
}

static void report(int status, const char *what) {
  printf("%sok - %s (HTTP %d, status %d)\n", status == 0 ? "" : "not ", what, s_http.status, status);
  printf("# %s\n", answer());
}

static void expect(int ok, const char *what) {
  printf("%sok - %s\n", ok ? "" : "not ", what);
}

#if TRANSPORTS_MODE
/** A radio link whose packets go into the HTTP request of the session. */
static int into_http(void *context, const uint8_t *packet, size_t length) {
  berth_transport_t *http = (berth_transport_t *)context;
  return http->write(http, packet, length, true);
}

static int radio_flush(berth_transport_t *t) {
  berth_packet_link_t *link = (berth_packet_link_t *)t->context;
  berth_transport_t *http = (berth_transport_t *)link->context;
  return http->flush(http);
}

static void transports(berth_transport_t *http, const uint8_t device[8], const uint8_t ccm_device[8], const uint8_t key[16]) {
  static volatile int boots;
  berth_posix_set_device_id(device);
  berth_posix_on_reset(&s_reset);
  setjmp(s_reset);
  boots++;
  berth_boot(5000);
  if (boots == 1) {
    berth_metrics_gauge("battery_mv", 3650);
    berth_metrics_increment("tx_packets", 3);
    berth_metrics_increment("tx_packets", 4);
    berth_metrics_observe("loop_us", 812);
    berth_log("boot ok");
    berth_log("sensor ready");
    berth_upload_t session = { .transport = http, .options = { false, NULL }, .info = &INFO };
    report(berth_upload(&session), "session 1 over HTTP: device info, reboot, metrics, trace, heartbeat");
    const berth_fault_t fault = { .pc = 0x08000a11, .lr = 0x08000b23, .sp = 0x20001fe0, .psr = 0x21000000, .cfsr = 0x0400, .hfsr = 0x40000000, .mmfar = 0, .bfar = 0, .uptime_ms = 1234 };
    berth_fault_record(&fault);
    berth_platform_reset();
  }
  berth_packet_link_t lora_link = { .send_packet = into_http, .context = http };
  berth_transport_t lora = berth_lora_transport(&lora_link);
  lora.flush = radio_flush;
  berth_upload_t after_fault = { .transport = &lora, .options = { true, NULL }, .info = &INFO };
  report(berth_upload(&after_fault), "session 2 over LoRa (51-byte packets, RLE): reboot reason, fault, heartbeat");

  berth_posix_set_device_id(ccm_device);
  berth_boot(9000);
  berth_log("encrypted hello");
  berth_packet_link_t ble_link = { .send_packet = into_http, .context = http };
  berth_transport_t ble = berth_ble_transport(&ble_link);
  ble.flush = radio_flush;
  berth_upload_t sealed = { .transport = &ble, .options = { true, key }, .info = &INFO };
  report(berth_upload(&sealed), "session 3 over BLE (20-byte notifications, RLE, AES-128-CCM)");
}
#endif

/** HTTP posting each frame, whose answer to the first Trace frame is lost after the server took it. */
static int s_trace_answers_lost;
static int lossy_write(berth_transport_t *t, const uint8_t *bytes, size_t length, bool end_of_frame) {
  static bool trace_frame, at_start = true;
  berth_transport_t *http = (berth_transport_t *)t->context;
  if (at_start) trace_frame = bytes[3] == BERTH_CHUNK_TRACE; // a frame's header comes as its first piece
  at_start = end_of_frame;
  const int status = http->write(http, bytes, length, end_of_frame);
  if (status != 0 || !end_of_frame || !trace_frame || s_trace_answers_lost > 0) return status;
  s_trace_answers_lost++;
  return BERTH_SEND_UNCERTAIN;
}

/** A boot of `device` (no reset handler) whose sessions post each frame as it is complete. */
static void boot_posting_frames(const uint8_t device[8], uint32_t seed) {
  berth_posix_set_device_id(device);
  berth_posix_on_reset(NULL);
  berth_boot(seed);
  s_http.per_frame = true;
}

static void retry(berth_transport_t *http, const uint8_t device[8]) {
  boot_posting_frames(device, 7000);
  berth_transport_t lossy = { 0, lossy_write, NULL, http };
  berth_metrics_gauge("battery_mv", 3700);
  berth_metrics_increment("tx_packets", 2);
  berth_log("before the failure");
  berth_upload_t session = { .transport = &lossy, .options = { false, NULL }, .info = &INFO };
  const int failed = berth_upload(&session);
  expect(failed == BERTH_SEND_UNCERTAIN, "the session fails at the Trace frame, uncertain whether it arrived");
  berth_metrics_gauge("battery_mv", 3600);
  berth_metrics_increment("tx_packets", 5);
  berth_metrics_observe("retry_us", 77);
  berth_log("between the attempts");
  report(berth_upload(&session), "the session retried: what was sent goes again, unchanged, as retransmissions");
  expect(berth_metrics_count() == 3 && berth_trace_length() == strlen("between the attempts\n"), "what was recorded between the attempts is kept");
  report(berth_upload(&session), "the next session carries it");
  expect(berth_metrics_count() == 0 && berth_trace_length() == 0, "and the buffers are empty");
  s_http.per_frame = false;
}

/** HTTP posting each frame; after the first fragment of the first fragmented chunk, quiet until a line comes on stdin. */
static int quiet_write(berth_transport_t *t, const uint8_t *bytes, size_t length, bool end_of_frame) {
  static bool first_fragment, at_start = true, was_quiet;
  berth_transport_t *http = (berth_transport_t *)t->context;
  if (at_start) first_fragment = bytes[6] > 1 && bytes[5] == 0; // the header: fragment index, then count
  at_start = end_of_frame;
  const int status = http->write(http, bytes, length, end_of_frame);
  if (status != 0 || !end_of_frame || !first_fragment || was_quiet) return status;
  was_quiet = true;
  printf("# quiet after the first fragment: %s\n", answer());
  fflush(stdout);
  char line[8];
  if (fgets(line, sizeof line, stdin) == NULL) return BERTH_SEND_FAILED;
  return status;
}

static void gap(berth_transport_t *http, const uint8_t device[8]) {
  boot_posting_frames(device, 9000);
  berth_transport_t quiet = { 24, quiet_write, NULL, http };
  berth_metrics_gauge("battery_mv", 3500);
  berth_upload_t session = { .transport = &quiet, .options = { false, NULL }, .info = &INFO };
  const int failed = berth_upload(&session);
  printf("# the later fragment's answer: %s\n", answer());
  expect(failed == BERTH_SEND_UNCERTAIN, "a later fragment of a chunk whose first was dropped is refused with retry: the session ends uncertain");
  report(berth_upload(&session), "the session retried: the whole chunk goes again, from its first fragment");
  s_http.per_frame = false;
}

static void power(berth_transport_t *http, const uint8_t device[8], bool noise) {
  static volatile int boots;
  berth_posix_set_device_id(device);
  berth_posix_on_reset(&s_reset);
  setjmp(s_reset);
  boots++;
  berth_boot(3000); // the same seed at every power-on: the port has no clock or counter to give
  berth_metrics_increment("boots", 1);
  berth_upload_t session = { .transport = http, .options = { false, NULL }, .info = &INFO };
  report(berth_upload(&session), boots == 1 ? "first power-on: a session" : "second power-on: the same session");
  if (boots == 1) {
    berth_metrics_clear(); // RAM is lost with the power
    berth_trace_clear();
    berth_posix_power_cycle(noise ? 0x5eed1234u : 0);
  }
  berth_posix_on_reset(NULL);
}

/** The update slot: the image goes here; its write fails once past `s_slot_fail_after` (a power loss part-way). */
static uint8_t s_slot[65536];
static uint32_t s_slot_fail_after;
static int slot_write(void *context, uint32_t offset, const uint8_t *bytes, size_t length) {
  (void)context;
  if (offset + length > sizeof s_slot) return -1;
  if (s_slot_fail_after != 0 && offset + length > s_slot_fail_after) {
    s_slot_fail_after = 0;
    return -1;
  }
  memcpy(s_slot + offset, bytes, length);
  return 0;
}

static void ota(berth_transport_t *http, const uint8_t device[8], const char *version, bool crash) {
  static volatile int boots;
  static char running[65];
  berth_posix_set_device_id(device);
  berth_posix_on_reset(&s_reset);
  setjmp(s_reset);
  boots++;
  if (boots == 1) snprintf(running, sizeof running, "%s", version);
  berth_boot(11000);
  const berth_device_info_t info = { INFO.serial, INFO.hardware_version, "main", running, "" };
  berth_upload_t session = { .transport = http, .options = { false, NULL }, .info = &info };
  printf("# boot %d on %s\n", boots, running);
  report(berth_upload(&session), boots == 1 ? "a session on the version it runs" : boots == 2 ? "after the update, a session reports the new version" : "a session carries the crash");
  if (boots == 1) {
    berth_ota_offer_t offer;
    const int checked = berth_ota_check(&s_http, device, &offer);
    expect(checked == BERTH_OTA_OFFERED, "the server offers an update");
    if (checked != BERTH_OTA_OFFERED) return;
    printf("# offered %s: %lu bytes at %s\n", offer.version, (unsigned long)offer.size, offer.url);
    berth_ota_download_t download = { .write = slot_write, .context = NULL };
    berth_ota_download_start(&download);
    s_slot_fail_after = offer.size / 3;
    const int broken = berth_ota_download(&s_http, &offer, &download);
    expect(broken == BERTH_OTA_WRITE_FAILED && download.received > 0 && download.received < offer.size, "the slot's write fails part-way (power lost): what it took is kept");
    printf("# %lu of %lu bytes in the slot\n", (unsigned long)download.received, (unsigned long)offer.size);
    expect(berth_ota_download(&s_http, &offer, &download) == BERTH_OTA_READY, "the download resumes where it stopped; the image's SHA-256 is the offer's");
    snprintf(running, sizeof running, "%s", offer.version); // the port would flash the slot here and boot it
    berth_reboot(BERTH_REBOOT_FIRMWARE_UPDATE);
  }
#if !BERTH_FAULT_CAPTURE
  (void)crash;
#else
  if (crash && boots < 4) {
    const berth_fault_t fault = { .pc = 0x08000c01, .lr = 0x08000b23, .sp = 0x20001fe0, .psr = 0x21000000, .cfsr = 1u << 17, .hfsr = 0x40000000, .mmfar = 0, .bfar = 0, .uptime_ms = 4321 };
    berth_fault_record(&fault);
    berth_platform_reset();
  }
#endif
  berth_ota_offer_t again;
  expect(berth_ota_check(&s_http, device, &again) == BERTH_OTA_NONE, "on the new version, nothing more is offered");
  berth_posix_on_reset(NULL);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: session <host> <port> <api key> transports|retry|gap|ota|power <device hex> ...\n");
    return 2;
  }
  s_http = (berth_http_t){ .host = argv[1], .api_key = argv[3], .buffer = s_body, .capacity = sizeof s_body };
  sscanf(argv[2], "%hu", &s_http.port);
  berth_transport_t http = berth_http_transport(&s_http);
  const char *mode = argv[4];
  uint8_t device[8];
  if (strlen(argv[5]) != 16) {
    fprintf(stderr, "device ids are 16 hex digits\n");
    return 2;
  }
  unhex(argv[5], device);
  if (strcmp(mode, "transports") == 0 && argc == 8 && strlen(argv[6]) == 16 && strlen(argv[7]) == 32) {
#if TRANSPORTS_MODE
    uint8_t ccm_device[8], key[16];
    unhex(argv[6], ccm_device);
    unhex(argv[7], key);
    transports(&http, device, ccm_device, key);
#else
    fprintf(stderr, "session: this build leaves out what the transports mode uses\n");
    return 2;
#endif
  } else if (strcmp(mode, "retry") == 0) {
    retry(&http, device);
  } else if (strcmp(mode, "gap") == 0) {
    gap(&http, device);
  } else if (strcmp(mode, "ota") == 0 && (argc == 7 || argc == 8)) {
    ota(&http, device, argv[6], argc == 8 && strcmp(argv[7], "crash") == 0);
  } else if (strcmp(mode, "power") == 0 && argc == 7) {
    power(&http, device, strcmp(argv[6], "noise") == 0);
  } else {
    fprintf(stderr, "session: unknown mode or arguments\n");
    return 2;
  }
  return 0;
}

#else

int main(void) {
  fprintf(stderr, "session: this build leaves out the HTTP transport (BERTH_TRANSPORT_HTTP=0)\n");
  return 2;
}

#endif
