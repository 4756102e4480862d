//! @file platform.c
//! The POSIX port of the platform interface.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/coredump.h"
#include "berth/platform.h"
#include "berth_posix.h"

static uint64_t s_retained[64 + (BERTH_COREDUMP_RETAINED + 7) / 8];
static uint8_t s_device_id[8];
static jmp_buf *s_reset;
static struct timespec s_start;
#if BERTH_PLATFORM_RESET_CAUSE
static berth_reboot_reason_t s_reset_cause = BERTH_REBOOT_UNKNOWN;
#endif

uint32_t berth_platform_uptime_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (s_start.tv_sec == 0 && s_start.tv_nsec == 0) s_start = now;
  return (uint32_t)((now.tv_sec - s_start.tv_sec) * 1000 + (now.tv_nsec - s_start.tv_nsec) / 1000000);
}

void *berth_platform_retained(void) { return s_retained; }

void berth_platform_reset(void) {
  if (s_reset != NULL) longjmp(*s_reset, 1);
  exit(0);
}

void berth_platform_device_id(uint8_t id[8]) { memcpy(id, s_device_id, 8); }

#if BERTH_PLATFORM_ENTROPY
uint32_t berth_platform_entropy(void) {
  uint32_t value = 0;
  FILE *random = fopen("/dev/urandom", "rb");
  if (random != NULL) {
    if (fread(&value, sizeof value, 1, random) != 1) value = 0;
    fclose(random);
  }
  return value;
}
#endif

#if BERTH_PLATFORM_RESET_CAUSE
berth_reboot_reason_t berth_platform_reset_cause(void) { return s_reset_cause; }
void berth_posix_set_reset_cause(berth_reboot_reason_t cause) { s_reset_cause = cause; }
#endif

void berth_posix_set_device_id(const uint8_t id[8]) { memcpy(s_device_id, id, 8); }
void berth_posix_on_reset(jmp_buf *target) { s_reset = target; }

void berth_posix_power_cycle(uint32_t noise) {
  uint8_t *bytes = (uint8_t *)s_retained;
  uint32_t x = noise;
  for (size_t i = 0; i < sizeof s_retained; i++) {
    x = x * 1103515245u + 12345u;
    bytes[i] = noise == 0 ? 0 : (uint8_t)(x >> 24);
  }
  berth_platform_reset();
}
