//! @file main.c
//! The QEMU example: a device under a watchdog that records metrics and a log line, uploads over its
//! UART, then crashes on a bad function pointer in sensor_poll(), called by sensor_task(); after the
//! reset it uploads the reboot reason hard_fault and the fault record (with its stack, which unwinds
//! to sensor_task and main), then hangs in sensor_wait() until the watchdog resets it; the third boot
//! uploads the reboot reason watchdog (unknown without BERTH_PLATFORM_RESET_CAUSE) and ends the
//! emulation. Without fault capture the crash, too, ends in a watchdog reset.
//! QEMU_DEMO_FAULT (on the command line: CFLAGS_EXTRA=-DQEMU_DEMO_FAULT=<n>) picks the crash, each an
//! undefined instruction (UNDEFINSTR) but the first: 0 the null function pointer; 1 in sensor_store(),
//! which sensor_poll() tail-calls (a branch: sensor_poll leaves no frame); 2 in sensor_scale(), inlined
//! into sensor_poll(); 3 in sensor_average(), whose unwritten locals hold the return addresses an
//! earlier call (sensor_calibrate()) left on the stack; 4 ten calls deep in sensor_walk(), deeper than
//! the stack snapshot reaches; 5 in the PendSV exception's handler, which sensor_poll() pends (the
//! exception frame over sensor_poll's). The backtraces of each are checked in
//! test/firmware/backtraces.test.ts. With BERTH_COREDUMP the power-on declares s_sensor_readings for
//! the coredump and sets it to 42 before the crash, which the server then shows by name.
#include "berth/coredump.h"
#include "berth/metrics.h"
#include "berth/reboot.h"
#include "berth/trace.h"
#include "berth/upload.h"
#include "berth_qemu.h"

//! Unfed this long, the watchdog raises its NMI; as long again, it resets the board.
#define WATCHDOG_MS 500

typedef int (*reader_t)(void);

//! Where a driver would be registered; never set, so calling it faults and waiting for it hangs.
static volatile reader_t s_temperature_reader;

#if BERTH_COREDUMP
//! Readings taken since power-on: a named global the coredump captures.
static volatile uint32_t s_sensor_readings;
#endif

#ifndef QEMU_DEMO_FAULT
#define QEMU_DEMO_FAULT 0
#endif

#if QEMU_DEMO_FAULT == 0
__attribute__((noinline)) static int sensor_poll(void) {
  berth_log("polling the temperature sensor");
  return s_temperature_reader() + 1; // the fault: a call through a null function pointer
}
#else
//! The crash where it stands: an undefined instruction.
#define FAULT_HERE() __asm volatile("udf #1")
//! A reading the compiler cannot know.
static volatile int s_raw = 7;

#if QEMU_DEMO_FAULT == 1
__attribute__((noinline)) static int sensor_store(int value) {
  s_raw = value;
  FAULT_HERE(); // the fault: in a tail-called function
  return value;
}

__attribute__((noinline)) static int sensor_poll(void) {
  berth_log("polling the temperature sensor");
  return sensor_store(s_raw / 3);
}
#elif QEMU_DEMO_FAULT == 2
static inline __attribute__((always_inline)) int sensor_scale(int raw) {
  if (raw > 0) FAULT_HERE(); // the fault: in an inlined function
  return raw * 10;
}

__attribute__((noinline)) static int sensor_poll(void) {
  berth_log("polling the temperature sensor");
  return sensor_scale(s_raw) + 1;
}
#elif QEMU_DEMO_FAULT == 3
__attribute__((noinline)) static int sensor_calibrate(int depth) {
  const int below = depth > 0 ? sensor_calibrate(depth - 1) : 0;
  s_raw = depth;
  return below + s_raw;
}

__attribute__((noinline)) static int sensor_average(void) {
  volatile int samples[12]; // only the first is written: the rest is what earlier calls left there
  samples[0] = s_raw;
  FAULT_HERE(); // the fault: under stale return addresses
  return samples[0];
}

__attribute__((noinline)) static int sensor_poll(void) {
  const int offset = sensor_calibrate(3);
  return sensor_average() + offset;
}
#elif QEMU_DEMO_FAULT == 4
__attribute__((noinline)) static int sensor_walk(int depth) {
  if (depth == 0) FAULT_HERE(); // the fault: ten calls deep
  const int below = depth > 0 ? sensor_walk(depth - 1) : 0;
  s_raw = depth;
  return below + depth;
}

__attribute__((noinline)) static int sensor_poll(void) {
  return sensor_walk(10) + 1;
}
#elif QEMU_DEMO_FAULT == 5
void PendSV_Handler(void);

void PendSV_Handler(void) {
  FAULT_HERE(); // the fault: in an exception handler
}

__attribute__((noinline)) static int sensor_poll(void) {
  berth_log("polling the temperature sensor");
  *(volatile uint32_t *)0xE000ED04u = 1u << 28; // ICSR's PENDSVSET
  __asm volatile("dsb\n\tisb" ::: "memory"); // the handler runs here, not some instructions later
  return s_raw + 1;
}
#endif
#endif

//! The power-on's work: a reading, scaled (the caller a backtrace of sensor_poll's fault shows).
__attribute__((noinline)) static int sensor_task(void) {
  const int reading = sensor_poll();
  return reading * 10;
}

__attribute__((noinline)) static void sensor_wait(void) {
  while (s_temperature_reader == NULL) {} // the hang: the watchdog is not fed
}

static int upload(void) {
  static const berth_device_info_t info = { "QEMU-0001", "mps2-an385", "qemu-demo", "1.0.0", "" };
  berth_device_info_t with_build = info;
  with_build.build_id = berth_qemu_build_id();
  berth_transport_t uart = berth_qemu_uart();
  berth_upload_t session = { .transport = &uart, .options = { false, NULL }, .info = &with_build };
  const int status = berth_upload(&session);
  berth_qemu_watchdog_feed();
  return status;
}

int main(void) {
  berth_qemu_init();
  berth_boot(1);
  berth_qemu_watchdog_start(WATCHDOG_MS);
  switch (berth_reboot_reason()) {
    case BERTH_REBOOT_POWER_ON:
      berth_metrics_gauge("battery_mv", 3700);
      berth_metrics_increment("boots", 1);
      berth_metrics_observe("loop_us", 420);
      berth_log("sensor ready");
      upload();
#if BERTH_COREDUMP
      berth_coredump_region((const void *)&s_sensor_readings, sizeof s_sensor_readings);
      s_sensor_readings = 42;
#endif
      return sensor_task();
    case BERTH_REBOOT_HARD_FAULT:
      berth_metrics_increment("recoveries", 1);
      upload();
      sensor_wait();
      return 0;
    default: // after the watchdog: the reboot reason goes out, then the emulation ends
      berth_qemu_exit(upload());
      return 0;
  }
}
