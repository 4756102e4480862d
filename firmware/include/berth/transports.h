//! @file transports.h
//! The SDK's transports, each built on a function the port supplies:
//! - UART (always) and USB CDC: a byte stream; frames are written as they come (no MTU);
//! - LoRa and BLE (to a gateway): packets of one frame each, chunks fragmented to BERTH_MTU_LORA (51)
//!   and BERTH_MTU_BLE (20) payload bytes;
//! - HTTP: in ports/posix (berth_http_transport), frames gathered and posted to /ingest/chunks.
#pragma once
#include "berth/chunk.h"
#include "berth/config.h"
#include "berth/transport.h"

//! A byte stream: write `length` bytes, 0 on success.
typedef struct {
  int (*write_bytes)(void *context, const uint8_t *bytes, size_t length);
  void *context;
} berth_stream_t;

//! A packet link: send one packet of `length` bytes, 0 on success.
typedef struct {
  int (*send_packet)(void *context, const uint8_t *packet, size_t length);
  void *context;
  // One frame being gathered.
  uint8_t frame[BERTH_FRAME_OVERHEAD + BERTH_MTU_LORA];
  size_t length;
} berth_packet_link_t;

berth_transport_t berth_uart_transport(berth_stream_t *uart);
#if BERTH_TRANSPORT_USB_CDC
berth_transport_t berth_usb_cdc_transport(berth_stream_t *cdc);
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
