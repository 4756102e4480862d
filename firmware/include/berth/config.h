//! @file config.h
//! Build-time options of the Berth firmware SDK. Each is a `#define` that may be set on the compiler's
//! command line (`-DBERTH_LOG_CAPTURE=0`) or in a `berth_config_user.h` found on the include path when
//! `BERTH_USER_CONFIG` is defined. Defaults give the full SDK but for the port hooks (entropy, reset
//! cause), which need the port's support, and CBOR; the minimal configuration turns off everything but
//! metrics, trace, fault capture and the UART transport. `make sizes` (firmware/Makefile) prints what
//! each option costs in flash and RAM.
#pragma once

#ifdef BERTH_USER_CONFIG
#include "berth_config_user.h"
#endif

//! Capture hard faults: the port's HardFault handler calls berth_fault_record(), which keeps the fault
//! in retained RAM for the next boot (reboot reason hard_fault, then a FaultRecord chunk). Off, none of
//! it is built: no fault in the retained record, no FaultRecord chunk, and a hard fault ends in the
//! port's default handler (where a running watchdog resets the device).
#ifndef BERTH_FAULT_CAPTURE
#define BERTH_FAULT_CAPTURE 1
#endif

//! Words of the stack the HardFault handler copies into the fault record, from the stack pointer
//! before the exception upwards (fewer when the stack ends sooner): the server finds the return
//! addresses among them and unwinds them into a backtrace (docs/chunk-format.md). Each word costs
//! 4 bytes of RAM twice (the retained record and the SDK's copy) and of the FaultRecord; 0 sends none.
#ifndef BERTH_FAULT_STACK_WORDS
#define BERTH_FAULT_STACK_WORDS 16
#endif

//! Coredumps of chosen memory: at a hard fault the port's handler also copies the stack above the stack
//! pointer and the RAM regions the application declared (berth_coredump_region(), coredump.h) into
//! retained RAM; the next boot sends them in its FaultRecord. Needs BERTH_FAULT_CAPTURE. Off by
//! default: it costs the retained copy (BERTH_COREDUMP_BYTES and the region table) and, with RLE or
//! CCM, a payload buffer large enough for the FaultRecord that carries it (BERTH_PAYLOAD_MAX).
#ifndef BERTH_COREDUMP
#define BERTH_COREDUMP 0
#endif

//! Bytes a coredump holds in all (the stack's and the regions'); what does not fit is cut and counted
//! as truncated. At most 60000 (a FaultRecord is at most 65 535 bytes).
#ifndef BERTH_COREDUMP_BYTES
#define BERTH_COREDUMP_BYTES 1024
#endif

//! Bytes of the stack a coredump takes, from the stack pointer before the exception upwards (fewer when
//! the stack ends sooner); the regions declared take the rest of BERTH_COREDUMP_BYTES.
#ifndef BERTH_COREDUMP_STACK_BYTES
#define BERTH_COREDUMP_STACK_BYTES 256
#endif

//! Regions the application may declare with berth_coredump_region().
#ifndef BERTH_COREDUMP_REGIONS
#define BERTH_COREDUMP_REGIONS 8
#endif

#if BERTH_COREDUMP && !BERTH_FAULT_CAPTURE
#error "BERTH_COREDUMP needs BERTH_FAULT_CAPTURE"
#endif
#if BERTH_COREDUMP && BERTH_COREDUMP_BYTES > 60000
#error "BERTH_COREDUMP_BYTES must be at most 60000"
#endif

//! Capture log lines (berth_log) into the trace buffer. Off, berth_log(line) is a macro that discards
//! the line, so the calls need no #if of their own.
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

// Transports besides UART, which is always built (transports.h).

//! The USB CDC transport (berth_usb_cdc_transport): a byte stream, as UART.
#ifndef BERTH_TRANSPORT_USB_CDC
#define BERTH_TRANSPORT_USB_CDC 1
#endif

//! The HTTP transport of the POSIX port (ports/posix/http.c, berth_http_transport: the frames of a
//! session posted to /ingest/chunks over a socket). HTTP needs a TCP/IP stack, so it is a port's
//! transport, not the SDK's: this option builds the POSIX port's, and a port with a stack of its own
//! puts its HTTP transport under it too. It changes nothing in a port without one (the Cortex-M port).
#ifndef BERTH_TRANSPORT_HTTP
#define BERTH_TRANSPORT_HTTP 1
#endif

//! The LoRa transport (berth_lora_transport): one frame per packet of BERTH_LORA_PACKET bytes.
#ifndef BERTH_TRANSPORT_LORA
#define BERTH_TRANSPORT_LORA 1
#endif

//! The BLE transport (berth_ble_transport): frames in notifications of BERTH_BLE_PACKET bytes.
#ifndef BERTH_TRANSPORT_BLE
#define BERTH_TRANSPORT_BLE 1
#endif

//! Largest LoRa packet, frame header and CRC included (LoRaWAN EU868 at DR0–2 carries 51 bytes). It
//! sets the LoRa transport's MTU and, with BERTH_BLE_PACKET, the packet buffer of a berth_packet_link_t.
#ifndef BERTH_LORA_PACKET
#define BERTH_LORA_PACKET 51
#endif

//! Largest BLE notification (20 bytes with the default ATT MTU of 23): the BLE transport's packets.
#ifndef BERTH_BLE_PACKET
#define BERTH_BLE_PACKET 20
#endif

//! The port supplies berth_platform_entropy() (platform.h): a hardware random number, an RTC or a
//! counter kept in flash, so sequence numbers start afresh at each power-on.
#ifndef BERTH_PLATFORM_ENTROPY
#define BERTH_PLATFORM_ENTROPY 0
#endif

//! The port supplies berth_platform_reset_cause() (platform.h): why the processor last reset, as its
//! reset-cause hardware tells it, for the resets nobody recorded. The QEMU port tells a watchdog reset
//! (firmware/README.md, "Porting"); the POSIX port reports what berth_posix_set_reset_cause() set.
#ifndef BERTH_PLATFORM_RESET_CAUSE
#define BERTH_PLATFORM_RESET_CAUSE 0
#endif

//! The step-by-step upload: berth_upload_start() and berth_upload_step(), which sends one chunk per call
//! (a main loop or an RTOS task drives it), besides berth_upload() sending the whole session at once.
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

//! Largest serialized payload of one chunk (the trace buffer plus its fields, or 32 metrics; with
//! coredumps, at least a FaultRecord with a full coredump: its bytes, each region's address and length,
//! the stack snapshot and the fields, with room for CBOR's field names).
#ifndef BERTH_PAYLOAD_MAX
#if BERTH_COREDUMP && BERTH_COREDUMP_BYTES + 24 * (BERTH_COREDUMP_REGIONS + 1) + 4 * BERTH_FAULT_STACK_WORDS + 256 > 1200
#define BERTH_PAYLOAD_MAX (BERTH_COREDUMP_BYTES + 24 * (BERTH_COREDUMP_REGIONS + 1) + 4 * BERTH_FAULT_STACK_WORDS + 256)
#else
#define BERTH_PAYLOAD_MAX 1200
#endif
#endif

//! Signed updates (docs/firmware-updates.md): the signed image and its Ed25519 verification (image.h,
//! with vendor/ed25519), the two slots, their states and the bootloader's choice (slots.h, whose hooks
//! the port supplies) and the update receiver (update.h). The Makefile builds them apart, with this
//! option on (`make image-tests`, `make qemu-updatable`); off, none of it is built.
#ifndef BERTH_UPDATES
#define BERTH_UPDATES 0
#endif
