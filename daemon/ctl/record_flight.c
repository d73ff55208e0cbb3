/* `record --flight`: options, dump names, dumps (record_flight.h). */
#include "record_flight.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/parse_args.h"
#include "engine/session.h"
#include "trace_output.h"
#include "util/gt_escape.h"

volatile sig_atomic_t gt_record_dump_asked;

int gt_flight_dump_name(const char *out, const struct gt_flight_opts *o,
			const struct gt_flight_fired *mark, char *path, size_t len)
{
	size_t n = strlen(out);
	char when[32], label[64] = "";
	time_t now = time(NULL);
	struct tm tm;

	if (n > 6 && !strcmp(out + n - 6, ".trace"))
		n -= 6;
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	if (mark)
		gt_flight_trigger_label(&o->triggers[mark->trigger], label, sizeof(label));
	for (int i = 1; i < 1000; i++) {
		char suffix[16] = "";
		struct stat st;

		if (i > 1)
			snprintf(suffix, sizeof(suffix), "-%d", i);
		if ((size_t)snprintf(path, len, "%.*s-%s%s%s.trace", (int)n, out, when, label,
				     suffix) >= len)
			return -ENAMETOOLONG;
		if (lstat(path, &st) && errno == ENOENT)
			return 0;
	}
	return -EEXIST;
}

/* The wall-clock time of a CLOCK_MONOTONIC stamp, as HH:MM:SS.mmm. */
static void wall_of(uint64_t ts, char *buf, size_t len)
{
	struct timespec rt;
	uint64_t now = gt_now_ns(), ns;
	time_t sec;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &rt);
	ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec - (now > ts ? now - ts : 0);
	sec = (time_t)(ns / 1000000000ull);
	localtime_r(&sec, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), len - strlen(buf), ".%03u",
		 (unsigned)(ns % 1000000000ull / 1000000));
}

static void say_fired(const struct gt_flight_opts *o, const struct gt_flight_fired *f)
{
	const char *sys = f->sysnr >= 0 ? gt_engine_syscall_name(f->sysnr) : NULL;
	char when[32], comm[GT_ESCAPE_SIZE(16)], spec[GT_ESCAPE_SIZE(sizeof(o->triggers[0].spec))];

	wall_of(f->ts, when, sizeof(when));
	/* the comm is the traced process's own text */
	gt_escape(comm, sizeof(comm), f->comm, strnlen(f->comm, 16));
	if (f->held) {
		fprintf(stderr, "gotracectl: trigger %s fired again at %s: thread %u (%s) of "
			"process %u, %.1f ms%s%s, longer than the %.1f ms taken %.2f s before; %s\n",
			gt_esc(spec, sizeof(spec), o->triggers[f->trigger].spec), when, f->tid, comm,
			f->tgid, f->span_ns / 1e6, sys ? " in " : "", sys ? sys : "",
			f->taken_span_ns / 1e6, (f->ts - f->taken_ts) / 1e9,
			f->pending ? "not a dump of its own: the one waiting for --after holds it"
				   : "inside the holdoff: no dump (--holdoff 0 takes every one)");
		return;
	}
	fprintf(stderr, "gotracectl: trigger %s fired at %s: thread %u (%s) of process %u, "
		"%.1f ms%s%s%s\n", gt_esc(spec, sizeof(spec), o->triggers[f->trigger].spec), when,
		f->tid, comm, f->tgid,
		f->span_ns / 1e6, sys ? " in " : "", sys ? sys : "",
		o->after_ns ? "; writing once --after has passed" : "");
}

/* 0 written, 1 nothing to write yet, or -errno (said on stderr). */
static int dump(struct gt_session *s, const char *out, const struct gt_flight_opts *o,
		const struct gt_flight_fired *mark)
{
	struct gt_output file;
	char path[4096], why[1100] = "";
	struct stat st;
	uint64_t t0 = gt_now_ns(), t1;
	int err = gt_flight_dump_name(out, o, mark, path, sizeof(path));

	if (err) {
		fprintf(stderr, "gotracectl: no name for the dump from %s: %s\n", out,
			strerror(-err));
		return err;
	}
	err = gt_output_open(&file, path, why, sizeof(why));
	if (!err) {
		err = gt_session_flight_dump(s, file.fd, mark, why, sizeof(why));
		if (!err)
			err = fstat(file.fd, &st) ? -errno : 0;
		if (!err)
			err = gt_output_commit(&file, why, sizeof(why));
		else
			gt_output_discard(&file);
	}
	if (err == -ENODATA) { /* -- CMD before its exec: no file, no harm */
		fprintf(stderr, "gotracectl: no dump: %s\n", why);
		return 1;
	}
	if (err) {
		fprintf(stderr, "gotracectl: dump to %s failed: %s\n", path,
			why[0] ? why : strerror(-err));
		return err;
	}
	t1 = gt_now_ns();
	fprintf(stderr, "gotracectl: wrote %s (%" PRIu64 " bytes in %.1f ms", path,
		(uint64_t)st.st_size, (t1 - t0) / 1e6);
	if (mark && t1 > mark->ts + o->after_ns)
		fprintf(stderr, "; %.1f ms after the trigger and --after",
			(t1 - mark->ts - o->after_ns) / 1e6);
	fprintf(stderr, ")\n");
	return 0;
}

int gt_flight_tick(struct gt_session *s, const char *out, const struct gt_flight_opts *o,
		   int at_end)
{
	struct gt_flight_fired f;
	int n = 0, err;

	while (gt_session_flight_fired(s, &f))
		say_fired(o, &f);
	if (gt_record_dump_asked) {
		gt_record_dump_asked = 0;
		if ((err = dump(s, out, o, NULL)) < 0)
			return err;
		n += !err;
	}
	if (gt_session_flight_due(s, at_end, &f)) {
		if ((err = dump(s, out, o, &f)) < 0)
			return err;
		n += !err;
	}
	return n;
}
