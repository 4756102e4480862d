//! @file slots.h
//! The two image slots of signed updates (docs/firmware-updates.md) and the bootloader's choice among
//! them, after MCUboot: each slot's trailer keeps its state (empty, pending, testing, confirmed, bad),
//! its image's version and SHA-256, and the download in progress into it; the boot status keeps the
//! slot booted last and the last event (a revert, a refused image, a confirmation) for the application
//! to report. With BERTH_UPDATES; the port supplies the hooks below (the QEMU port:
//! ports/qemu-mps2-an385/slots.c).
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "berth/config.h"

#if BERTH_UPDATES
#include "berth/image.h"

#define BERTH_SLOTS 2u

typedef enum {
  BERTH_SLOT_EMPTY = 0,     //!< no image (perhaps a download in progress)
  BERTH_SLOT_PENDING = 1,   //!< downloaded and verified: to be tested at the next boot
  BERTH_SLOT_TESTING = 2,   //!< booted once, not confirmed yet
  BERTH_SLOT_CONFIRMED = 3, //!< confirmed by the image itself
  BERTH_SLOT_BAD = 4        //!< refused by the bootloader, or reverted
} berth_slot_state_t;

typedef enum {
  BERTH_EVENT_NONE = 0,
  BERTH_EVENT_REVERT = 1,   //!< a slot booted for testing did not confirm itself: the other one booted
  BERTH_EVENT_REFUSED = 2,  //!< an image was refused (its download, or by the bootloader)
  BERTH_EVENT_CONFIRMED = 3 //!< the running image confirmed itself
} berth_update_event_t;

//! A slot's trailer, as the port stores it (the SDK checks its marker and CRC: anything else is empty).
typedef struct {
  uint32_t marker;
  uint8_t state;      //!< berth_slot_state_t
  uint8_t reserved[3];
  uint32_t size;      //!< the image's size in bytes (offered, while downloading)
  uint32_t received;  //!< bytes of the image in the slot (size, once complete)
  uint8_t sha256[32]; //!< the whole image's SHA-256 (offered, while downloading)
  char version[BERTH_IMAGE_FIELD_SIZE];
  uint32_t crc;       //!< CRC-32 of the bytes before it
} berth_slot_trailer_t;

//! The boot status, as the port stores it.
typedef struct {
  uint32_t marker;
  uint8_t running;    //!< the slot booted last
  uint8_t event;      //!< berth_update_event_t
  uint8_t event_slot;
  uint8_t reserved;
  uint32_t crc;
} berth_boot_status_t;

// The port's hooks.

//! The slot's bytes where they can be read (the image at the slot's start).
const uint8_t *berth_port_slot(uint8_t slot);
//! Bytes an image may take in a slot (its trailer apart).
uint32_t berth_port_slot_capacity(void);
//! Write `length` bytes at `offset` in the slot; false when the write failed.
bool berth_port_slot_write(uint8_t slot, uint32_t offset, const uint8_t *bytes, size_t length);
//! Read and write the slot's trailer, as stored (the SDK checks it).
void berth_port_trailer_read(uint8_t slot, berth_slot_trailer_t *trailer);
bool berth_port_trailer_write(uint8_t slot, const berth_slot_trailer_t *trailer);
//! Read and write the boot status, as stored.
void berth_port_boot_status_read(berth_boot_status_t *status);
bool berth_port_boot_status_write(const berth_boot_status_t *status);

// The SDK's.

//! The slot's trailer; an empty one when the stored one is not valid.
void berth_slot_trailer(uint8_t slot, berth_slot_trailer_t *trailer);
//! Store the slot's trailer (its marker and CRC set here).
bool berth_slot_set_trailer(uint8_t slot, berth_slot_trailer_t *trailer);
//! The boot status; slot 0 and no event when the stored one is not valid.
void berth_boot_status(berth_boot_status_t *status);
//! Record `event` about `slot` as the last event.
bool berth_boot_record_event(berth_update_event_t event, uint8_t slot);

//! Verify the image in the slot: its header, that it runs at `load_address` and fits the slot
//! (else BERTH_IMAGE_BAD_HEADER), its signature under `public_key`; `header` filled when it is good.
berth_image_status_t berth_slot_verify(uint8_t slot, const uint8_t public_key[32], uint32_t load_address,
                                       berth_image_header_t *header);

//! The bootloader's choice, to call at each boot: a slot found testing becomes bad (a revert is
//! recorded); a pending slot whose image verifies becomes testing and is chosen (one that does not
//! becomes bad, a refusal recorded); else the confirmed slot booted last, else the other confirmed one
//! (each verified again); else, on a blank device, the `factory` image (`factory_length` bytes
//! readable) is installed in slot 0, confirmed. Answers the slot to boot, or -1 when there is none.
int berth_boot_choose(const uint8_t public_key[32], uint32_t load_address, const uint8_t *factory,
                      size_t factory_length);

//! The slot the bootloader booted (the application's own).
uint8_t berth_update_running_slot(void);
//! The running application confirms itself: its slot, if testing, becomes confirmed (a confirmation
//! recorded); until then a reset reverts it. True when the slot is confirmed.
bool berth_update_confirm(void);
#endif
