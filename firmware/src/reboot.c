//! @file reboot.c
//! The retained record: validity marker, CRC-32 over the rest, rewritten on every change. With fault
//! capture, it also keeps the fault a hard fault left until it is uploaded; with coredumps, the
//! coredump (coredump.c) follows the record in the same region.
#include "berth/reboot.h"

#include <string.h>

#include "berth/coredump.h"
#include "berth/crc32.h"
#include "berth/platform.h"

#define RETAINED_MAGIC 0x42525431u // "BRT1"

#if BERTH_FAULT_CAPTURE
//! The fault's registers as the retained record holds them (the berth_fault_t of firmware without stack snapshots).
typedef struct {
  uint32_t pc, lr, sp, psr, cfsr, hfsr, mmfar, bfar;
  int64_t uptime_ms;
} retained_fault_t;
#endif

typedef struct {
  uint32_t magic;
  uint32_t boot_count;
  uint32_t next_reason;
#if BERTH_FAULT_CAPTURE // the layout of the full build, which earlier firmware wrote
  uint32_t has_fault;
#endif
  uint32_t sequence;
#if BERTH_FAULT_CAPTURE
  retained_fault_t fault;
#endif
  uint32_t crc;
#if BERTH_FAULT_CAPTURE && BERTH_FAULT_STACK_WORDS > 0
  // The stack snapshot after the record earlier firmware wrote, under a CRC of its own: a record left by
  // firmware without it (or with another size) keeps its fault, with no stack.
  uint32_t stack_words;
  uint32_t stack[BERTH_FAULT_STACK_WORDS];
  uint32_t stack_crc;
#endif
} retained_t;

static berth_reboot_reason_t s_reason = BERTH_REBOOT_UNKNOWN;
#if BERTH_FAULT_CAPTURE
static bool s_fault_pending;
static berth_fault_t s_fault;
#endif

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

size_t berth_retained_size(void) { return sizeof(retained_t) + BERTH_COREDUMP_RETAINED; }

#if BERTH_FAULT_CAPTURE
#if BERTH_FAULT_STACK_WORDS > 0
/** The CRC-32 of the stack snapshot, its size seeded in so a snapshot of another size never passes. */
static uint32_t stack_checksum(const retained_t *r) {
  const uint32_t size = BERTH_FAULT_STACK_WORDS;
  return berth_crc32(berth_crc32(0, (const uint8_t *)&size, sizeof size), (const uint8_t *)&r->stack_words,
                     offsetof(retained_t, stack_crc) - offsetof(retained_t, stack_words));
}
#endif

/** The fault the retained record holds, with its stack snapshot when that is intact. */
static berth_fault_t retained_fault(const retained_t *r) {
  const retained_fault_t *f = &r->fault;
  berth_fault_t fault = {
    .pc = f->pc, .lr = f->lr, .sp = f->sp, .psr = f->psr, .cfsr = f->cfsr, .hfsr = f->hfsr, .mmfar = f->mmfar, .bfar = f->bfar, .uptime_ms = f->uptime_ms
  };
#if BERTH_FAULT_STACK_WORDS > 0
  if (r->stack_crc == stack_checksum(r) && r->stack_words <= BERTH_FAULT_STACK_WORDS) {
    fault.stack_words = r->stack_words;
    memcpy(fault.stack, r->stack, sizeof fault.stack);
  }
#endif
#if BERTH_COREDUMP
  fault.coredump = berth_coredump_pending();
#endif
  return fault;
}
#endif

/**
 * The first sequence number after a power cycle: the caller's seed, mixed with the region's power-up
 * contents when it holds any (real SRAM powers up as noise; RAM cleared at power-on is all zeros) and
 * with the port's entropy when it has some.
 */
static uint32_t power_on_sequence(const retained_t *found, uint32_t sequence_seed) {
  const uint8_t *bytes = (const uint8_t *)found;
  uint8_t any = 0;
  for (size_t i = 0; i < sizeof *found; i++) any |= bytes[i];
  uint32_t sequence = sequence_seed;
  if (any != 0) sequence ^= berth_crc32(0, bytes, sizeof *found);
#if BERTH_PLATFORM_ENTROPY
  sequence ^= berth_platform_entropy();
#endif
  return sequence;
}

/** The reason of a reset nobody recorded: the reset-cause hardware's, where the port reads it. */
static berth_reboot_reason_t unrecorded(berth_reboot_reason_t fallback) {
#if BERTH_PLATFORM_RESET_CAUSE
  const berth_reboot_reason_t cause = berth_platform_reset_cause();
  if (cause != BERTH_REBOOT_UNKNOWN) return cause;
#endif
  return fallback;
}

void berth_boot(uint32_t sequence_seed) {
  retained_t *r = retained();
  if (r->magic == RETAINED_MAGIC && r->crc == checksum(r)) {
    r->boot_count++;
    s_reason = (berth_reboot_reason_t)r->next_reason;
    if (s_reason == BERTH_REBOOT_UNKNOWN) s_reason = unrecorded(BERTH_REBOOT_UNKNOWN);
#if BERTH_FAULT_CAPTURE
    s_fault_pending = r->has_fault != 0;
    s_fault = retained_fault(r);
#endif
  } else {
    const uint32_t sequence = power_on_sequence(r, sequence_seed);
    memset(r, 0, sizeof *r);
    r->boot_count = 1;
    r->sequence = sequence;
    s_reason = unrecorded(BERTH_REBOOT_POWER_ON);
  }
  // Until something records a reason (berth_reboot, a hard fault), the next reset is unrecorded.
  r->next_reason = BERTH_REBOOT_UNKNOWN;
  seal(r);
}

berth_reboot_reason_t berth_reboot_reason(void) { return s_reason; }
uint32_t berth_boot_count(void) { return retained()->boot_count; }

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

#if BERTH_FAULT_CAPTURE
bool berth_fault_pending(berth_fault_t *fault) {
  if (s_fault_pending && fault != NULL) *fault = s_fault;
  return s_fault_pending;
}

void berth_fault_clear(void) {
  retained_t *r = retained();
  s_fault_pending = false;
  r->has_fault = 0;
  seal(r);
#if BERTH_COREDUMP
  berth_coredump_clear();
  s_fault.coredump = NULL;
#endif
}

void berth_fault_record(const berth_fault_t *fault) {
  retained_t *r = retained();
  const retained_fault_t registers = { fault->pc, fault->lr, fault->sp, fault->psr, fault->cfsr, fault->hfsr, fault->mmfar, fault->bfar, fault->uptime_ms };
  r->fault = registers;
#if BERTH_FAULT_STACK_WORDS > 0
  r->stack_words = fault->stack_words < BERTH_FAULT_STACK_WORDS ? fault->stack_words : BERTH_FAULT_STACK_WORDS;
  memcpy(r->stack, fault->stack, sizeof r->stack);
  r->stack_crc = stack_checksum(r);
#endif
  r->has_fault = 1;
  r->next_reason = BERTH_REBOOT_HARD_FAULT;
  seal(r);
}
#endif
