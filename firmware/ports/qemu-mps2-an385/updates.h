//! @file updates.h
//! Signed updates on QEMU's mps2-an385 (BERTH_UPDATES, docs/firmware-updates.md): the memory map of the
//! bootloader, the factory image, the execution region and the two slots, UART0's receiver (for the
//! update frames from the gateway) and the jump into an image. The code space is RAM that QEMU writes
//! back from the files it loaded at each system reset and leaves alone elsewhere, so the slots, their
//! trailers and the boot status outlive resets as they would in flash.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/transports.h"

#define QEMU_BOOT_STATUS 0x0000F000u //!< the boot status, in the last 4 KiB of the bootloader's 64 KiB
#define QEMU_FACTORY 0x00010000u     //!< the factory image QEMU loads (-device loader)
#define QEMU_FACTORY_SIZE 0x000F0000u
#define QEMU_EXECUTION 0x00100000u   //!< where applications are linked and run
#define QEMU_SLOT_0 0x00200000u
#define QEMU_SLOT_SIZE 0x00100000u   //!< each slot: the image, then its trailer in the last 4 KiB
#define QEMU_TRAILER_SPACE 0x1000u

//! Enable UART0's receiver besides its transmitter (after berth_qemu_init()).
void berth_qemu_uart_receive_start(void);
//! The bytes UART0 has received, at most `capacity`, without waiting.
size_t berth_qemu_uart_receive(uint8_t *bytes, size_t capacity);
//! Run the image whose vector table is at `vectors`: its stack pointer and reset handler; no return.
void berth_qemu_run(const uint32_t *vectors);
