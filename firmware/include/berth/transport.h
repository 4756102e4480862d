//! @file transport.h
//! A transport carries frames to the server (or to a gateway). It has an MTU: the largest payload one
//! frame may carry on that link; chunks longer than it are fragmented (docs/chunk-format.md). A frame
//! reaches the transport in pieces (header, payload bytes, CRC), the last one marked: a byte stream
//! (UART, USB CDC) writes them as they come, a packet radio (LoRa, BLE) gathers one frame per packet,
//! HTTP gathers the frames of a session into one request.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct berth_transport berth_transport_t;

struct berth_transport {
  //! Largest payload per frame; 0 means no limit below the format's 65 535 bytes.
  uint16_t mtu;
  //! Send part of a frame; `end_of_frame` on its last part. 0 on success, negative on failure.
  int (*write)(berth_transport_t *transport, const uint8_t *bytes, size_t length, bool end_of_frame);
  //! End of an upload session (HTTP posts the frames it gathered); may be NULL. 0 on success.
  int (*flush)(berth_transport_t *transport);
  //! The port's own state (a UART base address, a socket, a radio handle).
  void *context;
};

//! The MTUs of the SDK's packet transports unless a port says otherwise.
#define BERTH_MTU_LORA 51
#define BERTH_MTU_BLE 20
