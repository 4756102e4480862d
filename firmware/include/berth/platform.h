//! @file platform.h
//! What a port supplies to the SDK: time, retained RAM, a way to reset, and the device's identity.
//! Transports bring their own write functions (transport.h). See firmware/README.md, "Porting".
#pragma once
#include <stdint.h>

//! Milliseconds since boot (wraps after 49 days; the SDK only subtracts).
uint32_t berth_platform_uptime_ms(void);

//! The retained RAM region: survives a reset (not a power cycle), never initialised by the C runtime.
//! It must hold `berth_retained_size()` bytes, aligned to 4.
void *berth_platform_retained(void);

//! Reset the processor now (SYSRESETREQ on Cortex-M); does not return.
void berth_platform_reset(void);

//! The 8-byte device id (a unique id register, or a value written at provisioning).
void berth_platform_device_id(uint8_t id[8]);
