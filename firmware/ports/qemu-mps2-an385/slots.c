//! @file slots.c
//! The slot hooks of signed updates on mps2-an385 (slots.h) in the memory map of updates.h, UART0's
//! receiver, and the jump into an image.
#include <string.h>

#include "berth/slots.h"
#include "updates.h"

#define REG(address) (*(volatile uint32_t *)(address))
#define UART0 0x40004000u
#define UART_DATA REG(UART0 + 0x00)
#define UART_STATE REG(UART0 + 0x04)
#define UART_CTRL REG(UART0 + 0x08)
#define SYST_CSR REG(0xE000E010u)
#define SCB_VTOR REG(0xE000ED08u)

static uint8_t *slot_base(uint8_t slot) { return (uint8_t *)(uintptr_t)(QEMU_SLOT_0 + slot * QEMU_SLOT_SIZE); }
static uint8_t *trailer_of(uint8_t slot) { return slot_base(slot) + QEMU_SLOT_SIZE - QEMU_TRAILER_SPACE; }

const uint8_t *berth_port_slot(uint8_t slot) { return slot_base(slot); }
uint32_t berth_port_slot_capacity(void) { return QEMU_SLOT_SIZE - QEMU_TRAILER_SPACE; }

bool berth_port_slot_write(uint8_t slot, uint32_t offset, const uint8_t *bytes, size_t length) {
  if (slot >= BERTH_SLOTS || offset > berth_port_slot_capacity() || length > berth_port_slot_capacity() - offset) {
    return false;
  }
  memcpy(slot_base(slot) + offset, bytes, length);
  return true;
}

void berth_port_trailer_read(uint8_t slot, berth_slot_trailer_t *trailer) {
  memcpy(trailer, trailer_of(slot), sizeof *trailer);
}

bool berth_port_trailer_write(uint8_t slot, const berth_slot_trailer_t *trailer) {
  memcpy(trailer_of(slot), trailer, sizeof *trailer);
  return true;
}

void berth_port_boot_status_read(berth_boot_status_t *status) {
  memcpy(status, (const void *)(uintptr_t)QEMU_BOOT_STATUS, sizeof *status);
}

bool berth_port_boot_status_write(const berth_boot_status_t *status) {
  memcpy((void *)(uintptr_t)QEMU_BOOT_STATUS, status, sizeof *status);
  return true;
}

void berth_qemu_uart_receive_start(void) { UART_CTRL = 3; } // TX and RX enable

size_t berth_qemu_uart_receive(uint8_t *bytes, size_t capacity) {
  size_t n = 0;
  while (n < capacity && (UART_STATE & 2u)) bytes[n++] = (uint8_t)UART_DATA; // RX buffer full
  return n;
}

void berth_qemu_run(const uint32_t *vectors) {
  SYST_CSR = 0; // the image starts its own tick
  SCB_VTOR = (uint32_t)(uintptr_t)vectors;
  __asm volatile("dsb\n\tisb\n\tmsr msp, %0\n\tbx %1" : : "r"(vectors[0]), "r"(vectors[1]) : "memory");
  for (;;) {}
}
