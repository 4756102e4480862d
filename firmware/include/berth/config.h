//! @file config.h
//! Build-time options of the Berth firmware SDK. Each is a `#define` that may be set on the compiler's
//! command line (`-DBERTH_LOG_CAPTURE=0`) or in a `berth_config_user.h` found on the include path when
//! `BERTH_USER_CONFIG` is defined. Defaults give the full SDK; the minimal configuration turns off
//! everything but metrics, trace, fault capture and the UART transport.
#pragma once

#ifdef BERTH_USER_CONFIG
#include "berth_config_user.h"
#endif

//! Capture hard faults into retained memory (needs the port's fault handler glue).
#ifndef BERTH_FAULT_CAPTURE
#define BERTH_FAULT_CAPTURE 1
#endif

//! Capture log lines (berth_log) into the trace buffer.
#ifndef BERTH_LOG_CAPTURE
#define BERTH_LOG_CAPTURE 1
#endif

//! Serialize payloads as CBOR maps instead of Avro binary (flag bit 2).
#ifndef BERTH_SERIALIZATION_CBOR
#define BERTH_SERIALIZATION_CBOR 0
#endif

//! AES-128-CCM sealing of payloads (flag bit 0).
#ifndef BERTH_ENCRYPTION
#define BERTH_ENCRYPTION 1
#endif

//! RLE compression of payloads (flag bit 1).
#ifndef BERTH_COMPRESSION
#define BERTH_COMPRESSION 1
#endif

//! Transports besides UART (which is always built).
#ifndef BERTH_TRANSPORT_USB_CDC
#define BERTH_TRANSPORT_USB_CDC 1
#endif
#ifndef BERTH_TRANSPORT_HTTP
#define BERTH_TRANSPORT_HTTP 1
#endif
#ifndef BERTH_TRANSPORT_LORA
#define BERTH_TRANSPORT_LORA 1
#endif
#ifndef BERTH_TRANSPORT_BLE
#define BERTH_TRANSPORT_BLE 1
#endif

//! Largest LoRa packet, frame header and CRC included (LoRaWAN EU868 at DR0–2 carries 51 bytes).
#ifndef BERTH_LORA_PACKET
#define BERTH_LORA_PACKET 51
#endif

//! Largest BLE notification (20 bytes with the default ATT MTU of 23).
#ifndef BERTH_BLE_PACKET
#define BERTH_BLE_PACKET 20
#endif

//! The port supplies berth_platform_entropy() (platform.h): a hardware random number, an RTC or a
//! counter kept in flash, so sequence numbers start afresh at each power-on.
#ifndef BERTH_PLATFORM_ENTROPY
#define BERTH_PLATFORM_ENTROPY 0
#endif

//! The port supplies berth_platform_reset_cause() (platform.h): why the processor last reset, as its
//! reset-cause hardware tells it.
#ifndef BERTH_PLATFORM_RESET_CAUSE
#define BERTH_PLATFORM_RESET_CAUSE 0
#endif

//! Asynchronous transport and upload: berth_upload_step() sends one frame per call (a main loop or an
//! RTOS task drives it) instead of berth_upload() sending the whole session at once.
#ifndef BERTH_ASYNC_UPLOAD
#define BERTH_ASYNC_UPLOAD 1
#endif

//! Metrics buffer entries (the spec's capacity is 32).
#ifndef BERTH_METRICS_CAPACITY
#define BERTH_METRICS_CAPACITY 32
#endif

//! Longest metric key, in bytes, including the terminating NUL.
#ifndef BERTH_METRIC_KEY_MAX
#define BERTH_METRIC_KEY_MAX 24
#endif

//! Trace buffer bytes (the spec's capacity is 512).
#ifndef BERTH_TRACE_CAPACITY
#define BERTH_TRACE_CAPACITY 512
#endif

//! Largest serialized payload of one chunk (the trace buffer plus its fields, or 32 metrics).
#ifndef BERTH_PAYLOAD_MAX
#define BERTH_PAYLOAD_MAX 1200
#endif
