/* Go goroutines' pprof labels, cached (golabels.h).  A pprof.Do installs
 * a new map and never writes it after, so its text is the same at every
 * switch-out of its goroutine; the map may be freed once no goroutine
 * holds it, and another allocated at the same address: BPF's hash seed
 * (random per map) and count tell them apart. */
#include "golabels.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym/golabels.h"

static size_t slot_of(uint32_t tgid, uint64_t map, uint32_t hash0)
{
	uint64_t h = (map >> 4) ^ ((uint64_t)tgid * 0x9e3779b97f4a7c15ull) ^ hash0;

	return (size_t)((h ^ (h >> 29)) % GT_GOLABELS_CACHE);
}

/* Reads the map now.  TODO(secload): a blocking read of the target's
 * memory on the event loop; moves to the loader threads with the other
 * reads of target memory. */
static int read_labels(uint32_t tgid, uint64_t map, uint32_t hash0, uint32_t count, char *out,
		       size_t len)
{
	char path[32];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%u/mem", tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	r = gt_golabels_read(fd, map, hash0, count, out, len);
	close(fd);
	return r;
}

static int labels_of(void *ctx, uint32_t tgid, uint64_t map, uint32_t hash0, uint32_t count,
		     char *out, size_t len)
{
	struct gt_golabels *gl = ctx;
	struct gt_golabels_entry *e;

	if (!tgid || !len)
		return -1;
	if (!gl->cache && !(gl->cache = calloc(GT_GOLABELS_CACHE, sizeof(*gl->cache))))
		return -1;
	e = &gl->cache[slot_of(tgid, map, hash0)];
	if (e->tgid != tgid || e->map != map || e->hash0 != hash0 || e->count != count) {
		e->tgid = tgid, e->map = map, e->hash0 = hash0, e->count = count;
		e->len = read_labels(tgid, map, hash0, count, e->text, sizeof(e->text));
		gl->reads++;
		if (e->len < 0)
			gl->failed++;
	}
	if (e->len <= 0)
		return -1;
	snprintf(out, len, "%s", e->text);
	return (int)strlen(out);
}

const struct gt_golabels_source *gt_golabels_source(struct gt_golabels *gl)
{
	gl->src.labels = labels_of;
	gl->src.ctx = gl;
	return &gl->src;
}

void gt_golabels_forget(struct gt_golabels *gl, uint32_t tgid)
{
	for (size_t i = 0; gl->cache && i < GT_GOLABELS_CACHE; i++)
		if (gl->cache[i].tgid == tgid)
			gl->cache[i].tgid = 0;
}

void gt_golabels_free(struct gt_golabels *gl)
{
	free(gl->cache);
	gl->cache = NULL;
}
