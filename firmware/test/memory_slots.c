//! @file memory_slots.c
//! The port's slot hooks of slots.h kept in memory (memory_slots.h).
#include "memory_slots.h"

#include <string.h>

uint8_t memory_slots[BERTH_SLOTS][MEMORY_SLOT_CAPACITY];
berth_slot_trailer_t memory_trailers[BERTH_SLOTS];
static berth_boot_status_t s_status;

void memory_slots_erase(void) {
  memset(memory_slots, 0xff, sizeof memory_slots);
  memset(memory_trailers, 0xff, sizeof memory_trailers);
  memset(&s_status, 0xff, sizeof s_status);
}

const uint8_t *berth_port_slot(uint8_t slot) { return memory_slots[slot]; }
uint32_t berth_port_slot_capacity(void) { return MEMORY_SLOT_CAPACITY; }

bool berth_port_slot_write(uint8_t slot, uint32_t offset, const uint8_t *bytes, size_t length) {
  if (offset > MEMORY_SLOT_CAPACITY || length > MEMORY_SLOT_CAPACITY - offset) return false;
  memcpy(memory_slots[slot] + offset, bytes, length);
  return true;
}

void berth_port_trailer_read(uint8_t slot, berth_slot_trailer_t *trailer) { *trailer = memory_trailers[slot]; }

bool berth_port_trailer_write(uint8_t slot, const berth_slot_trailer_t *trailer) {
  memory_trailers[slot] = *trailer;
  return true;
}

void berth_port_boot_status_read(berth_boot_status_t *status) { *status = s_status; }

bool berth_port_boot_status_write(const berth_boot_status_t *status) {
  s_status = *status;
  return true;
}
