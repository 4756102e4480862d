//! @file bootloader.c
//! The bootloader of the QEMU example's signed updates (docs/firmware-updates.md): at each reset it lets
//! the SDK choose the slot (berth_boot_choose: reverts an untested image, tests a pending one, installs
//! the factory image on a blank device, each image's signature checked against the fleet key built
//! in), copies that image's payload to the execution region and runs it. It says what it booted on
//! UART0, one line, before the application's frames.
#include <string.h>

#include "berth/slots.h"
#include "berth_qemu.h"
#include "fleet_key.h"
#include "updates.h"

static const char *const STATES[] = { "empty", "pending", "testing", "confirmed", "bad" };

static void say(const char *line) { berth_qemu_uart_stream()->write_bytes(NULL, (const uint8_t *)line, strlen(line)); }

int main(void) {
  berth_qemu_init();
  const int slot = berth_boot_choose(FLEET_KEY, QEMU_EXECUTION, (const uint8_t *)(uintptr_t)QEMU_FACTORY,
                                     QEMU_FACTORY_SIZE);
  if (slot < 0) {
    say("berth boot: no image verifies\n");
    berth_qemu_exit(1);
  }
  berth_image_header_t header;
  berth_image_header(berth_port_slot((uint8_t)slot), berth_port_slot_capacity(), &header);
  berth_slot_trailer_t trailer;
  berth_slot_trailer((uint8_t)slot, &trailer);
  say(slot == 0 ? "berth boot: slot 0 " : "berth boot: slot 1 ");
  say(STATES[trailer.state]);
  say(" ");
  say(header.version);
  say("\n");
  memcpy((void *)(uintptr_t)QEMU_EXECUTION, berth_port_slot((uint8_t)slot) + BERTH_IMAGE_HEADER_SIZE, header.payload_size);
  berth_qemu_run((const uint32_t *)(uintptr_t)QEMU_EXECUTION);
  return 0;
}
