/* See crc_cache.h. */
#include "crc_cache.h"

#include <pthread.h>
#include <string.h>

struct crc_slot {
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
	uint64_t used;     /* when last got or put (a counter); 0 empty */
	uint32_t crc;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct crc_slot slots[GT_CRC_CACHE_SLOTS];
static uint64_t clock_now;

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static struct crc_slot key_of(const struct stat *st)
{
	return (struct crc_slot){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
				  ns_of(&st->st_mtim), ns_of(&st->st_ctim), 0, 0 };
}

static int same_file(const struct crc_slot *a, const struct crc_slot *b)
{
	return a->used && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

int gt_crc_cache_get(const struct stat *st, uint32_t *crc)
{
	struct crc_slot k = key_of(st);
	int found = 0;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < GT_CRC_CACHE_SLOTS && !found; i++)
		if (same_file(&slots[i], &k)) {
			slots[i].used = ++clock_now;
			*crc = slots[i].crc;
			found = 1;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

void gt_crc_cache_put(const struct stat *st, uint32_t crc)
{
	struct crc_slot k = key_of(st);
	unsigned victim = 0, i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < GT_CRC_CACHE_SLOTS && !same_file(&slots[i], &k); i++)
		if (slots[i].used < slots[victim].used) /* empty slots: 0 */
			victim = i;
	if (i < GT_CRC_CACHE_SLOTS)
		victim = i; /* two threads read the same file */
	k.crc = crc;
	k.used = ++clock_now;
	slots[victim] = k;
	pthread_mutex_unlock(&lock);
}

void gt_crc_cache_clear(void)
{
	pthread_mutex_lock(&lock);
	memset(slots, 0, sizeof(slots));
	pthread_mutex_unlock(&lock);
}
