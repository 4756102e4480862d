//! @file ota.c
//! OTA updates over the POSIX port's HTTP: the update check (GET /ota/update?device=<hex> with the
//! device key: 200 with the offer's JSON, or 204) and the image's download (GET of the offer's URL
//! with `Range: bytes=<received>-`), streamed into the port's slot through its write hook and hashed
//! on the way; the image is reported ready only when its SHA-256 is the offer's. Built with
//! BERTH_TRANSPORT_HTTP only.
#include "berth_posix.h"

#if BERTH_TRANSPORT_HTTP
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/** Send a GET of `path` (with `range_from` > 0: from that byte on) and read the answer's head into
 * http->response; returns the socket (positioned at the body, whose first bytes are in `*body`,
 * `*body_length` of them), or -1 when nothing came back. */
static int get(berth_http_t *http, const char *path, uint32_t range_from, const char **body, size_t *body_length) {
  http->status = 0;
  http->response[0] = '\0';
  const int fd = berth_posix_connect(http);
  if (fd < 0) return -1;
  char head[512];
  char range[48] = "";
  if (range_from > 0) snprintf(range, sizeof range, "Range: bytes=%lu-\r\n", (unsigned long)range_from);
  const int n = snprintf(head, sizeof head, "GET %s HTTP/1.1\r\nHost: %s:%u\r\nX-API-Key: %s\r\n%sConnection: close\r\n\r\n",
    path, http->host, (unsigned)http->port, http->api_key, range);
  if (n <= 0 || (size_t)n >= sizeof head || berth_posix_send_all(fd, head, (size_t)n) != 0) {
    close(fd);
    return -1;
  }
  size_t got = 0;
  const char *end = NULL;
  while (end == NULL && got < sizeof http->response - 1) {
    const ssize_t r = recv(fd, http->response + got, sizeof http->response - 1 - got, 0);
    if (r <= 0) break;
    got += (size_t)r;
    http->response[got] = '\0';
    end = strstr(http->response, "\r\n\r\n");
  }
  if (end == NULL || sscanf(http->response, "HTTP/1.1 %d", &http->status) != 1) {
    close(fd);
    return -1;
  }
  *body = end + 4;
  *body_length = got - (size_t)(*body - http->response);
  return fd;
}

/** The string value of `"key":"…"` in `json` into `out` (at most `size` - 1 characters); 0 when found. */
static int json_string(const char *json, const char *key, char *out, size_t size) {
  char pattern[40];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char *at = strstr(json, pattern);
  if (at == NULL) return -1;
  at += strlen(pattern);
  const char *close_quote = strchr(at, '"');
  if (close_quote == NULL || (size_t)(close_quote - at) >= size) return -1;
  memcpy(out, at, (size_t)(close_quote - at));
  out[close_quote - at] = '\0';
  return 0;
}

static int hex_value(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int berth_ota_check(berth_http_t *http, const uint8_t device[8], berth_ota_offer_t *offer) {
  char path[64] = "/ota/update?device=";
  for (int i = 0; i < 8; i++) snprintf(path + strlen(path), 3, "%02x", device[i]);
  const char *body = NULL;
  size_t length = 0;
  const int fd = get(http, path, 0, &body, &length);
  if (fd < 0) return BERTH_SEND_FAILED;
  // The offer is small: read the rest of it behind the head.
  size_t got = (size_t)(body - http->response) + length;
  ssize_t r;
  while (got < sizeof http->response - 1 && (r = recv(fd, http->response + got, sizeof http->response - 1 - got, 0)) > 0) got += (size_t)r;
  http->response[got] = '\0';
  close(fd);
  if (http->status == 204) return BERTH_OTA_NONE;
  if (http->status != 200) return BERTH_SEND_UNCERTAIN;
  char sha[65], size[16];
  const char *json = strstr(http->response, "\r\n\r\n") + 4;
  const char *size_at = strstr(json, "\"size\":");
  if (json_string(json, "release", offer->release, sizeof offer->release) != 0 || json_string(json, "version", offer->version, sizeof offer->version) != 0 ||
      json_string(json, "sha256", sha, sizeof sha) != 0 || json_string(json, "url", offer->url, sizeof offer->url) != 0 || strlen(sha) != 64 ||
      size_at == NULL || sscanf(size_at, "\"size\":%15[0-9]", size) != 1) {
    return BERTH_SEND_UNCERTAIN;
  }
  offer->size = (uint32_t)strtoul(size, NULL, 10);
  for (int i = 0; i < 32; i++) {
    const int high = hex_value(sha[2 * i]), low = hex_value(sha[2 * i + 1]);
    if (high < 0 || low < 0) return BERTH_SEND_UNCERTAIN;
    offer->sha256[i] = (uint8_t)(high << 4 | low);
  }
  return BERTH_OTA_OFFERED;
}

void berth_ota_download_start(berth_ota_download_t *download) {
  download->received = 0;
  berth_sha256_init(&download->digest);
}

/** Bytes handed to the port's write at a time: a flash page. */
#define WRITE_PIECE 256

/** Hand `length` bytes to the slot at `received` a page at a time, hashing each once written; 0, or BERTH_OTA_WRITE_FAILED. */
static int take(berth_ota_download_t *download, const uint8_t *bytes, size_t length) {
  while (length > 0) {
    const size_t piece = length < WRITE_PIECE ? length : WRITE_PIECE;
    if (download->write(download->context, download->received, bytes, piece) != 0) return BERTH_OTA_WRITE_FAILED;
    berth_sha256_update(&download->digest, bytes, piece);
    download->received += (uint32_t)piece;
    bytes += piece;
    length -= piece;
  }
  return 0;
}

int berth_ota_download(berth_http_t *http, const berth_ota_offer_t *offer, berth_ota_download_t *download) {
  if (download->received < offer->size) {
    const char *body = NULL;
    size_t length = 0;
    const int fd = get(http, offer->url, download->received, &body, &length);
    if (fd < 0) return BERTH_SEND_FAILED;
    // 200: the whole image (a server that ignored the range, or from the start); 206: the rest.
    if (http->status == 200 && download->received > 0) berth_ota_download_start(download);
    if (http->status != 200 && http->status != 206) {
      close(fd);
      return BERTH_SEND_UNCERTAIN;
    }
    int status = take(download, (const uint8_t *)body, length);
    uint8_t piece[1024];
    ssize_t r = 0;
    while (status == 0 && download->received < offer->size && (r = recv(fd, piece, sizeof piece, 0)) > 0) status = take(download, piece, (size_t)r);
    close(fd);
    if (status != 0) return status;
    if (download->received < offer->size) return BERTH_SEND_UNCERTAIN; // the connection broke: resume
  }
  uint8_t digest[32];
  berth_sha256_t copy = download->digest;
  berth_sha256_final(&copy, digest);
  if (download->received == offer->size && memcmp(digest, offer->sha256, 32) == 0) return BERTH_OTA_READY;
  berth_ota_download_start(download);
  return BERTH_OTA_CORRUPT;
}
#endif
