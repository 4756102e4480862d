//! @file main.c
//! The QEMU example: a device that records metrics and a log line, uploads over its UART, then
//! crashes on a bad function pointer in sensor_poll(); after the reset it uploads again (the reboot
//! reason hard_fault and the fault record) and ends the emulation.
#include "berth/metrics.h"
#include "berth/reboot.h"
#include "berth/trace.h"
#include "berth/upload.h"
#include "berth_qemu.h"

typedef int (*reader_t)(void);

//! Where a driver would be registered; never set, so calling it faults.
static volatile reader_t s_temperature_reader;

__attribute__((noinline)) static int sensor_poll(void) {
  berth_log("polling the temperature sensor");
  return s_temperature_reader() + 1; // the fault: a call through a null function pointer
}

static int upload(void) {
  static const berth_device_info_t info = { "QEMU-0001", "mps2-an385", "qemu-demo", "1.0.0", "" };
  berth_device_info_t with_build = info;
  with_build.build_id = berth_qemu_build_id();
  berth_transport_t uart = berth_qemu_uart();
  berth_upload_t session = { .transport = &uart, .options = { false, NULL }, .info = &with_build };
  return berth_upload(&session);
}

int main(void) {
  berth_qemu_init();
  berth_boot(1);
  if (berth_reboot_reason() == BERTH_REBOOT_POWER_ON) {
    berth_metrics_gauge("battery_mv", 3700);
    berth_metrics_increment("boots", 1);
    berth_metrics_observe("loop_us", 420);
    berth_log("sensor ready");
    upload();
    return sensor_poll();
  }
  // After the fault: the reboot reason and the fault record go out, then the emulation ends.
  berth_metrics_increment("recoveries", 1);
  berth_qemu_exit(upload());
  return 0;
}
