//! @file berth_qemu.h
//! The port for QEMU's mps2-an385 board (Cortex-M3): CMSDK UART0 as the transport, SysTick uptime,
//! retained RAM in its own NOLOAD region, SYSRESETREQ reset, the GNU build id from the image, the CMSDK
//! watchdog, the hard-fault handler that records the stacked registers and the fault status registers
//! (BERTH_FAULT_CAPTURE), and the reset cause a watchdog leaves (BERTH_PLATFORM_RESET_CAUSE).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/transports.h"

//! Enable UART0's transmitter, start the 1 ms SysTick and read the reset cause; call first in main,
//! before berth_boot().
void berth_qemu_init(void);
//! The UART transport (frames as raw bytes on UART0).
berth_transport_t berth_qemu_uart(void);
//! UART0 as a byte stream (what the transport writes to; the update frames go on it too).
berth_stream_t *berth_qemu_uart_stream(void);
//! The GNU build id of the running image in lowercase hex ("" when linked without one).
const char *berth_qemu_build_id(void);
//! Start the watchdog: unfed for `timeout_ms`, it raises the NMI (with BERTH_PLATFORM_RESET_CAUSE, the
//! port's NMI handler marks a watchdog reset for the next boot); unfed for another `timeout_ms`, it
//! resets the board. At most 171 000 ms.
void berth_qemu_watchdog_start(uint32_t timeout_ms);
//! Feed the watchdog: it counts `timeout_ms` again.
void berth_qemu_watchdog_feed(void);
//! End the emulation with `code` (semihosting SYS_EXIT).
void berth_qemu_exit(int code);
