//! @file reboot.c
//! The retained record: validity marker, CRC-32 over the rest, rewritten on every change.
#include "berth/reboot.h"

#include <string.h>

#include "berth/crc32.h"
#include "berth/platform.h"

#define RETAINED_MAGIC 0x42525431u // "BRT1"

typedef struct {
  uint32_t magic;
  uint32_t boot_count;
  uint32_t next_reason;
  uint32_t has_fault;
  uint32_t sequence;
  berth_fault_t fault;
  uint32_t crc;
} retained_t;

static berth_reboot_reason_t s_reason = BERTH_REBOOT_UNKNOWN;
static bool s_fault_pending;
static berth_fault_t s_fault;

static retained_t *retained(void) {
  return (retained_t *)berth_platform_retained();
}

static uint32_t checksum(const retained_t *r) {
  return berth_crc32(0, (const uint8_t *)r, offsetof(retained_t, crc));
}

static void seal(retained_t *r) {
  r->magic = RETAINED_MAGIC;
  r->crc = checksum(r);
}

size_t berth_retained_size(void) { return sizeof(retained_t); }

void berth_boot(uint32_t sequence_seed) {
  retained_t *r = retained();
  if (r->magic == RETAINED_MAGIC && r->crc == checksum(r)) {
    r->boot_count++;
    s_reason = (berth_reboot_reason_t)r->next_reason;
    s_fault_pending = r->has_fault != 0;
    s_fault = r->fault;
  } else {
    memset(r, 0, sizeof *r);
    r->boot_count = 1;
    r->sequence = sequence_seed;
    s_reason = BERTH_REBOOT_POWER_ON;
    s_fault_pending = false;
  }
  // A reset nobody records (a reset pin, a watchdog the port does not report) reads as unknown.
  r->next_reason = BERTH_REBOOT_UNKNOWN;
  seal(r);
}

berth_reboot_reason_t berth_reboot_reason(void) { return s_reason; }
uint32_t berth_boot_count(void) { return retained()->boot_count; }

bool berth_fault_pending(berth_fault_t *fault) {
  if (s_fault_pending && fault != NULL) *fault = s_fault;
  return s_fault_pending;
}

void berth_fault_clear(void) {
  retained_t *r = retained();
  s_fault_pending = false;
  r->has_fault = 0;
  seal(r);
}

uint32_t berth_next_sequence(void) {
  retained_t *r = retained();
  const uint32_t sequence = r->sequence++;
  seal(r);
  return sequence;
}

void berth_reboot(berth_reboot_reason_t reason) {
  retained_t *r = retained();
  r->next_reason = reason;
  seal(r);
  berth_platform_reset();
}

void berth_fault_record(const berth_fault_t *fault) {
  retained_t *r = retained();
  r->fault = *fault;
  r->has_fault = 1;
  r->next_reason = BERTH_REBOOT_HARD_FAULT;
  seal(r);
}
