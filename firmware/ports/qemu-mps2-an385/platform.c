//! @file platform.c
//! The platform interface on mps2-an385, the UART transport, the watchdog, the fault recorder
//! (BERTH_FAULT_CAPTURE, with the coredump's capture under BERTH_COREDUMP), the reset cause (BERTH_PLATFORM_RESET_CAUSE) and semihosting exit.
#include <string.h>

#include "berth/coredump.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth_qemu.h"

#define REG(address) (*(volatile uint32_t *)(address))
#define UART0 0x40004000u
#define UART_DATA REG(UART0 + 0x00)
#define UART_STATE REG(UART0 + 0x04)
#define UART_CTRL REG(UART0 + 0x08)
#define UART_BAUDDIV REG(UART0 + 0x10)
#define WDOG 0x40008000u // the CMSDK APB watchdog, clocked at the core clock
#define WDOG_LOAD REG(WDOG + 0x000)
#define WDOG_CTRL REG(WDOG + 0x008)
#define WDOG_INTCLR REG(WDOG + 0x00C)
#define WDOG_LOCK REG(WDOG + 0xC00)
#define WDOG_UNLOCK 0x1ACCE551u
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SCB_AIRCR REG(0xE000ED0Cu)
#define CORE_CLOCK_HZ 25000000u

static volatile uint32_t s_ticks;
__attribute__((section(".retained"))) static uint32_t s_retained[64 + BERTH_COREDUMP_RETAINED / 4];

#if BERTH_PLATFORM_RESET_CAUSE
//! "WDOG" in s_watchdog_mark: the watchdog's NMI came, its reset followed.
#define WATCHDOG_MARK 0x57444F47u
//! Retained, as the SDK's record: the watchdog's reset keeps it.
__attribute__((section(".retained"))) static uint32_t s_watchdog_mark;
static berth_reboot_reason_t s_reset_cause;

//! The watchdog's first timeout: its interrupt is the NMI on this board. Mark the reset that comes at
//! the second timeout (the interrupt is left pending, so the watchdog resets the board then).
void NMI_Handler(void) {
  s_watchdog_mark = WATCHDOG_MARK;
  for (;;) {}
}

berth_reboot_reason_t berth_platform_reset_cause(void) { return s_reset_cause; }
#endif

void SysTick_Handler(void) { s_ticks++; }

void berth_qemu_init(void) {
#if BERTH_PLATFORM_RESET_CAUSE
  // Read and clear the mark once per boot, as a reset-cause register is read and cleared.
  s_reset_cause = s_watchdog_mark == WATCHDOG_MARK ? BERTH_REBOOT_WATCHDOG : BERTH_REBOOT_UNKNOWN;
  s_watchdog_mark = 0;
#endif
  UART_BAUDDIV = 16;
  UART_CTRL = 1; // TX enable
  SYST_RVR = CORE_CLOCK_HZ / 1000 - 1;
  SYST_CSR = 7; // core clock, interrupt, enable
}

uint32_t berth_platform_uptime_ms(void) { return s_ticks; }
void *berth_platform_retained(void) { return s_retained; }

void berth_platform_reset(void) {
  __asm volatile("dsb");
  SCB_AIRCR = 0x05FA0004u; // VECTKEY | SYSRESETREQ
  for (;;) {}
}

void berth_qemu_watchdog_start(uint32_t timeout_ms) {
  WDOG_LOCK = WDOG_UNLOCK;
  WDOG_LOAD = CORE_CLOCK_HZ / 1000 * timeout_ms;
  WDOG_CTRL = 3; // INTEN (the NMI at the first timeout), RESEN (the reset at the second)
  WDOG_LOCK = 0;
}

void berth_qemu_watchdog_feed(void) {
  WDOG_LOCK = WDOG_UNLOCK;
  WDOG_INTCLR = 1; // reloads the counter
  WDOG_LOCK = 0;
}

void berth_platform_device_id(uint8_t id[8]) {
  static const uint8_t ID[8] = { 0xb0, 0xa7, 0x10, 0xc0, 0xde, 0x00, 0x00, 0x01 };
  memcpy(id, ID, 8);
}

static int uart_write(void *context, const uint8_t *bytes, size_t length) {
  (void)context;
  for (size_t i = 0; i < length; i++) {
    while (UART_STATE & 1u) {} // TX buffer full
    UART_DATA = bytes[i];
  }
  return 0;
}

berth_stream_t *berth_qemu_uart_stream(void) {
  static berth_stream_t uart = { uart_write, NULL };
  return &uart;
}

berth_transport_t berth_qemu_uart(void) { return berth_uart_transport(berth_qemu_uart_stream()); }

const char *berth_qemu_build_id(void) {
  extern const uint32_t __build_id_note[];
  static char hex[41];
  const uint32_t name_size = __build_id_note[0], desc_size = __build_id_note[1];
  if (desc_size == 0 || desc_size > 20) return "";
  const uint8_t *desc = (const uint8_t *)&__build_id_note[3] + ((name_size + 3u) & ~3u);
  for (uint32_t i = 0; i < desc_size; i++) {
    hex[2 * i] = "0123456789abcdef"[desc[i] >> 4];
    hex[2 * i + 1] = "0123456789abcdef"[desc[i] & 15];
  }
  hex[2 * desc_size] = '\0';
  return hex;
}

#if BERTH_FAULT_CAPTURE
#define SCB_CFSR REG(0xE000ED28u)
#define SCB_HFSR REG(0xE000ED2Cu)
#define SCB_MMFAR REG(0xE000ED34u)
#define SCB_BFAR REG(0xE000ED38u)

void berth_qemu_fault(const uint32_t *stacked) {
  // Stacked frame: r0 r1 r2 r3 r12 lr pc xpsr; the stack pointer before the exception is just above it,
  // one word further when the processor aligned the frame to 8 bytes (xPSR bit 9).
  const uint32_t *sp = stacked + 8 + ((stacked[7] >> 9) & 1u);
  berth_fault_t fault = {
    .pc = stacked[6], .lr = stacked[5], .sp = (uint32_t)(uintptr_t)sp, .psr = stacked[7],
    .cfsr = SCB_CFSR, .hfsr = SCB_HFSR, .mmfar = SCB_MMFAR, .bfar = SCB_BFAR, .uptime_ms = s_ticks
  };
#if BERTH_FAULT_STACK_WORDS > 0 || BERTH_COREDUMP
  extern uint32_t __stack_top; // the linker script's
  const uint32_t *top = &__stack_top;
#endif
#if BERTH_FAULT_STACK_WORDS > 0
  // The words above it, up to the top of the stack (reading past the end of RAM would fault again).
  const uint32_t left = sp < top ? (uint32_t)(top - sp) : 0;
  fault.stack_words = left < BERTH_FAULT_STACK_WORDS ? left : BERTH_FAULT_STACK_WORDS;
  for (uint32_t i = 0; i < fault.stack_words; i++) fault.stack[i] = sp[i];
#endif
#if BERTH_COREDUMP
  berth_coredump_capture((uintptr_t)sp, (uintptr_t)top);
#endif
  berth_fault_record(&fault);
  berth_platform_reset();
}
#endif

void berth_qemu_exit(int code) {
  // SYS_EXIT: ADP_Stopped_ApplicationExit ends QEMU with status 0, RunTimeErrorUnknown with 1.
  register uint32_t r0 __asm("r0") = 0x18;
  register uint32_t r1 __asm("r1") = code == 0 ? 0x20026u : 0x20023u;
  __asm volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {}
}
