/* A flight recording's record encoding (flight_codec.c): XOR with the
 * previous record of the type, then zero runs and literals.  Engine-
 * private (flight*.c). */
#ifndef GT_ENGINE_FLIGHT_CODEC_H
#define GT_ENGINE_FLIGHT_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "gotraced.h"

#define GT_FLIGHT_REC_MAX sizeof(union gt_kev_any)
/* The most one record of len bytes can take encoded. */
#define GT_FLIGHT_ENC_MAX(len) (12 + 2 * (len) + 20)

struct gt_flight_codec {
	unsigned char prev[GT_KEV_TYPE_MAX][GT_FLIGHT_REC_MAX];
	uint16_t len[GT_KEV_TYPE_MAX]; /* the encoder's: prev's length (zeros past it) */
};

void gt_flight_codec_reset(struct gt_flight_codec *c);
/* Encodes ev (len <= GT_FLIGHT_REC_MAX bytes) into out (room for
 * GT_FLIGHT_ENC_MAX(len)); returns the bytes written. */
size_t gt_flight_encode(struct gt_flight_codec *c, const struct gt_kev_hdr *ev, size_t len,
			unsigned char *out);
/* Decodes one record from in[0..avail) into out (GT_FLIGHT_REC_MAX bytes,
 * aligned for the record structs), its length in *len; returns the bytes
 * read, 0 if in holds no whole record (a bug: segments are ours). */
size_t gt_flight_decode(struct gt_flight_codec *c, const unsigned char *in, size_t avail,
			unsigned char *out, size_t *len);

#endif
