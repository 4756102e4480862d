//! @file reboot.h
//! What survives a reset, in the port's retained RAM: the boot count, the reason of the next reboot,
//! the fault record a hard fault left (BERTH_FAULT_CAPTURE), and the next chunk sequence number, under
//! a validity marker and a CRC. Call berth_boot() first thing after reset: it reads (and then renews)
//! the record.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"
#include "berth/records.h"

//! Bytes of retained RAM the SDK needs.
size_t berth_retained_size(void);

//! Read the retained record: a valid one gives this boot's reason (the port's reset cause when nothing
//! recorded one, BERTH_PLATFORM_RESET_CAUSE) and a pending fault; an invalid one (power-on, or
//! corrupted) starts over with power_on (or the port's reset cause), boot count 1 and sequence numbers
//! from `sequence_seed`, mixed with the region's power-up noise and the port's entropy
//! (BERTH_PLATFORM_ENTROPY). Numbers that repeat across power cycles are safe for the server (frames
//! of version 2 tell a new boot from a retry), but encrypted chunks then repeat CCM nonces: an
//! encrypting device should have entropy or a seed that differs at every power-on.
void berth_boot(uint32_t sequence_seed);

berth_reboot_reason_t berth_reboot_reason(void);
uint32_t berth_boot_count(void);

#if BERTH_FAULT_CAPTURE
//! The fault a hard fault left before this boot, if it has not been uploaded yet.
bool berth_fault_pending(berth_fault_t *fault);
//! The fault was delivered: forget it.
void berth_fault_clear(void);
#endif

//! The next chunk sequence number (kept across resets).
uint32_t berth_next_sequence(void);

//! Record `reason` for the next boot and reset.
void berth_reboot(berth_reboot_reason_t reason);

#if BERTH_FAULT_CAPTURE
//! Record a fault for the next boot (the port's hard-fault handler calls it, then resets).
void berth_fault_record(const berth_fault_t *fault);
#endif
