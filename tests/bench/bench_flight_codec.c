/* Benchmark of the flight recorder's record encoding (engine/flight_codec.c,
 * docs/design.md "Flight recorder"): ns per record encoded and decoded, and
 * bytes per record, for a busy server's mix -- switches and wakeups of 16
 * threads of 4 processes on 2 CPUs, 3 us apart, stacks from a few hundred
 * ids, a segment (the codec reset) every 100 000 records.  Prints figures;
 * asserts nothing (make bench).
 *
 *   bench_flight_codec [MILLION_RECORDS]   (default 5)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/flight_codec.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The i-th record of the mix into *r; its length. */
static size_t make(union gt_kev_any *r, uint64_t ts)
{
	uint32_t tid = 1000 + (uint32_t)rnd(16), tgid = 1000 + (tid - 1000) / 4 * 4;

	memset(r, 0, sizeof(*r));
	r->hdr.ts = ts;
	r->hdr.cpu = (uint16_t)rnd(2);
	r->hdr.tid = tid;
	r->hdr.tgid = tgid;
	r->hdr.sessions = 1;
	if (rnd(2)) {
		r->hdr.type = GT_KEV_SWITCH;
		r->sw.next_tid = tid + 1;
		r->sw.next_tgid = tgid;
		r->sw.prev_state = 1;
		r->sw.prev_sessions = 1;
		r->sw.prev_ustack = (int32_t)rnd(300);
		r->sw.prev_kstack = -1;
		r->sw.prev_sysnr = 232;
		memcpy(r->sw.prev_comm, "nginx", 6);
		memcpy(r->sw.next_comm, "nginx", 6);
		return sizeof(r->sw);
	}
	r->hdr.type = GT_KEV_WAKEUP;
	r->wk.target_tid = tid + 1;
	r->wk.target_tgid = tgid;
	r->wk.waker_ustack = (int32_t)rnd(300);
	return sizeof(r->wk);
}

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 5) * 1000000L;
	static struct gt_flight_codec enc, dec;
	union gt_kev_any *recs = malloc(4096 * sizeof(*recs)), out;
	size_t *lens = malloc(4096 * sizeof(*lens));
	unsigned char *buf = malloc((size_t)n * 64 + 4096);
	size_t bytes = 0, off = 0, len;
	uint64_t ts = 1000000000ull;
	double t0, t1, t2;

	if (!recs || !lens || !buf) {
		fprintf(stderr, "bench_flight_codec: out of memory\n");
		return 1;
	}
	for (int i = 0; i < 4096; i++)
		lens[i] = make(&recs[i], ts += 2000 + rnd(2000));
	t0 = now();
	for (long i = 0; i < n; i++) {
		union gt_kev_any *r = &recs[i & 4095];

		if (i % 100000 == 0)
			gt_flight_codec_reset(&enc);
		r->hdr.ts = ts += 2000 + (i & 1023);
		bytes += gt_flight_encode(&enc, &r->hdr, lens[i & 4095], buf + bytes);
	}
	t1 = now();
	for (long i = 0; i < n; i++) {
		if (i % 100000 == 0)
			gt_flight_codec_reset(&dec);
		off += gt_flight_decode(&dec, buf + off, bytes - off, (unsigned char *)&out, &len);
	}
	t2 = now();
	printf("flight codec: %.1f ns/record encoded, %.1f ns/record decoded, %.1f B/record "
	       "(raw %.1f), %ld records\n", (t1 - t0) * 1e9 / n, (t2 - t1) * 1e9 / n,
	       (double)bytes / n, (double)(sizeof(struct gt_kev_switch) + sizeof(struct gt_kev_wakeup)) / 2, n);
	return off == bytes ? 0 : 1;
}
