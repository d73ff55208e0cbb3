/* The daemon's log: one line per call on stderr (the journal under
 * systemd).  Every line is escaped whole (util/gt_escape.h): the paths,
 * labels, trigger specs and comms users put in it cannot break it into
 * lines, forge one, or reach an operator's terminal as escape sequences.
 * Lines a user's requests or sessions cause (gt_log_uid) are limited per
 * uid: GT_LOG_BURST per GT_LOG_WINDOW_MS, then one line saying how many
 * were left out.  Root's are never left out. */
#include "internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "util/gt_escape.h"

#define LOG_LINE 2048
#define LOG_UIDS 64 /* uids tracked at once; the oldest window gives way */

struct log_budget {
	uid_t uid;
	int used;                  /* slot taken */
	uint64_t since_ns;         /* this window's start */
	unsigned lines;            /* written in this window */
	unsigned long long left_out; /* suppressed in this window */
};

static struct log_budget budgets[LOG_UIDS];
/* dumps may log from their own threads */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 when stderr is the journal's stream (systemd sets JOURNAL_STREAM to its
 * device:inode): the journal stamps each line itself. */
static int to_journal(void)
{
	static int known = -1;
	const char *js;
	struct stat st;
	unsigned long long dev, ino;

	if (known >= 0)
		return known;
	js = getenv("JOURNAL_STREAM");
	known = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
		(unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	return known;
}

/* "2026-12-02T04:50:01.123+0000 " (local time, its zone), or "" in the
 * journal. */
static void stamp(char *out, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char day[32], zone[8];

	out[0] = 0;
	if (to_journal() || clock_gettime(CLOCK_REALTIME, &ts) || !localtime_r(&ts.tv_sec, &tm))
		return;
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	strftime(zone, sizeof(zone), "%z", &tm);
	snprintf(out, len, "%s.%03ld%s ", day, ts.tv_nsec / 1000000, zone);
}

static void emit(const char *line)
{
	char shown[GT_ESCAPE_SIZE(LOG_LINE)], when[64];

	gt_escape(shown, sizeof(shown), line, strlen(line));
	stamp(when, sizeof(when));
	fprintf(stderr, "%sgotraced: %s\n", when, shown);
}

void gt_log(const char *fmt, ...)
{
	char line[LOG_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	emit(line);
	pthread_mutex_unlock(&log_lock);
}

/* Says what b's window left out, and empties it. */
static void close_window(struct log_budget *b, uint64_t now)
{
	char line[192];

	if (b->left_out) {
		snprintf(line, sizeof(line), "uid %u: %llu log line%s left out in the last %.1f s "
			 "(at most %d per %d s per user)", (unsigned)b->uid, b->left_out,
			 b->left_out == 1 ? "" : "s", (now - b->since_ns) / 1e9, GT_LOG_BURST,
			 GT_LOG_WINDOW_MS / 1000);
		emit(line);
	}
	b->since_ns = now;
	b->lines = 0;
	b->left_out = 0;
}

/* uid's budget: its slot, else a free one, else the oldest window's. */
static struct log_budget *budget_of(uid_t uid, uint64_t now)
{
	struct log_budget *free_b = NULL, *oldest = &budgets[0];

	for (int i = 0; i < LOG_UIDS; i++) {
		struct log_budget *b = &budgets[i];

		if (b->used && b->uid == uid)
			return b;
		if (!b->used && !free_b)
			free_b = b;
		if (b->used && b->since_ns < oldest->since_ns)
			oldest = b;
	}
	if (!free_b) {
		close_window(oldest, now);
		free_b = oldest;
	}
	*free_b = (struct log_budget){ .uid = uid, .used = 1, .since_ns = now };
	return free_b;
}

void gt_log_uid(uid_t uid, const char *fmt, ...)
{
	uint64_t now = gt_now_ns();
	char line[LOG_LINE];
	struct log_budget *b;
	va_list ap;

	pthread_mutex_lock(&log_lock);
	b = uid ? budget_of(uid, now) : NULL;
	if (b && now - b->since_ns >= GT_LOG_WINDOW_MS * 1000000ull)
		close_window(b, now);
	if (b && b->lines >= GT_LOG_BURST) {
		b->left_out++;
		pthread_mutex_unlock(&log_lock);
		return;
	}
	if (b)
		b->lines++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	emit(line);
	pthread_mutex_unlock(&log_lock);
}

void gt_log_tick(void)
{
	uint64_t now = gt_now_ns();

	pthread_mutex_lock(&log_lock);
	for (int i = 0; i < LOG_UIDS; i++)
		if (budgets[i].used && budgets[i].left_out &&
		    now - budgets[i].since_ns >= GT_LOG_WINDOW_MS * 1000000ull)
			close_window(&budgets[i], now);
	pthread_mutex_unlock(&log_lock);
}
