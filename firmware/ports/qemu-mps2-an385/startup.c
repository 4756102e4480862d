//! @file startup.c
//! Vector table, reset handler (copy .data, clear .bss, call main) and the hard-fault entry, which
//! finds the stacked registers (MSP or PSP, from EXC_RETURN) and hands them to berth_qemu_fault.
#include <stdint.h>
#include <string.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
extern int main(void);
void Reset_Handler(void);
void HardFault_Handler(void);
void berth_qemu_fault(const uint32_t *stacked);
void SysTick_Handler(void);

static void Default_Handler(void) {
  for (;;) {}
}

__attribute__((section(".isr_vector"), used)) static void (*const s_vectors[16])(void) = {
  (void (*)(void))&__stack_top, Reset_Handler, Default_Handler, HardFault_Handler,
  HardFault_Handler, HardFault_Handler, HardFault_Handler, 0, 0, 0, 0,
  Default_Handler, Default_Handler, 0, Default_Handler, SysTick_Handler
};

void Reset_Handler(void) {
  memcpy(&__data_start, &__data_load, (size_t)((uint8_t *)&__data_end - (uint8_t *)&__data_start));
  memset(&__bss_start, 0, (size_t)((uint8_t *)&__bss_end - (uint8_t *)&__bss_start));
  main();
  for (;;) {}
}

__attribute__((naked)) void HardFault_Handler(void) {
  __asm volatile(
    "tst lr, #4\n"
    "ite eq\n"
    "mrseq r0, msp\n"
    "mrsne r0, psp\n"
    "b berth_qemu_fault\n");
}
