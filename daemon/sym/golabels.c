/* pprof labels of a goroutine (golabels.h).
 *
 * runtime.hmap (runtime/map.go, the same from Go 1.19 to 1.23): count int
 * at 0, flags, B, noverflow, hash0 uint32 at 12, buckets at 16,
 * oldbuckets at 24.  A bucket of a map[string]string: tophash [8]uint8,
 * then 8 keys and 8 values (strings: pointer and length, 16 bytes each),
 * then the overflow bucket's pointer: 272 bytes.  A slot holds an entry
 * when its tophash is at least 5 (minTopHash; 0 and 1 are empty, 2 to 4
 * mark entries already moved out of an old bucket).  While the map grows,
 * the entries of old buckets not moved yet are still in oldbuckets (half
 * as many), and only there. */
#include "golabels.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HMAP_SIZE     32
#define BUCKET_SLOTS  8
#define BUCKET_SIZE   272
#define KEYS_AT       8
#define VALUES_AT     136
#define OVERFLOW_AT   264
#define MIN_TOPHASH   5

struct label {
	char key[GT_GOLABELS_STR_MAX + 4];
	char value[GT_GOLABELS_STR_MAX + 4];
};

struct walk {
	int fd;
	unsigned nbuckets; /* bucket reads so far */
	unsigned n;
	struct label l[GT_GOLABELS_MAX];
};

static int read_at(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t r = pread(fd, buf, len, (off_t)addr);

	return r == (ssize_t)len ? 0 : -EIO;
}

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A Go string's bytes (ptr, len at p) into out, printable ASCII only (any
 * other byte is '?'), cut at GT_GOLABELS_STR_MAX with "...". */
static int read_string(int fd, const unsigned char *p, char *out)
{
	uint64_t ptr = u64_at(p), n = u64_at(p + 8), take = n;

	if (take > GT_GOLABELS_STR_MAX)
		take = GT_GOLABELS_STR_MAX;
	if (take && read_at(fd, ptr, out, take))
		return -EIO;
	for (uint64_t i = 0; i < take; i++)
		if (out[i] < 0x20 || out[i] > 0x7e)
			out[i] = '?';
	strcpy(out + take, n > take ? "..." : "");
	return 0;
}

/* The entries of the bucket at addr and its overflow chain. */
static int walk_bucket(struct walk *w, uint64_t addr)
{
	unsigned char b[BUCKET_SIZE];

	for (; addr; addr = u64_at(b + OVERFLOW_AT)) {
		if (++w->nbuckets > GT_GOLABELS_BUCKETS_MAX)
			return -E2BIG;
		if (read_at(w->fd, addr, b, sizeof(b)))
			return -EIO;
		for (int i = 0; i < BUCKET_SLOTS; i++) {
			struct label *l = &w->l[w->n];
			if (b[i] < MIN_TOPHASH)
				continue;
			if (w->n == GT_GOLABELS_MAX)
				return -E2BIG;
			if (read_string(w->fd, b + KEYS_AT + 16 * i, l->key) ||
			    read_string(w->fd, b + VALUES_AT + 16 * i, l->value))
				return -EIO;
			w->n++;
		}
	}
	return 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->key, ((const struct label *)b)->key);
}

/* "{k=v, ...}" into out, cut to fit. */
static int format(struct walk *w, char *out, size_t len)
{
	size_t at = 0;

	qsort(w->l, w->n, sizeof(w->l[0]), by_key);
	out[0] = 0;
	for (unsigned i = 0; i <= w->n && at + 1 < len; i++) {
		const char *sep = i == 0 ? "{" : ", ";
		size_t room = len - at;
		int r = i == w->n ? snprintf(out + at, room, "%s}", i == 0 ? "{" : "")
				  : snprintf(out + at, room, "%s%s=%s", sep, w->l[i].key, w->l[i].value);
		if (r < 0 || (size_t)r >= room) {
			at = len - 1; /* cut: snprintf wrote what fits */
			break;
		}
		at += (size_t)r;
	}
	return (int)at;
}

int gt_golabels_read(int memfd, uint64_t map, uint32_t hash0, uint32_t count, char *out,
		     size_t len)
{
	unsigned char h[HMAP_SIZE];
	struct walk *w;
	uint64_t buckets, old;
	unsigned nb;
	int err = 0;

	if (!len)
		return -EINVAL;
	out[0] = 0;
	if (read_at(memfd, map, h, sizeof(h)))
		return -EIO;
	if (u64_at(h) != count || memcmp(h + 12, &hash0, 4))
		return -ESRCH;
	if (count > GT_GOLABELS_MAX || h[9] > 4)
		return -E2BIG;
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	w->fd = memfd;
	nb = 1u << h[9];
	buckets = u64_at(h + 16);
	old = u64_at(h + 24);
	for (unsigned i = 0; i < nb && !err; i++)
		err = walk_bucket(w, buckets + (uint64_t)i * BUCKET_SIZE);
	for (unsigned i = 0; old && i < nb / 2 && !err; i++)
		err = walk_bucket(w, old + (uint64_t)i * BUCKET_SIZE);
	if (!err)
		err = format(w, out, len);
	free(w);
	return err;
}
