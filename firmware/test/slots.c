//! @file slots.c
//! Host checks of the bootloader's choice and the confirmation (include/berth/slots.h), built with
//! BERTH_UPDATES, the port's hooks kept in memory (memory_slots.h):
//!   slots <public key hex> <factory image> <update image>
//! Each scenario starts from a blank device with the factory image; test/firmware/image.test.ts signs
//! the two images with node:crypto.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/slots.h"
#include "hex.h"
#include "memory_slots.h"

#define CAPACITY MEMORY_SLOT_CAPACITY
#define LOAD 0x00100000u

static int s_failed;

static void check(int ok, const char *what) {
  printf("%sok - %s\n", ok ? "" : "not ", what);
  if (!ok) s_failed = 1;
}

static uint8_t s_key[32], s_factory[CAPACITY], s_update[CAPACITY];
static size_t s_factory_length, s_update_length;

static int choose(void) { return berth_boot_choose(s_key, LOAD, s_factory, s_factory_length); }

static berth_slot_state_t state(uint8_t slot) {
  berth_slot_trailer_t trailer;
  berth_slot_trailer(slot, &trailer);
  return (berth_slot_state_t)trailer.state;
}

static bool event(berth_update_event_t expected, uint8_t slot) {
  berth_boot_status_t status;
  berth_boot_status(&status);
  return status.event == expected && status.event_slot == slot;
}

//! A blank device, then the update written into slot 1 and marked pending, as the receiver leaves it.
static void blank_then_pending(void) {
  memory_slots_erase();
  choose();
  berth_port_slot_write(1, 0, s_update, s_update_length);
  berth_slot_trailer_t trailer = { .state = BERTH_SLOT_PENDING, .size = (uint32_t)s_update_length,
                                   .received = (uint32_t)s_update_length };
  berth_slot_set_trailer(1, &trailer);
}

static size_t load(const char *path, uint8_t *bytes) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) {
    perror(path);
    exit(2);
  }
  const size_t n = fread(bytes, 1, CAPACITY, file);
  fclose(file);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 4 || strlen(argv[1]) != 64) {
    fprintf(stderr, "usage: slots <public key hex> <factory image> <update image>\n");
    return 2;
  }
  unhex(argv[1], s_key);
  s_factory_length = load(argv[2], s_factory);
  s_update_length = load(argv[3], s_update);

  memory_slots_erase();
  check(choose() == 0 && state(0) == BERTH_SLOT_CONFIRMED && state(1) == BERTH_SLOT_EMPTY,
        "a blank device installs the factory image in slot 0, confirmed, and boots it");
  check(memcmp(memory_slots[0], s_factory, s_factory_length) == 0, "slot 0 holds the factory image byte for byte");
  check(choose() == 0 && event(BERTH_EVENT_NONE, 0), "the next boot boots it again, nothing to report");
  check(!berth_update_confirm() || state(0) == BERTH_SLOT_CONFIRMED, "confirming a confirmed image changes nothing");

  blank_then_pending();
  check(choose() == 1 && state(1) == BERTH_SLOT_TESTING, "a pending slot that verifies is booted, testing");
  check(choose() == 0 && state(1) == BERTH_SLOT_BAD && event(BERTH_EVENT_REVERT, 1),
        "found testing at the next boot: it becomes bad, slot 0 boots, the revert is recorded");
  check(choose() == 0 && state(1) == BERTH_SLOT_BAD, "a bad slot is never booted again");

  blank_then_pending();
  check(choose() == 1 && berth_update_running_slot() == 1, "the application sees the slot it runs from");
  check(berth_update_confirm() && state(1) == BERTH_SLOT_CONFIRMED && event(BERTH_EVENT_CONFIRMED, 1),
        "the application confirms itself: confirmed, and the confirmation recorded");
  check(choose() == 1 && state(0) == BERTH_SLOT_CONFIRMED, "the next boot boots the confirmed slot booted last");
  memory_slots[1][100] ^= 0x01;
  check(choose() == 0 && state(1) == BERTH_SLOT_BAD && event(BERTH_EVENT_REFUSED, 1),
        "a confirmed image altered since is refused: bad, the other boots, the refusal recorded");

  blank_then_pending();
  memory_slots[1][100] ^= 0x01;
  check(choose() == 0 && state(1) == BERTH_SLOT_BAD && event(BERTH_EVENT_REFUSED, 1),
        "a pending image that does not verify is refused, never booted");

  blank_then_pending();
  check(choose() == 1 && berth_update_confirm(), "a testing slot can confirm itself");
  memory_trailers[1].crc ^= 1u;
  check(state(1) == BERTH_SLOT_EMPTY, "a trailer whose CRC does not match reads as empty");

  memory_slots_erase();
  s_factory[100] ^= 0x01;
  check(choose() == -1, "with no slot and a factory image that does not verify, nothing boots");
  return s_failed;
}
