//! @file startup.c
//! Vector table, reset handler (copy .data, clear .bss, call main) and, with fault capture, the
//! hard-fault entry, which finds the stacked registers (MSP or PSP, from EXC_RETURN) and hands them to
//! berth_qemu_fault. The NMI (the watchdog's interrupt) goes to the port's handler with
//! BERTH_PLATFORM_RESET_CAUSE. Without them, the exceptions wait in Default_Handler (for the watchdog).
//! PendSV_Handler is weak: the application may define its own.
#include <stdint.h>
#include <string.h>

#include "berth/config.h"

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
extern int main(void);
void Reset_Handler(void);
void SysTick_Handler(void);
static void Default_Handler(void);

#if BERTH_FAULT_CAPTURE
void HardFault_Handler(void);
void berth_qemu_fault(const uint32_t *stacked);
#else
#define HardFault_Handler Default_Handler
#endif
#if BERTH_PLATFORM_RESET_CAUSE
void NMI_Handler(void);
#else
#define NMI_Handler Default_Handler
#endif

static void Default_Handler(void) {
  for (;;) {}
}

void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));

__attribute__((section(".isr_vector"), used)) static void (*const s_vectors[16])(void) = {
  (void (*)(void))&__stack_top, Reset_Handler, NMI_Handler, HardFault_Handler,
  HardFault_Handler, HardFault_Handler, HardFault_Handler, 0, 0, 0, 0,
  Default_Handler, Default_Handler, 0, PendSV_Handler, SysTick_Handler
};

void Reset_Handler(void) {
  memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
  memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
  main();
  for (;;) {}
}

#if BERTH_FAULT_CAPTURE
__attribute__((naked)) void HardFault_Handler(void) {
  __asm volatile(
    "tst lr, #4\n"
    "ite eq\n"
    "mrseq r0, msp\n"
    "mrsne r0, psp\n"
    "b berth_qemu_fault\n");
}
#endif
