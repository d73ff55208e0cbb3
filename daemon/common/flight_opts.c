/* Bounds of a flight recording's options (flight_opts.h): the daemon holds
 * a client's RECORD to them as the command line does. */
#include "flight_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_NS (366ull * 24 * 3600 * 1000000000ull) /* a year, as GT_MAX_DURATION_NS */

static int check_trigger(const struct gt_flight_trigger *t, int i, char *why, size_t whylen)
{
	if ((unsigned)t->kind > GT_FLIGHT_SYSCALL) {
		snprintf(why, whylen, "trigger %d: unknown kind %u", i, (unsigned)t->kind);
		return -EINVAL;
	}
	if (t->sysnr < -1 || t->sysnr > 4095 || (t->kind != GT_FLIGHT_SYSCALL && t->sysnr != -1)) {
		snprintf(why, whylen, "trigger %d: syscall number %lld out of range", i,
			 (long long)t->sysnr);
		return -EINVAL;
	}
	if (!t->threshold_ns || t->threshold_ns > MAX_NS) {
		snprintf(why, whylen, "trigger %d: threshold %llu ns out of range (1 ns to a year)",
			 i, (unsigned long long)t->threshold_ns);
		return -EINVAL;
	}
	if (!memchr(t->name, 0, sizeof(t->name)) || !memchr(t->spec, 0, sizeof(t->spec))) {
		snprintf(why, whylen, "trigger %d: name or spec not terminated", i);
		return -EINVAL;
	}
	return 0;
}

int gt_flight_opts_check(const struct gt_flight_opts *o, char *why, size_t whylen)
{
	if (o->window_ns > MAX_NS || o->after_ns > MAX_NS || o->holdoff_ns > MAX_NS) {
		snprintf(why, whylen, "flight window, --after or --holdoff longer than a year");
		return -EINVAL;
	}
	if (o->size_bytes && (o->size_bytes < GT_FLIGHT_MIN_SIZE || o->size_bytes > GT_FLIGHT_MAX_SIZE)) {
		snprintf(why, whylen, "--flight-size %llu out of range (%llu to %llu bytes)",
			 (unsigned long long)o->size_bytes, (unsigned long long)GT_FLIGHT_MIN_SIZE,
			 (unsigned long long)GT_FLIGHT_MAX_SIZE);
		return -EINVAL;
	}
	if (o->max_dumps > GT_FLIGHT_MAX_DUMPS) {
		snprintf(why, whylen, "--max-dumps %u out of range (at most %u)", o->max_dumps,
			 GT_FLIGHT_MAX_DUMPS);
		return -EINVAL;
	}
	if (o->ntriggers < 0 || o->ntriggers > GT_FLIGHT_MAX_TRIGGERS) {
		snprintf(why, whylen, "%d triggers (at most %d)", o->ntriggers, GT_FLIGHT_MAX_TRIGGERS);
		return -EINVAL;
	}
	for (int i = 0; i < o->ntriggers; i++)
		if (check_trigger(&o->triggers[i], i, why, whylen))
			return -EINVAL;
	return 0;
}

int gt_flight_dir_open(const char *path, const char *what, char *why, size_t whylen)
{
	int fd;

	if (!what)
		what = path;
	if (mkdir(path, 0750) && errno != EEXIST) {
		snprintf(why, whylen, "cannot make %s: %s", what, strerror(errno));
		return -1;
	}
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		snprintf(why, whylen, "cannot open %s: %s", what, strerror(errno));
	return fd;
}
