//! @file vectors.h
//! One golden vector as the generated vectors_data.c describes it.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "berth/chunk.h"
#include "berth/records.h"

typedef struct {
  const char *name;
  uint8_t type;
  uint8_t flags;
  uint32_t sequence;
  uint16_t mtu;
  berth_encoder_t encode;
  const void *record;
  const char *frames;      // hex
  const char *serialized;  // hex
} vector_t;

extern const vector_t VECTORS[];
extern const size_t VECTOR_COUNT;
