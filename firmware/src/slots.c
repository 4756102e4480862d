//! @file slots.c
//! The slots' trailers and the boot status under a marker and a CRC, the bootloader's choice of slot
//! and the application's confirmation (slots.h).
#include "berth/slots.h"

#if BERTH_UPDATES
#include <string.h>

#include "berth/crc32.h"
#include "berth/sha256.h"

#define TRAILER_MARKER 0x4C535442u // "BTSL"
#define STATUS_MARKER 0x53425442u  // "BTBS"

void berth_slot_trailer(uint8_t slot, berth_slot_trailer_t *trailer) {
  berth_port_trailer_read(slot, trailer);
  const size_t covered = offsetof(berth_slot_trailer_t, crc);
  if (trailer->marker != TRAILER_MARKER || trailer->state > BERTH_SLOT_BAD ||
      trailer->crc != berth_crc32(0, (const uint8_t *)trailer, covered)) {
    memset(trailer, 0, sizeof *trailer);
  }
}

bool berth_slot_set_trailer(uint8_t slot, berth_slot_trailer_t *trailer) {
  trailer->marker = TRAILER_MARKER;
  trailer->crc = berth_crc32(0, (const uint8_t *)trailer, offsetof(berth_slot_trailer_t, crc));
  return berth_port_trailer_write(slot, trailer);
}

void berth_boot_status(berth_boot_status_t *status) {
  berth_port_boot_status_read(status);
  if (status->marker != STATUS_MARKER || status->running >= BERTH_SLOTS ||
      status->crc != berth_crc32(0, (const uint8_t *)status, offsetof(berth_boot_status_t, crc))) {
    memset(status, 0, sizeof *status);
  }
}

static bool set_boot_status(berth_boot_status_t *status) {
  status->marker = STATUS_MARKER;
  status->crc = berth_crc32(0, (const uint8_t *)status, offsetof(berth_boot_status_t, crc));
  return berth_port_boot_status_write(status);
}

bool berth_boot_record_event(berth_update_event_t event, uint8_t slot) {
  berth_boot_status_t status;
  berth_boot_status(&status);
  status.event = (uint8_t)event;
  status.event_slot = slot;
  return set_boot_status(&status);
}

berth_image_status_t berth_slot_verify(uint8_t slot, const uint8_t public_key[32], uint32_t load_address,
                                       berth_image_header_t *header) {
  const uint32_t capacity = berth_port_slot_capacity();
  const berth_image_status_t status = berth_image_verify(berth_port_slot(slot), capacity, public_key, header);
  if (status == BERTH_IMAGE_OK && header->load_address != load_address) return BERTH_IMAGE_BAD_HEADER;
  return status == BERTH_IMAGE_TRUNCATED ? BERTH_IMAGE_BAD_HEADER : status; // larger than the slot
}

//! Set the slot's state in its trailer.
static void set_state(uint8_t slot, berth_slot_trailer_t *trailer, berth_slot_state_t state) {
  trailer->state = (uint8_t)state;
  berth_slot_set_trailer(slot, trailer);
}

//! Install the factory image in slot 0, confirmed; false when it does not verify.
static bool install_factory(const uint8_t public_key[32], uint32_t load_address, const uint8_t *factory,
                            size_t factory_length) {
  berth_image_header_t header;
  if (berth_image_verify(factory, factory_length, public_key, &header) != BERTH_IMAGE_OK ||
      header.load_address != load_address || berth_image_size(&header) > berth_port_slot_capacity()) {
    return false;
  }
  const uint32_t size = berth_image_size(&header);
  if (!berth_port_slot_write(0, 0, factory, size)) return false;
  berth_slot_trailer_t trailer = { .state = BERTH_SLOT_CONFIRMED, .size = size, .received = size };
  berth_sha256_t sha;
  berth_sha256_init(&sha);
  berth_sha256_update(&sha, factory, size);
  berth_sha256_final(&sha, trailer.sha256);
  memcpy(trailer.version, header.version, strlen(header.version));
  return berth_slot_set_trailer(0, &trailer);
}

int berth_boot_choose(const uint8_t public_key[32], uint32_t load_address, const uint8_t *factory,
                      size_t factory_length) {
  berth_boot_status_t status;
  berth_boot_status(&status);
  berth_slot_trailer_t trailers[BERTH_SLOTS];
  berth_image_header_t header;
  int chosen = -1;
  for (uint8_t slot = 0; slot < BERTH_SLOTS; slot++) {
    berth_slot_trailer(slot, &trailers[slot]);
    if (trailers[slot].state == BERTH_SLOT_TESTING) { // it did not confirm itself before this reset
      set_state(slot, &trailers[slot], BERTH_SLOT_BAD);
      status.event = BERTH_EVENT_REVERT;
      status.event_slot = slot;
    }
  }
  for (uint8_t slot = 0; slot < BERTH_SLOTS && chosen < 0; slot++) {
    if (trailers[slot].state != BERTH_SLOT_PENDING) continue;
    if (berth_slot_verify(slot, public_key, load_address, &header) == BERTH_IMAGE_OK) {
      set_state(slot, &trailers[slot], BERTH_SLOT_TESTING);
      chosen = slot;
    } else {
      set_state(slot, &trailers[slot], BERTH_SLOT_BAD);
      status.event = BERTH_EVENT_REFUSED;
      status.event_slot = slot;
    }
  }
  // The confirmed slot booted last, else the other one.
  for (uint8_t i = 0; i < BERTH_SLOTS && chosen < 0; i++) {
    const uint8_t slot = (uint8_t)((status.running + i) % BERTH_SLOTS);
    if (trailers[slot].state != BERTH_SLOT_CONFIRMED) continue;
    if (berth_slot_verify(slot, public_key, load_address, &header) == BERTH_IMAGE_OK) {
      chosen = slot;
    } else {
      set_state(slot, &trailers[slot], BERTH_SLOT_BAD);
      status.event = BERTH_EVENT_REFUSED;
      status.event_slot = slot;
    }
  }
  if (chosen < 0 && install_factory(public_key, load_address, factory, factory_length)) chosen = 0;
  if (chosen >= 0) status.running = (uint8_t)chosen;
  set_boot_status(&status);
  return chosen;
}

uint8_t berth_update_running_slot(void) {
  berth_boot_status_t status;
  berth_boot_status(&status);
  return status.running;
}

bool berth_update_confirm(void) {
  const uint8_t slot = berth_update_running_slot();
  berth_slot_trailer_t trailer;
  berth_slot_trailer(slot, &trailer);
  if (trailer.state == BERTH_SLOT_CONFIRMED) return true;
  if (trailer.state != BERTH_SLOT_TESTING) return false;
  trailer.state = BERTH_SLOT_CONFIRMED;
  return berth_slot_set_trailer(slot, &trailer) && berth_boot_record_event(BERTH_EVENT_CONFIRMED, slot);
}
#endif
