//! @file transports.c
//! Stream and packet transports over the port's write and send functions.
#include "berth/transports.h"

#include <string.h>

static int stream_write(berth_transport_t *t, const uint8_t *bytes, size_t length, bool end_of_frame) {
  (void)end_of_frame;
  const berth_stream_t *s = (const berth_stream_t *)t->context;
  return s->write_bytes(s->context, bytes, length);
}

static berth_transport_t stream_transport(berth_stream_t *s) {
  berth_transport_t t = { 0, stream_write, NULL, s };
  return t;
}

berth_transport_t berth_uart_transport(berth_stream_t *uart) { return stream_transport(uart); }

#if BERTH_TRANSPORT_USB_CDC
berth_transport_t berth_usb_cdc_transport(berth_stream_t *cdc) { return stream_transport(cdc); }
#endif

#if BERTH_TRANSPORT_LORA || BERTH_TRANSPORT_BLE
/** Gather bytes into packets of the link's size; a packet goes when it is full or its frame ends. */
static int packet_write(berth_transport_t *t, const uint8_t *bytes, size_t length, bool end_of_frame) {
  berth_packet_link_t *link = (berth_packet_link_t *)t->context;
  while (length > 0 || (end_of_frame && link->length > 0)) {
    const size_t take = length < link->size - link->length ? length : link->size - link->length;
    memcpy(link->packet + link->length, bytes, take);
    link->length += take;
    bytes += take;
    length -= take;
    if (link->length == link->size || (end_of_frame && length == 0)) {
      const size_t n = link->length;
      link->length = 0;
      const int status = link->send_packet(link->context, link->packet, n);
      if (status != 0) return status;
    }
  }
  return 0;
}

/** A packet larger than a frame's overhead holds one whole frame; a smaller one, a piece of a frame. */
static berth_transport_t packet_transport(berth_packet_link_t *link, size_t size) {
  link->size = size;
  link->length = 0;
  const uint16_t mtu = (uint16_t)(size > BERTH_FRAME_OVERHEAD ? size - BERTH_FRAME_OVERHEAD : 0);
  berth_transport_t t = { mtu, packet_write, NULL, link };
  return t;
}

#endif

#if BERTH_TRANSPORT_LORA
berth_transport_t berth_lora_transport(berth_packet_link_t *radio) { return packet_transport(radio, BERTH_LORA_PACKET); }
#endif
#if BERTH_TRANSPORT_BLE
berth_transport_t berth_ble_transport(berth_packet_link_t *link) { return packet_transport(link, BERTH_BLE_PACKET); }
#endif
