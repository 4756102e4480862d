//! @file session.c
//! Upload sessions against a real server, as a device on the POSIX port would run them:
//!   session <host> <port> <api key> <device hex> <device hex for CCM> <key hex>
//! 1. boot (power on), record metrics and log lines, upload over HTTP;
//! 2. a hard fault is recorded and the device resets; the next session goes over a LoRa link (51-byte
//!    fragments) with RLE, its frames posted through the HTTP transport;
//! 3. a second device, registered for encryption, uploads over a BLE link (20-byte fragments) with RLE
//!    and AES-128-CCM.
//! Prints `ok - ...` / `not ok - ...` lines, and each answer of the server.
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

static uint8_t s_body[16384];
static berth_http_t s_http;

/** A radio link whose packets (one frame each) go into the HTTP request of the session. */
static int into_http(void *context, const uint8_t *packet, size_t length) {
  berth_transport_t *http = (berth_transport_t *)context;
  return http->write(http, packet, length, true);
}

static int radio_flush(berth_transport_t *t) {
  berth_packet_link_t *link = (berth_packet_link_t *)t->context;
  berth_transport_t *http = (berth_transport_t *)link->context;
  return http->flush(http);
}

static void report(int status, const char *what) {
  printf("%sok - %s (HTTP %d)\n", status == 0 ? "" : "not ", what, s_http.status);
  const char *body = strstr(s_http.response, "\r\n\r\n");
  printf("# %s\n", body != NULL ? body + 4 : "(no answer)");
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: session <host> <port> <api key> <device hex> <ccm device hex> <key hex>\n");
    return 2;
  }
  s_http = (berth_http_t){ .host = argv[1], .api_key = argv[3], .buffer = s_body, .capacity = sizeof s_body };
  sscanf(argv[2], "%hu", &s_http.port);
  uint8_t device[8], ccm_device[8], key[16];
  if (strlen(argv[4]) != 16 || strlen(argv[5]) != 16 || strlen(argv[6]) != 32) {
    fprintf(stderr, "device ids are 16 hex digits, the key 32\n");
    return 2;
  }
  unhex(argv[4], device);
  unhex(argv[5], ccm_device);
  unhex(argv[6], key);
  const berth_device_info_t info = { "SN-C-0001", "evt-2", "c-sdk-test", "0.1.0", "" };
  berth_transport_t http = berth_http_transport(&s_http);
  berth_posix_set_device_id(device);

  static jmp_buf reset;
  static volatile int boots;
  berth_posix_on_reset(&reset);
  setjmp(reset);
  boots++;
  berth_boot(5000);
  if (boots == 1) {
    berth_metrics_gauge("battery_mv", 3650);
    berth_metrics_increment("tx_packets", 3);
    berth_metrics_increment("tx_packets", 4);
    berth_metrics_observe("loop_us", 812);
    berth_log("boot ok");
    berth_log("sensor ready");
    berth_upload_t session = { .transport = &http, .options = { false, NULL }, .info = &info };
    report(berth_upload(&session), "session 1 over HTTP: device info, reboot, metrics, trace, heartbeat");
    const berth_fault_t fault = { 0x08000a11, 0x08000b23, 0x20001fe0, 0x21000000, 0x0400, 0x40000000, 0, 0, 1234 };
    berth_fault_record(&fault);
    berth_platform_reset();
  }
  berth_packet_link_t lora_link = { .send_packet = into_http, .context = &http };
  berth_transport_t lora = berth_lora_transport(&lora_link);
  lora.flush = radio_flush;
  berth_upload_t after_fault = { .transport = &lora, .options = { true, NULL }, .info = &info };
  report(berth_upload(&after_fault), "session 2 over LoRa (51-byte fragments, RLE): reboot reason, fault, heartbeat");

  berth_posix_set_device_id(ccm_device);
  berth_boot(9000);
  berth_log("encrypted hello");
  berth_packet_link_t ble_link = { .send_packet = into_http, .context = &http };
  berth_transport_t ble = berth_ble_transport(&ble_link);
  ble.flush = radio_flush;
  berth_upload_t sealed = { .transport = &ble, .options = { true, key }, .info = &info };
  report(berth_upload(&sealed), "session 3 over BLE (20-byte fragments, RLE, AES-128-CCM)");
  return 0;
}
