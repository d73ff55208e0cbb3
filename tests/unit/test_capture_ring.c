/* A ring's records as the reader takes them (capture/ring.c
 * gt_ring_bytes): the data area is mapped once, so a record that runs
 * past the end is copied whole from its two pieces; one that does not is
 * read in place.  No BPF: the ring is a buffer filled by hand. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/internal.h"
#include "gt_test.h"

#define SIZE 4096u

static void fill(uint8_t *ring, uint64_t off, const uint8_t *rec, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ring[(off + i) & (SIZE - 1)] = rec[i];
}

/* In place when it fits, whatever the position's laps. */
static void test_in_place(void)
{
	static uint8_t ring[SIZE];
	uint8_t *buf = NULL;
	size_t cap = 0;

	GT_CHECK(gt_ring_bytes(ring, SIZE - 1, 16, 100, &buf, &cap) == ring + 16,
		 "a record inside the ring is read in place");
	GT_CHECK(gt_ring_bytes(ring, SIZE - 1, 3 * SIZE + 8, SIZE - 8, &buf, &cap) == ring + 8,
		 "a position laps later: still in place");
	GT_CHECK(gt_ring_bytes(ring, SIZE - 1, 0, SIZE, &buf, &cap) == ring,
		 "a record of the whole ring: in place");
	GT_CHECK(buf == NULL && cap == 0, "nothing copied, yet %zu bytes allocated", cap);
}

/* A record astride the end: both pieces, in order, into the buffer,
 * which grows for a longer one and is reused for a shorter. */
static void test_wraps(void)
{
	static uint8_t ring[SIZE];
	uint8_t rec[600], *buf = NULL;
	size_t cap = 0;
	const uint8_t *got;

	for (size_t i = 0; i < sizeof(rec); i++)
		rec[i] = (uint8_t)(i * 7 + 1);
	fill(ring, 5 * SIZE - 40, rec, 200);
	got = gt_ring_bytes(ring, SIZE - 1, 5 * SIZE - 40, 200, &buf, &cap);
	GT_CHECK(got == buf && cap >= 200, "a wrapped record is copied (cap %zu)", cap);
	GT_CHECK(got && !memcmp(got, rec, 200), "the wrapped record's two pieces, in order");

	fill(ring, SIZE - 8, rec, sizeof(rec));
	got = gt_ring_bytes(ring, SIZE - 1, SIZE - 8, sizeof(rec), &buf, &cap);
	GT_CHECK(got == buf && cap >= sizeof(rec),
		 "the copy grows for a longer record (cap %zu)", cap);
	GT_CHECK(got && !memcmp(got, rec, sizeof(rec)), "the longer record's two pieces, in order");

	fill(ring, SIZE - 16, rec, 24);
	got = gt_ring_bytes(ring, SIZE - 1, SIZE - 16, 24, &buf, &cap);
	GT_CHECK(got == buf && cap >= sizeof(rec),
		 "the copy grows for a longer record (cap %zu)", cap);
	GT_CHECK(got && !memcmp(got, rec, 24), "a shorter one in the same buffer");
	free(buf);
}

int main(void)
{
	GT_RUN(test_in_place);
	GT_RUN(test_wraps);
	return gt_test_done();
}
