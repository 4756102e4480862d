//! @file berth_qemu.h
//! The port for QEMU's mps2-an385 board (Cortex-M3): CMSDK UART0 as the transport, SysTick uptime,
//! retained RAM in its own NOLOAD region, SYSRESETREQ reset, the GNU build id from the image, and the
//! hard-fault handler that records the stacked registers and the fault status registers.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/transports.h"

//! Enable UART0's transmitter and start the 1 ms SysTick; call first in main.
void berth_qemu_init(void);
//! The UART transport (frames as raw bytes on UART0).
berth_transport_t berth_qemu_uart(void);
//! The GNU build id of the running image in lowercase hex ("" when linked without one).
const char *berth_qemu_build_id(void);
//! End the emulation with `code` (semihosting SYS_EXIT).
void berth_qemu_exit(int code);
