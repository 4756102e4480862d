//! @file coredump.c
//! Coredumps of chosen memory: the table of declared regions (ordinary RAM, set up again at each boot)
//! and the captured copy in retained RAM, after the SDK's retained record, under a CRC of its own.
#include "berth/coredump.h"

#if BERTH_COREDUMP
#include <string.h>

#include "berth/crc32.h"
#include "berth/platform.h"
#include "berth/reboot.h"

static berth_coredump_region_t s_declared[BERTH_COREDUMP_REGIONS];
static uint32_t s_declared_count;

/** The coredump's place in retained RAM: the last BERTH_COREDUMP_RETAINED bytes of the SDK's. */
static berth_coredump_t *retained_coredump(void) {
  return (berth_coredump_t *)((uint8_t *)berth_platform_retained() + berth_retained_size() - BERTH_COREDUMP_RETAINED);
}

static uint32_t checksum(const berth_coredump_t *c) {
  return berth_crc32(0, (const uint8_t *)c, offsetof(berth_coredump_t, crc));
}

int berth_coredump_region(const void *address, size_t length) {
  if (s_declared_count >= BERTH_COREDUMP_REGIONS || length == 0) return -1;
  const berth_coredump_region_t region = { (uintptr_t)address, (uint32_t)length };
  s_declared[s_declared_count++] = region;
  return 0;
}

void berth_coredump_reset_regions(void) { s_declared_count = 0; }

/** Copy what fits of `length` bytes at `address` after the bytes used so far; count what does not. */
static void take(berth_coredump_t *c, uint32_t *used, uintptr_t address, uint32_t length) {
  const uint32_t room = BERTH_COREDUMP_BYTES - *used;
  const uint32_t kept = length < room ? length : room;
  c->truncated += length - kept;
  if (kept == 0) return;
  memcpy(c->data + *used, (const void *)address, kept);
  const berth_coredump_region_t region = { address, kept };
  c->region[c->regions++] = region;
  *used += kept;
}

void berth_coredump_capture(uintptr_t sp, uintptr_t stack_top) {
  berth_coredump_t *c = retained_coredump();
  uint32_t used = 0;
  c->regions = 0;
  c->truncated = 0;
  const uintptr_t stack = sp < stack_top ? stack_top - sp : 0;
  take(c, &used, sp, stack < BERTH_COREDUMP_STACK_BYTES ? (uint32_t)stack : BERTH_COREDUMP_STACK_BYTES);
  for (uint32_t i = 0; i < s_declared_count; i++) take(c, &used, s_declared[i].address, s_declared[i].length);
  c->crc = checksum(c);
}

const berth_coredump_t *berth_coredump_pending(void) {
  const berth_coredump_t *c = retained_coredump();
  if (c->regions > BERTH_COREDUMP_REGIONS + 1 || c->crc != checksum(c)) return NULL;
  uint32_t bytes = 0;
  for (uint32_t i = 0; i < c->regions; i++) bytes += c->region[i].length;
  return bytes <= BERTH_COREDUMP_BYTES ? c : NULL;
}

void berth_coredump_clear(void) {
  berth_coredump_t *c = retained_coredump();
  c->regions = 0;
  c->truncated = 0;
  c->crc = ~checksum(c);
}

const uint8_t *berth_coredump_bytes(const berth_coredump_t *coredump, uint32_t index) {
  uint32_t at = 0;
  for (uint32_t i = 0; i < index; i++) at += coredump->region[i].length;
  return coredump->data + at;
}
#endif
