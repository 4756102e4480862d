//! @file main.c
//! The QEMU example of signed updates (docs/firmware-updates.md), run by the bootloader from a slot:
//! under its watchdog it uploads its telemetry over UART0 (its version read from its own image
//! header), confirms itself (berth_update_confirm: it has uploaded once), then sends its update state
//! and follows the gateway's answer: nothing, or an image to download into the other slot; a verified
//! image is pending, and the device resets into the bootloader to test it. It repeats this every
//! QEMU_UPDATABLE_ROUND_MS. Built with -DQEMU_UPDATABLE_HANG it hangs after its first upload instead of
//! confirming itself: the watchdog resets it and the bootloader reverts to the image before.
#include "berth/metrics.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth/update.h"
#include "berth/upload.h"
#include "berth_qemu.h"
#include "fleet_key.h"
#include "updates.h"

//! Unfed this long, the watchdog raises its NMI; as long again, it resets the board.
#define WATCHDOG_MS 1000
#ifndef QEMU_UPDATABLE_ROUND_MS
#define QEMU_UPDATABLE_ROUND_MS 1000
#endif

static berth_image_header_t s_running;

static void upload(void) {
  berth_device_info_t info = { "QEMU-0001", "mps2-an385", s_running.software_type, s_running.version, "" };
  info.build_id = berth_qemu_build_id();
  berth_transport_t uart = berth_qemu_uart();
  berth_upload_t session = { .transport = &uart, .options = { false, NULL }, .info = &info };
  berth_upload(&session);
  berth_qemu_watchdog_feed();
}

//! One update session: the state, then the gateway's answers, until it ends.
static berth_update_status_t update_session(berth_update_t *update) {
  berth_update_start(update, berth_platform_uptime_ms());
  berth_update_status_t status = BERTH_UPDATE_WAITING;
  while (status == BERTH_UPDATE_WAITING) {
    uint8_t bytes[64];
    const size_t n = berth_qemu_uart_receive(bytes, sizeof bytes);
    status = n > 0 ? berth_update_feed(update, bytes, n, berth_platform_uptime_ms())
                   : berth_update_poll(update, berth_platform_uptime_ms());
    berth_qemu_watchdog_feed();
  }
  return status;
}

int main(void) {
  berth_qemu_init();
  berth_qemu_uart_receive_start();
  berth_boot(1);
  berth_qemu_watchdog_start(WATCHDOG_MS);
  berth_image_header(berth_port_slot(berth_update_running_slot()), berth_port_slot_capacity(), &s_running);
  berth_metrics_increment("boots", 1);
  upload();
#ifdef QEMU_UPDATABLE_HANG
  for (;;) {} // the image that never confirms itself
#endif
  berth_update_confirm();
  berth_update_t update = { .link = berth_qemu_uart_stream(), .public_key = FLEET_KEY, .load_address = QEMU_EXECUTION,
                            .answer_ms = 500, .resends = 10 };
  for (;;) {
    if (update_session(&update) == BERTH_UPDATE_READY) berth_reboot(BERTH_REBOOT_FIRMWARE_UPDATE);
    const uint32_t round = berth_platform_uptime_ms();
    while (berth_platform_uptime_ms() - round < QEMU_UPDATABLE_ROUND_MS) {
      uint8_t ignored[16];
      berth_qemu_uart_receive(ignored, sizeof ignored); // nothing is asked for between sessions
      berth_qemu_watchdog_feed();
    }
    berth_metrics_increment("rounds", 1);
    upload();
  }
}
