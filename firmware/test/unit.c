//! @file unit.c
//! Host unit tests of the SDK (POSIX port): CRC, SHA-256, RLE, AES-CCM, metrics, trace, the retained record
//! across a "reset", the coredump's capture, bounds and upload (BERTH_COREDUMP), the port's reset cause,
//! frames over UART, LoRa and BLE, and chunks asking for what
//! the build left out. The checks of an option the build leaves out are left out with it. Prints
//! TAP-like lines `ok N - name` / `not ok N - name`.
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "berth/ccm.h"
#include "berth/chunk.h"
#include "berth/coredump.h"
#include "berth/crc32.h"
#include "berth/metrics.h"
#include "berth/platform.h"
#include "berth/reboot.h"
#include "berth/rle.h"
#include "berth/sha256.h"
#include "berth/trace.h"
#include "berth/transports.h"
#include "berth_posix.h"
#include "hex.h"

static int s_test;
static int s_failed;

static void check(int ok, const char *name) {
  printf("%sok %d - %s\n", ok ? "" : "not ", ++s_test, name);
  if (!ok) s_failed++;
}

static void test_crc(void) {
  check(berth_crc32(0, (const uint8_t *)"123456789", 9) == 0xCBF43926u, "CRC-32 check value");
  check(berth_crc32(berth_crc32(0, (const uint8_t *)"1234", 4), (const uint8_t *)"56789", 5) == 0xCBF43926u, "CRC-32 continues");
}

static bool sha256_is(const uint8_t *bytes, size_t length, size_t piece, const char *expected) {
  berth_sha256_t sha;
  berth_sha256_init(&sha);
  for (size_t at = 0; at < length; at += piece) berth_sha256_update(&sha, bytes + at, length - at < piece ? length - at : piece);
  uint8_t digest[32], want[32];
  berth_sha256_final(&sha, digest);
  unhex(expected, want);
  return memcmp(digest, want, 32) == 0;
}

static void test_sha256(void) {
  // FIPS 180-4's examples, and a million 'a's fed in uneven pieces.
  check(sha256_is((const uint8_t *)"", 0, 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "SHA-256 of nothing");
  check(sha256_is((const uint8_t *)"abc", 3, 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "SHA-256 of abc");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check(sha256_is((const uint8_t *)two, strlen(two), 7, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"), "SHA-256 of the two-block message, 7 bytes at a time");
  static uint8_t million[1000000];
  memset(million, 'a', sizeof million);
  check(sha256_is(million, sizeof million, 333, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "SHA-256 of a million a's, 333 bytes at a time");
}

#if BERTH_COMPRESSION
static void test_rle(void) {
  const uint8_t in[] = { 0, 0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4, 5 };
  const uint8_t expected[] = { 0x0A, 0x00, 0x05, 0x01, 0x02, 0x03, 0x08, 0x04, 0x01, 0x05 };
  uint8_t out[64], back[64];
  const size_t n = berth_rle_encode(in, sizeof in, out, sizeof out);
  check(n == sizeof expected && memcmp(out, expected, n) == 0, "RLE encodes the example of docs/rle.md");
  check(berth_rle_decode(out, n, back, sizeof back) == (long)sizeof in && memcmp(back, in, sizeof in) == 0, "RLE decodes it back");
  uint8_t big[3000], packed[BERTH_RLE_MAX(3000)], unpacked[3000];
  uint32_t x = 7;
  for (size_t i = 0; i < sizeof big; i++) {
    x = x * 1103515245u + 12345u;
    big[i] = (uint8_t)((x >> 16) % 7 < 3 ? 0 : x >> 24); // runs and literals
  }
  const size_t m = berth_rle_encode(big, sizeof big, packed, sizeof packed);
  check(m > 0 && m <= BERTH_RLE_MAX(sizeof big), "RLE stays within its bound");
  check(berth_rle_decode(packed, m, unpacked, sizeof unpacked) == (long)sizeof big && memcmp(unpacked, big, sizeof big) == 0, "RLE round trip of 3000 mixed bytes");
  const uint8_t bad[] = { 0x00 };
  check(berth_rle_decode(bad, 1, back, sizeof back) == -1, "RLE refuses a zero header");
}
#endif

#if BERTH_ENCRYPTION
static void test_ccm(void) {
  // Vector heartbeat-avro-ccm of docs/chunk-format.md.
  uint8_t key[16], nonce[13], aad[22], plain[4], sealed[12], expected[12], opened[4];
  for (int i = 0; i < 16; i++) key[i] = (uint8_t)i;
  unhex("00112233aabbccdd1c0c0b0a00", nonce);
  unhex("42540206010000000011223" "3aabbccdd1c0c0b0a0c00", aad);
  unhex("e0c80722", plain);
  unhex("858c2a7f8ccfc4d18327e189", expected);
  berth_ccm_seal(key, nonce, aad, sizeof aad, plain, sizeof plain, sealed);
  check(memcmp(sealed, expected, sizeof sealed) == 0, "AES-128-CCM seals the vector of the chunk format");
  check(berth_ccm_open(key, nonce, aad, sizeof aad, sealed, sizeof sealed, opened) && memcmp(opened, plain, 4) == 0, "and opens it");
  sealed[3] ^= 1;
  check(!berth_ccm_open(key, nonce, aad, sizeof aad, sealed, sizeof sealed, opened), "an altered byte fails the tag");
}
#endif

static void test_metrics_and_trace(void) {
  berth_metrics_clear();
  berth_metrics_gauge("battery_mv", 3700);
  berth_metrics_gauge("battery_mv", 3712);
  berth_metrics_increment("tx_packets", 2);
  berth_metrics_increment("tx_packets", 3);
  berth_metrics_observe("loop_us", 880);
  berth_metrics_observe("loop_us", 910);
  const berth_metric_t *e = berth_metrics_entries();
  check(berth_metrics_count() == 4 && e[0].value == 3712 && e[1].value == 5 && e[2].value == 880 && e[3].value == 910,
        "a gauge keeps its last value, an increment adds up, each observation is an entry");
  for (int i = 0; i < 40; i++) berth_metrics_observe("sample", i);
  check(berth_metrics_count() == BERTH_METRICS_CAPACITY && berth_metrics_dropped() == 40 - (BERTH_METRICS_CAPACITY - 4),
        "a full buffer drops new entries and counts them");
  berth_trace_clear();
  char line[100];
  memset(line, 'x', sizeof line);
  for (int i = 0; i < 6; i++) berth_trace_write(line, sizeof line);
  check(berth_trace_length() == BERTH_TRACE_CAPACITY && berth_trace_dropped() == 600 - BERTH_TRACE_CAPACITY,
        "the trace keeps what fits and counts what it dropped");
}

static void test_sealed_buffers(void) {
  berth_metrics_clear();
  berth_metrics_gauge("battery_mv", 3700);
  berth_metrics_increment("tx_packets", 2);
  check(berth_metrics_seal() == 2, "sealing freezes the entries held");
  berth_metrics_gauge("battery_mv", 3600);
  berth_metrics_increment("tx_packets", 5);
  berth_metrics_increment("tx_packets", 1);
  const berth_metric_t *e = berth_metrics_entries();
  check(berth_metrics_count() == 4 && e[0].value == 3700 && e[1].value == 2 && e[2].value == 3600 && e[3].value == 6,
        "records after the seal start new entries: the frozen ones keep their values");
  berth_metrics_consume(2);
  check(berth_metrics_count() == 2 && e[0].value == 3600 && strcmp(e[1].key, "tx_packets") == 0 && e[1].value == 6,
        "consuming the delivered entries keeps what was recorded since");
  berth_metrics_increment("tx_packets", 1);
  check(berth_metrics_count() == 2 && e[1].value == 7, "after consuming, records update entries again");
  berth_trace_clear();
  berth_trace_write("sent\n", 5);
  const size_t sent = berth_trace_length();
  berth_trace_write("later\n", 6);
  berth_trace_consume(sent, 0);
  check(berth_trace_length() == 6 && memcmp(berth_trace_data(), "later\n", 6) == 0, "the trace gives up only the delivered bytes");
}

/** No fault is pending (always so without fault capture). */
static int no_fault(void) {
#if BERTH_FAULT_CAPTURE
  return !berth_fault_pending(NULL);
#else
  return 1;
#endif
}

static void test_retained(void) {
  static jmp_buf reset;
  static volatile int boots;
  static volatile uint32_t first; // sequence number
  boots = 0;
  berth_posix_on_reset(&reset);
  setjmp(reset);
  boots++;
  berth_boot(1000);
  if (boots == 1) {
    check(berth_reboot_reason() == BERTH_REBOOT_POWER_ON && berth_boot_count() == 1 && no_fault(), "a cold boot is power_on, boot 1");
    first = berth_next_sequence();
    check((BERTH_PLATFORM_ENTROPY || first == 1000) && berth_next_sequence() == first + 1,
          "sequence numbers start from the seed (mixed with the port's entropy) and count up");
#if BERTH_FAULT_CAPTURE
    const berth_fault_t fault = { .pc = 0x08000123, .lr = 0x08000457, .sp = 0x20001f00, .psr = 0x61000000, .cfsr = 0x8200, .hfsr = 0x40000000, .mmfar = 0, .bfar = 0xe000ed38, .uptime_ms = 4242 };
    berth_fault_record(&fault);
#endif
    berth_platform_reset();
  }
  if (boots == 2) {
#if BERTH_FAULT_CAPTURE
    berth_fault_t fault;
    check(berth_reboot_reason() == BERTH_REBOOT_HARD_FAULT && berth_boot_count() == 2, "after a fault: hard_fault, boot 2");
    check(berth_fault_pending(&fault) && fault.pc == 0x08000123 && fault.uptime_ms == 4242, "the fault record survived the reset");
    berth_fault_clear();
#else
    check(berth_reboot_reason() == BERTH_REBOOT_UNKNOWN && berth_boot_count() == 2, "after a reset nobody recorded: unknown, boot 2");
#endif
    check(berth_next_sequence() == first + 2, "the sequence number survived the reset");
    berth_reboot(BERTH_REBOOT_SOFTWARE_RESET);
  }
  if (boots == 3) {
    check(berth_reboot_reason() == BERTH_REBOOT_SOFTWARE_RESET && no_fault(), "a requested reboot is software_reset, no fault");
    ((uint8_t *)berth_platform_retained())[8] ^= 0xff; // corrupt the record
    berth_platform_reset();
  }
  if (boots == 4) {
    check(berth_reboot_reason() == BERTH_REBOOT_POWER_ON && berth_boot_count() == 1, "a record failing its CRC starts over");
  }
  berth_posix_on_reset(NULL);
}

#if BERTH_FAULT_CAPTURE && BERTH_FAULT_STACK_WORDS > 0
static void test_fault_stack(void) {
  static jmp_buf reset;
  static volatile int boots;
  boots = 0;
  berth_posix_on_reset(&reset);
  setjmp(reset);
  boots++;
  berth_boot(1);
  berth_fault_t fault;
  if (boots == 1) {
    berth_fault_t crash = { .pc = 0x08000123, .lr = 0x08000457, .uptime_ms = 77, .stack_words = BERTH_FAULT_STACK_WORDS + 5, .stack = { 0x20001f10, 0x08000a5b } };
    berth_fault_record(&crash);
    berth_platform_reset();
  }
  if (boots == 2) {
    check(berth_fault_pending(&fault) && fault.stack_words == BERTH_FAULT_STACK_WORDS && fault.stack[0] == 0x20001f10 && fault.stack[1] == 0x08000a5b,
          "the stack snapshot survived the reset, no longer than BERTH_FAULT_STACK_WORDS");
    uint8_t payload[64 + 4 * BERTH_FAULT_STACK_WORDS];
    berth_buf_t out = berth_buf(payload, sizeof payload);
    berth_encode_fault_record(&out, &fault);
#if !BERTH_SERIALIZATION_CBOR
    // Avro: nine zigzag longs, then the bytes' length (zigzag) and the words, little-endian (then, with
    // coredumps, an empty array and 0 bytes truncated).
    const size_t stack_at = out.length - 4u * BERTH_FAULT_STACK_WORDS - (BERTH_COREDUMP ? 2u : 0u);
    check(!out.overflow && payload[stack_at] == 0x10 && payload[stack_at + 1] == 0x1f && payload[stack_at + 4] == 0x5b, "the FaultRecord ends in the snapshot's bytes");
#endif
    // As firmware without snapshots (or with another size) would leave the region after its record.
    ((uint8_t *)berth_platform_retained())[berth_retained_size() - BERTH_COREDUMP_RETAINED - 8] ^= 0xff;
    berth_platform_reset();
  }
  if (boots == 3) {
    check(berth_fault_pending(&fault) && fault.pc == 0x08000123 && fault.uptime_ms == 77 && fault.stack_words == 0,
          "a snapshot failing its CRC is dropped, the fault kept");
    berth_fault_clear();
  }
  berth_posix_on_reset(NULL);
}
#endif

#if BERTH_PLATFORM_RESET_CAUSE
static void test_reset_cause(void) {
  static jmp_buf reset;
  static volatile int boots;
  boots = 0;
  berth_posix_on_reset(&reset);
  setjmp(reset);
  if (++boots == 1) {
    berth_posix_set_reset_cause(BERTH_REBOOT_BROWN_OUT);
    berth_posix_power_cycle(0); // the record is lost
  }
  berth_boot(1);
  if (boots == 2) {
    check(berth_reboot_reason() == BERTH_REBOOT_BROWN_OUT && berth_boot_count() == 1, "no valid record: the port's reset cause rather than power_on");
    berth_posix_set_reset_cause(BERTH_REBOOT_WATCHDOG);
    berth_platform_reset();
  }
  if (boots == 3) {
    check(berth_reboot_reason() == BERTH_REBOOT_WATCHDOG && berth_boot_count() == 2, "a reset nobody recorded: the port's reset cause");
    berth_reboot(BERTH_REBOOT_FIRMWARE_UPDATE);
  }
  if (boots == 4) {
    check(berth_reboot_reason() == BERTH_REBOOT_FIRMWARE_UPDATE, "a recorded reason rather than the port's reset cause");
    berth_posix_set_reset_cause(BERTH_REBOOT_UNKNOWN);
    berth_platform_reset();
  }
  if (boots == 5) {
    check(berth_reboot_reason() == BERTH_REBOOT_UNKNOWN, "a reset neither recorded nor told by the port: unknown");
  }
  berth_posix_on_reset(NULL);
}
#endif

static uint8_t s_captured[4096];
static size_t s_captured_length;
static size_t s_packets;
static size_t s_largest_packet;
static int capture(void *context, const uint8_t *bytes, size_t length) {
  (void)context;
  memcpy(s_captured + s_captured_length, bytes, length);
  s_captured_length += length;
  s_packets++;
  if (length > s_largest_packet) s_largest_packet = length;
  return 0;
}

static void encode_blob(berth_buf_t *out, const void *record) {
  berth_buf_put(out, record, 100);
}

/** The record of the framing tests: 100 bytes counting up. */
static const uint8_t *blob(void) {
  static uint8_t bytes[100];
  for (int i = 0; i < 100; i++) bytes[i] = (uint8_t)i;
  return bytes;
}

static const uint8_t DEVICE[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const berth_chunk_options_t PLAIN = { false, NULL };

static int frame_crc_ok(const uint8_t *frame, size_t payload) {
  const uint8_t *crc = frame + 22 + payload;
  return berth_crc32(0, frame, 22 + payload) == (uint32_t)(crc[0] | crc[1] << 8 | crc[2] << 16 | (uint32_t)crc[3] << 24);
}

static void test_uart(void) {
  berth_stream_t stream = { capture, NULL };
  berth_transport_t uart = berth_uart_transport(&stream);
  s_captured_length = s_packets = 0;
  check(berth_chunk_send(&uart, &PLAIN, BERTH_CHUNK_TRACE, DEVICE, 8, encode_blob, blob(), false) == 0 && s_captured_length == 126 &&
        s_captured[6] == 0 && s_captured[20] == 100 && frame_crc_ok(s_captured, 100), "a 100-byte chunk over UART is one frame");
#if !BERTH_COMPRESSION
  const berth_chunk_options_t compressed = { true, NULL };
  s_captured_length = 0;
  check(berth_chunk_send(&uart, &compressed, BERTH_CHUNK_TRACE, DEVICE, 9, encode_blob, blob(), false) == BERTH_CHUNK_UNSUPPORTED &&
        s_captured_length == 0, "without BERTH_COMPRESSION, a chunk asking for RLE is refused, nothing sent");
#endif
#if !BERTH_ENCRYPTION
  const uint8_t key[16] = { 0 };
  const berth_chunk_options_t sealed = { false, key };
  s_captured_length = 0;
  check(berth_chunk_send(&uart, &sealed, BERTH_CHUNK_TRACE, DEVICE, 10, encode_blob, blob(), false) == BERTH_CHUNK_UNSUPPORTED &&
        s_captured_length == 0, "without BERTH_ENCRYPTION, a chunk asking for CCM is refused, nothing sent in the clear");
#endif
}

#if BERTH_COREDUMP
static uint32_t s_counter;                  // a named global of the application
static uint8_t s_log[BERTH_COREDUMP_BYTES]; // more than the room left after the stack and the counter

static void test_coredump(void) {
  static jmp_buf reset;
  static volatile int boots;
  static uint32_t stack[BERTH_COREDUMP_STACK_BYTES / 4 + 8]; // a stack longer than the window
  const uint32_t log_kept = BERTH_COREDUMP_BYTES - BERTH_COREDUMP_STACK_BYTES - 4;
  boots = 0;
  berth_posix_on_reset(&reset);
  setjmp(reset);
  boots++;
  berth_boot(1);
  berth_fault_t fault;
  const berth_coredump_t *c = berth_coredump_pending();
  if (boots == 1) {
    check(c == NULL, "no coredump before a fault");
    berth_coredump_reset_regions();
    for (size_t i = 0; i < sizeof stack / 4; i++) stack[i] = 0x5a000000u + (uint32_t)i;
    memset(s_log, 0xab, sizeof s_log);
    s_counter = 42;
    check(berth_coredump_region(&s_counter, sizeof s_counter) == 0 && berth_coredump_region(s_log, sizeof s_log) == 0 &&
          berth_coredump_region(&s_counter, 0) == -1, "regions are declared; an empty one is refused");
    berth_coredump_capture((uintptr_t)stack, (uintptr_t)(stack + sizeof stack / 4));
    const berth_fault_t crash = { .pc = 0x08000123, .lr = 0x08000457, .sp = 0x20001f00, .uptime_ms = 5 };
    berth_fault_record(&crash);
    s_counter = 7; // after the crash: the coredump keeps 42
    berth_platform_reset();
  }
  if (boots == 2) {
    check(berth_fault_pending(&fault) && fault.coredump == c && c != NULL && c->regions == 3, "the coredump survived the reset with its fault");
    check(c->region[0].address == (uintptr_t)stack && c->region[0].length == BERTH_COREDUMP_STACK_BYTES &&
          memcmp(berth_coredump_bytes(c, 0), stack, BERTH_COREDUMP_STACK_BYTES) == 0, "the stack from the stack pointer, BERTH_COREDUMP_STACK_BYTES of it");
    uint32_t counter;
    memcpy(&counter, berth_coredump_bytes(c, 1), 4);
    check(c->region[1].address == (uintptr_t)&s_counter && c->region[1].length == 4 && counter == 42, "the counter as it was at the fault");
    check(c->region[2].length == log_kept && berth_coredump_bytes(c, 2)[log_kept - 1] == 0xab && c->truncated == sizeof s_log - log_kept,
          "the region that does not fit is cut at BERTH_COREDUMP_BYTES, the bytes cut counted");
    s_captured_length = 0;
    berth_stream_t stream = { capture, NULL };
    berth_transport_t uart = berth_uart_transport(&stream);
    static const uint8_t key[16] = { 1, 2, 3 };
    const berth_chunk_options_t options = { BERTH_COMPRESSION, BERTH_ENCRYPTION ? key : NULL };
    check(berth_chunk_send(&uart, &options, BERTH_CHUNK_FAULT_RECORD, DEVICE, 20, berth_encode_fault_record, &fault, false) == 0 &&
          s_captured_length > 26, "the FaultRecord with a full coredump fits a chunk (RLE'd and sealed when built in)");
    static uint8_t payload[BERTH_PAYLOAD_MAX];
    berth_buf_t out = berth_buf(payload, sizeof payload);
    berth_encode_fault_record(&out, &fault);
    check(!out.overflow && out.length > BERTH_COREDUMP_BYTES, "its serialized record fits BERTH_PAYLOAD_MAX");
    ((uint8_t *)berth_platform_retained())[berth_retained_size() - 16] ^= 0xff; // corrupt the coredump's bytes
    berth_platform_reset();
  }
  if (boots == 3) {
    check(berth_fault_pending(&fault) && fault.pc == 0x08000123 && fault.coredump == NULL && c == NULL, "a coredump failing its CRC is dropped, the fault kept");
    berth_coredump_capture((uintptr_t)stack, (uintptr_t)stack); // an empty stack: the regions only
    const berth_fault_t crash = { .pc = 0x08000125 };
    berth_fault_record(&crash);
    berth_platform_reset();
  }
  if (boots == 4) {
    check(c != NULL && c->regions == 2 && c->region[0].address == (uintptr_t)&s_counter, "a stack pointer at the top of the stack captures no stack");
    berth_fault_clear();
    check(!berth_fault_pending(NULL) && berth_coredump_pending() == NULL, "the delivered fault's coredump is cleared with it");
    for (int i = 2; i < BERTH_COREDUMP_REGIONS; i++) berth_coredump_region(&s_counter, 4);
    check(berth_coredump_region(&s_counter, 4) == -1, "a region past BERTH_COREDUMP_REGIONS is refused");
    berth_coredump_reset_regions();
  }
  berth_posix_on_reset(NULL);
}
#endif

#if BERTH_TRANSPORT_LORA
static void test_lora(void) {
  berth_packet_link_t radio = { .send_packet = capture };
  berth_transport_t lora = berth_lora_transport(&radio);
  s_captured_length = s_packets = s_largest_packet = 0;
  check(berth_chunk_send(&lora, &PLAIN, BERTH_CHUNK_TRACE, DEVICE, 11, encode_blob, blob(), false) == 0, "a 100-byte chunk over LoRa");
  // 51-byte packets, each one frame: 26 bytes of header and CRC, 25 of payload, four fragments.
  int fragments_ok = s_packets == 4 && s_largest_packet == 51 && s_captured_length == 4 * 51;
  for (size_t i = 0; i < 4 && fragments_ok; i++) {
    const uint8_t *frame = s_captured + 51 * i;
    fragments_ok = frame[2] == 2 && frame[5] == i && frame[6] == 4 && frame[20] == 25 && frame_crc_ok(frame, 25);
  }
  check(fragments_ok, "is four frames of 25 payload bytes, one per 51-byte packet, each with its CRC");
}
#endif

#if BERTH_TRANSPORT_BLE
static void test_ble(void) {
  berth_packet_link_t link = { .send_packet = capture };
  berth_transport_t ble = berth_ble_transport(&link);
  s_captured_length = s_packets = s_largest_packet = 0;
  check(berth_chunk_send(&ble, &PLAIN, BERTH_CHUNK_TRACE, DEVICE, 12, encode_blob, blob(), true) == 0, "a 100-byte chunk over BLE, as a retransmission");
  // 20-byte notifications cannot hold a frame: one 126-byte frame goes in 7 of them (6 full, 6 bytes).
  check(s_packets == 7 && s_largest_packet == 20 && s_captured_length == 126 && s_captured[6] == 0 && s_captured[20] == 100 &&
        frame_crc_ok(s_captured, 100), "is one frame in seven notifications of at most 20 bytes");
  check(s_captured[4] == (BERTH_SERIALIZATION_FLAG | BERTH_FLAG_RETRANSMITTED), "with the retransmission bit");
}
#endif

int main(void) {
  test_crc();
  test_sha256();
#if BERTH_COMPRESSION
  test_rle();
#endif
#if BERTH_ENCRYPTION
  test_ccm();
#endif
  test_metrics_and_trace();
  test_sealed_buffers();
  test_retained();
#if BERTH_FAULT_CAPTURE && BERTH_FAULT_STACK_WORDS > 0
  test_fault_stack();
#endif
#if BERTH_PLATFORM_RESET_CAUSE
  test_reset_cause();
#endif
  test_uart();
#if BERTH_COREDUMP
  test_coredump();
#endif
#if BERTH_TRANSPORT_LORA
  test_lora();
#endif
#if BERTH_TRANSPORT_BLE
  test_ble();
#endif
  printf("1..%d\n", s_test);
  return s_failed == 0 ? 0 : 1;
}
