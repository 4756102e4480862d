//! @file transports.h
//! The SDK's transports, each built on a function the port supplies:
//! - UART (always) and USB CDC: a byte stream; frames are written as they come (no MTU);
//! - LoRa and BLE (to a gateway): packets of at most BERTH_LORA_PACKET (51) and BERTH_BLE_PACKET (20)
//!   bytes, headers and CRCs included. A packet larger than a frame's 26 bytes of overhead carries one
//!   frame, chunks fragmented to fit (LoRa: 25 payload bytes per frame); a smaller one (BLE's 20-byte
//!   notifications) carries a frame in as many packets as it needs, which the gateway joins again;
//! - HTTP: a port's (BERTH_TRANSPORT_HTTP): ports/posix has one (berth_http_transport), frames gathered
//!   and posted to /ingest/chunks.
//! Each but UART is built only with its option (config.h).
#pragma once
#include "berth/chunk.h"
#include "berth/config.h"
#include "berth/transport.h"

//! A byte stream: write `length` bytes, 0 on success.
typedef struct {
  int (*write_bytes)(void *context, const uint8_t *bytes, size_t length);
  void *context;
} berth_stream_t;

berth_transport_t berth_uart_transport(berth_stream_t *uart);
#if BERTH_TRANSPORT_USB_CDC
berth_transport_t berth_usb_cdc_transport(berth_stream_t *cdc);
#endif
#if BERTH_TRANSPORT_LORA || BERTH_TRANSPORT_BLE
//! The largest packet of the packet transports built.
#if BERTH_TRANSPORT_LORA && (!BERTH_TRANSPORT_BLE || BERTH_LORA_PACKET > BERTH_BLE_PACKET)
#define BERTH_PACKET_MAX BERTH_LORA_PACKET
#else
#define BERTH_PACKET_MAX BERTH_BLE_PACKET
#endif

//! A packet link: send one packet of `length` bytes; 0, BERTH_SEND_FAILED or BERTH_SEND_UNCERTAIN.
typedef struct {
  int (*send_packet)(void *context, const uint8_t *packet, size_t length);
  void *context;
  // Internal: the packet size of the link, and the packet being gathered.
  size_t size;
  uint8_t packet[BERTH_PACKET_MAX];
  size_t length;
} berth_packet_link_t;
#endif

#if BERTH_TRANSPORT_LORA
berth_transport_t berth_lora_transport(berth_packet_link_t *radio);
#endif
#if BERTH_TRANSPORT_BLE
//! The GATT service a device advertises for `berth gateway`, and its characteristic whose
//! notifications carry the packets (one frame each) of the BLE transport.
#define BERTH_BLE_SERVICE_UUID "b3a70001-2d6c-4c1e-9a51-7f0e5b1e7a00"
#define BERTH_BLE_CHUNKS_UUID "b3a70002-2d6c-4c1e-9a51-7f0e5b1e7a00"
berth_transport_t berth_ble_transport(berth_packet_link_t *link);
#endif
