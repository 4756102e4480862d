//! @file coredump.h
//! Coredumps of chosen memory (BERTH_COREDUMP). The application declares the RAM it wants to see after a
//! crash (named globals, a state structure) with berth_coredump_region(); at a hard fault the port's
//! handler calls berth_coredump_capture() before berth_fault_record(), which copies the stack above the
//! stack pointer (BERTH_COREDUMP_STACK_BYTES) and then each declared region, in the order declared, into
//! retained RAM: at most BERTH_COREDUMP_BYTES in all, what does not fit cut and counted as truncated.
//! The next boot's upload sends the regions in the FaultRecord (docs/chunk-format.md), and the fault's
//! delivery clears them with it. The server shows the regions and the values of the ELF's named globals
//! that lie in them.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

#if BERTH_COREDUMP
//! One captured region: its address on the device and the bytes kept of it.
typedef struct {
  uintptr_t address;
  uint32_t length;
} berth_coredump_region_t;

//! A coredump as retained RAM holds it: the regions' bytes one after another in `data`, under a CRC.
typedef struct berth_coredump {
  uint32_t regions;
  //! Bytes of the stack window and the declared regions that did not fit BERTH_COREDUMP_BYTES.
  uint32_t truncated;
  berth_coredump_region_t region[BERTH_COREDUMP_REGIONS + 1]; // the stack's first
  uint8_t data[BERTH_COREDUMP_BYTES];
  uint32_t crc;
} berth_coredump_t;

//! Bytes the coredump adds to the retained RAM the SDK needs (berth_retained_size()).
#define BERTH_COREDUMP_RETAINED sizeof(berth_coredump_t)

//! Declare `length` bytes at `address` (RAM that stays readable: a global, a static buffer) for the
//! coredump. 0, or -1 when BERTH_COREDUMP_REGIONS regions are declared already or `length` is 0.
int berth_coredump_region(const void *address, size_t length);

//! Forget the regions declared (the stack is always captured).
void berth_coredump_reset_regions(void);

//! The port's hard-fault handler, before berth_fault_record(): capture the stack from `sp` (the stack
//! pointer before the exception) up to BERTH_COREDUMP_STACK_BYTES but never past `stack_top`, then the
//! declared regions, into retained RAM.
void berth_coredump_capture(uintptr_t sp, uintptr_t stack_top);

//! The coredump a fault left before this boot, NULL when none is intact.
const berth_coredump_t *berth_coredump_pending(void);

//! The coredump was delivered (with its fault): forget it.
void berth_coredump_clear(void);

//! The bytes of the region at `index` within the coredump's `data`.
const uint8_t *berth_coredump_bytes(const berth_coredump_t *coredump, uint32_t index);
#else
#define BERTH_COREDUMP_RETAINED 0
#endif
