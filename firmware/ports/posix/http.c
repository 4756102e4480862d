//! @file http.c
//! The HTTP transport over POSIX sockets: one POST /ingest/chunks per upload session with every frame
//! of it as the body (or one per frame). It succeeds on a 200 answer that took every frame or refused
//! only what can never be taken; it fails (BERTH_SEND_FAILED) when nothing reached the server, and is
//! uncertain (BERTH_SEND_UNCERTAIN) when the request went out and no answer says all is well: no
//! answer within the timeout, a 5xx, or frames refused for a reason that can change. Built with
//! BERTH_TRANSPORT_HTTP only.
#include "berth_posix.h"

#if BERTH_TRANSPORT_HTTP
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define ANSWER_TIMEOUT_S 10

static int post(berth_transport_t *t);

static int gather(berth_transport_t *t, const uint8_t *bytes, size_t length, bool end_of_frame) {
  berth_http_t *http = (berth_http_t *)t->context;
  if (length > http->capacity - http->length) return BERTH_SEND_FAILED;
  memcpy(http->buffer + http->length, bytes, length);
  http->length += length;
  return http->per_frame && end_of_frame ? post(t) : 0;
}

/** What a 200 answer means for the session: frames refused for a reason that can change (or an answer
 * too long to read whole while some were refused) must be sent again. */
static int judge_answer(const char *response, size_t length, size_t capacity) {
  const char *rejected = strstr(response, "\"rejected\":");
  int count = 0;
  if (rejected == NULL || sscanf(rejected, "\"rejected\":%d", &count) != 1) return BERTH_SEND_UNCERTAIN;
  if (count == 0) return 0;
  return strstr(response, "\"retry\":true") != NULL || length >= capacity - 1 ? BERTH_SEND_UNCERTAIN : 0;
}

int berth_posix_connect(const berth_http_t *http) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const struct timeval timeout = { ANSWER_TIMEOUT_S, 0 };
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  struct sockaddr_in address = { 0 };
  address.sin_family = AF_INET;
  address.sin_port = htons(http->port);
  inet_pton(AF_INET, http->host, &address.sin_addr);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int berth_posix_send_all(int fd, const void *data, size_t length) {
  const char *at = (const char *)data;
  while (length > 0) {
    const ssize_t n = send(fd, at, length, 0);
    if (n <= 0) return -1;
    at += n;
    length -= (size_t)n;
  }
  return 0;
}

static int post(berth_transport_t *t) {
  berth_http_t *http = (berth_http_t *)t->context;
  http->status = 0;
  http->response[0] = '\0';
  if (http->length == 0) return 0;
  const int fd = berth_posix_connect(http);
  if (fd < 0) {
    http->length = 0;
    return BERTH_SEND_FAILED;
  }
  char head[512];
  const int n = snprintf(head, sizeof head,
    "POST /ingest/chunks HTTP/1.1\r\nHost: %s:%u\r\nContent-Type: application/octet-stream\r\nX-API-Key: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
    http->host, (unsigned)http->port, http->api_key, http->length);
  int status = BERTH_SEND_FAILED;
  if (berth_posix_send_all(fd, head, (size_t)n) == 0 && berth_posix_send_all(fd, http->buffer, http->length) == 0) {
    size_t got = 0;
    ssize_t r;
    while (got < sizeof http->response - 1 && (r = recv(fd, http->response + got, sizeof http->response - 1 - got, 0)) > 0) got += (size_t)r;
    http->response[got] = '\0';
    const char *body = strstr(http->response, "\r\n\r\n");
    if (sscanf(http->response, "HTTP/1.1 %d", &http->status) != 1 || http->status >= 500) status = BERTH_SEND_UNCERTAIN;
    else if (http->status == 200) status = judge_answer(body != NULL ? body : http->response, got, sizeof http->response);
    // else a 4xx: the server refused the request before storing anything
  }
  close(fd);
  http->length = 0; // delivered, or not: a failed session is built again from the start
  return status;
}

berth_transport_t berth_http_transport(berth_http_t *http) {
  http->length = 0;
  berth_transport_t t = { 0, gather, post, http };
  return t;
}
#endif
