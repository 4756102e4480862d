//! @file platform.h
//! What a port supplies to the SDK: time, retained RAM, a way to reset, and the device's identity;
//! optionally entropy and the reset cause. Transports bring their own write functions (transport.h).
//! See firmware/README.md, "Porting".
#pragma once
#include <stdint.h>

#include "berth/config.h"
#include "berth/records.h"

//! Milliseconds since boot (wraps after 49 days; the SDK only subtracts).
uint32_t berth_platform_uptime_ms(void);

//! The retained RAM region: survives a reset (not a power cycle), never initialised by the C runtime.
//! It must hold `berth_retained_size()` bytes, aligned to 4.
void *berth_platform_retained(void);

//! Reset the processor now (SYSRESETREQ on Cortex-M); does not return.
void berth_platform_reset(void);

//! The 8-byte device id (a unique id register, or a value written at provisioning).
void berth_platform_device_id(uint8_t id[8]);

#if BERTH_PLATFORM_ENTROPY
//! 32 bits that differ at every power-on: a hardware random number, an RTC reading, or a counter kept
//! in flash and advanced at each boot. Mixed into the first sequence number after a power cycle.
uint32_t berth_platform_entropy(void);
#endif

#if BERTH_PLATFORM_RESET_CAUSE
//! Why the processor last reset, as its reset-cause hardware tells it (a watchdog, the reset pin, a
//! brown-out, power-on), or BERTH_REBOOT_UNKNOWN when it cannot tell. Asked once per boot, by
//! berth_boot(), for a reset nobody recorded beforehand (berth_reboot(), a hard fault).
berth_reboot_reason_t berth_platform_reset_cause(void);
#endif
