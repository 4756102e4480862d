//! @file memory_slots.h
//! The port's slot hooks of slots.h kept in memory, for the host test programs (test/slots.c,
//! test/receiver.c): two slots of MEMORY_SLOT_CAPACITY bytes, their trailers and the boot status.
#pragma once
#include <stdint.h>

#include "berth/slots.h"

#define MEMORY_SLOT_CAPACITY 65536u

extern uint8_t memory_slots[BERTH_SLOTS][MEMORY_SLOT_CAPACITY];
extern berth_slot_trailer_t memory_trailers[BERTH_SLOTS];

//! Erased storage: the slots, no valid trailer, no boot status.
void memory_slots_erase(void);
