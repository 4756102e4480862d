//! @file transport.h
//! A transport carries frames to the server (or to a gateway). It has an MTU: the largest payload one
//! frame may carry on that link (a packet radio derives it from its packet size); chunks longer than
//! it are fragmented (docs/chunk-format.md). A frame reaches the transport in pieces (header, payload
//! bytes, CRC), the last one marked: a byte stream (UART, USB CDC, BLE notifications) writes them as
//! they come, a LoRa radio gathers one frame per packet, HTTP gathers the frames of a session into one
//! request.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct berth_transport berth_transport_t;

//! What a write or a flush may return besides 0 (sent, and for HTTP answered with every frame taken):
//! nothing reached the other end (no connection, a refusal before the request was read) ...
#define BERTH_SEND_FAILED (-1)
//! ... or bytes left the device and no answer says whether they arrived (a lost answer, a timeout, a
//! 5xx, frames refused for a reason that can change): what is sent again goes as a retransmission.
#define BERTH_SEND_UNCERTAIN (-3)

struct berth_transport {
  //! Largest payload per frame; 0 means no limit below the format's 65 535 bytes.
  uint16_t mtu;
  //! Send part of a frame; `end_of_frame` on its last part. 0, BERTH_SEND_FAILED or BERTH_SEND_UNCERTAIN.
  int (*write)(berth_transport_t *transport, const uint8_t *bytes, size_t length, bool end_of_frame);
  //! End of an upload session (HTTP posts the frames it gathered); may be NULL. As write.
  int (*flush)(berth_transport_t *transport);
  //! The port's own state (a UART base address, a socket, a radio handle).
  void *context;
};
