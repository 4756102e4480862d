//! @file receiver.c
//! The update receiver (include/berth/update.h) on the host, over TCP: with the slots in memory
//! (memory_slots.h) and the factory image installed in slot 0, it connects to a gateway's side of the
//! update frames (test/support/update-standin.ts in test/firmware/image.test.ts), runs one session and
//! prints how it ended (ready, refused, none, no-answer) and what the bootloader would boot next:
//!   receiver <port> <public key hex> <factory image>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "berth/platform.h"
#include "berth/update.h"
#include "hex.h"
#include "memory_slots.h"

#define LOAD 0x00100000u

void berth_platform_device_id(uint8_t id[8]) {
  static const uint8_t ID[8] = { 0xc0, 0xff, 0xee, 0x00, 0x00, 0x00, 0x00, 0x42 };
  memcpy(id, ID, 8);
}

static uint32_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint32_t)((uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u);
}

static int socket_write(void *context, const uint8_t *bytes, size_t length) {
  const int fd = *(const int *)context;
  return send(fd, bytes, length, MSG_NOSIGNAL) == (ssize_t)length ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc != 4 || strlen(argv[2]) != 64) {
    fprintf(stderr, "usage: receiver <port> <public key hex> <factory image>\n");
    return 2;
  }
  uint8_t key[32];
  unhex(argv[2], key);
  static uint8_t factory[MEMORY_SLOT_CAPACITY];
  FILE *file = fopen(argv[3], "rb");
  if (file == NULL) {
    perror(argv[3]);
    return 2;
  }
  const size_t factory_length = fread(factory, 1, sizeof factory, file);
  fclose(file);
  memory_slots_erase();
  if (berth_boot_choose(key, LOAD, factory, factory_length) != 0) {
    fprintf(stderr, "the factory image does not verify\n");
    return 2;
  }

  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])) };
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    perror("connect");
    return 2;
  }
  berth_stream_t link = { socket_write, &fd };
  berth_update_t update = { .link = &link, .public_key = key, .load_address = LOAD, .answer_ms = 200, .resends = 3 };
  berth_update_start(&update, now_ms());
  berth_update_status_t status = BERTH_UPDATE_WAITING;
  while (status == BERTH_UPDATE_WAITING) {
    struct pollfd readable = { .fd = fd, .events = POLLIN };
    uint8_t bytes[256];
    const ssize_t n = poll(&readable, 1, 20) > 0 ? recv(fd, bytes, sizeof bytes, 0) : 0;
    status = n > 0 ? berth_update_feed(&update, bytes, (size_t)n, now_ms()) : berth_update_poll(&update, now_ms());
  }
  close(fd);
  static const char *const NAMES[] = { "waiting", "idle", "none", "ready", "refused", "no-answer" };
  static const char *const STATES[] = { "empty", "pending", "testing", "confirmed", "bad" };
  const int next = berth_boot_choose(key, LOAD, factory, factory_length);
  berth_slot_trailer_t trailer;
  berth_slot_trailer((uint8_t)next, &trailer);
  printf("%s, next boot: slot %d %s\n", NAMES[status], next, STATES[trailer.state]);
  return 0;
}
