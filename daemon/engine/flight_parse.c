/* The text of a flight recording's options, shared by `gotracectl record
 * --flight` and gotraced's always-on recording (--flight-trigger ...):
 * triggers (with this architecture's syscall names) and sizes. */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_args.h"

static int kind_parse(const char *k, size_t len, struct gt_flight_trigger *t, char *why,
		      size_t whylen)
{
	char name[64];

	t->sysnr = -1;
	if (len == 11 && !strncmp(k, "sched-delay", len))
		t->kind = GT_FLIGHT_SCHED_DELAY;
	else if (len == 6 && !strncmp(k, "offcpu", len))
		t->kind = GT_FLIGHT_OFFCPU;
	else if (len == 7 && !strncmp(k, "syscall", len))
		t->kind = GT_FLIGHT_SYSCALL;
	else if (len > 8 && len - 8 < sizeof(name) && !strncmp(k, "syscall:", 8)) {
		t->kind = GT_FLIGHT_SYSCALL;
		memcpy(name, k + 8, len - 8);
		name[len - 8] = '\0';
		t->sysnr = gt_engine_syscall_nr(name);
		if (t->sysnr < 0) {
			snprintf(why, whylen, "unknown syscall '%s' in --trigger", name);
			return -EINVAL;
		}
	} else {
		snprintf(why, whylen, "unknown trigger '%.*s' (want sched-delay, offcpu, "
			 "syscall or syscall:NAME)", (int)len, k);
		return -EINVAL;
	}
	return 0;
}

int gt_flight_trigger_parse(const char *spec, struct gt_flight_trigger *t, char *why,
			    size_t whylen)
{
	const char *gt = strchr(spec, '>');

	memset(t, 0, sizeof(*t));
	if (strlen(spec) >= sizeof(t->spec) || !gt) {
		snprintf(why, whylen, "bad --trigger '%s' (want KIND>DURATION, e.g. "
			 "'offcpu>200ms')", spec);
		return -EINVAL;
	}
	const char *at = strchr(gt, '@');
	char dur[32];

	snprintf(t->spec, sizeof(t->spec), "%s", spec);
	if (kind_parse(spec, (size_t)(gt - spec), t, why, whylen))
		return -EINVAL;
	if (at && (!at[1] || strlen(at + 1) >= sizeof(t->name))) {
		snprintf(why, whylen, "bad name in --trigger '%s' (a thread or process name of 1 "
			 "to 15 characters after @)", spec);
		return -EINVAL;
	}
	if (at)
		snprintf(t->name, sizeof(t->name), "%s", at + 1);
	snprintf(dur, sizeof(dur), "%.*s", (int)(at ? at - gt - 1 : (long)strlen(gt + 1)), gt + 1);
	if (gt_args_duration(dur, &t->threshold_ns) || !t->threshold_ns) {
		snprintf(why, whylen, "bad duration in --trigger '%s' (e.g. 20ms, 1s)", spec);
		return -EINVAL;
	}
	return 0;
}

int gt_flight_size_parse(const char *s, uint64_t *bytes)
{
	return gt_args_size(s, GT_FLIGHT_MIN_SIZE, UINT64_MAX, bytes);
}

void gt_flight_trigger_label(const struct gt_flight_trigger *t, char *buf, size_t len)
{
	const char *sys = t->sysnr >= 0 ? gt_engine_syscall_name(t->sysnr) : NULL;

	switch (t->kind) {
	case GT_FLIGHT_SCHED_DELAY: snprintf(buf, len, "-sched-delay"); break;
	case GT_FLIGHT_OFFCPU: snprintf(buf, len, "-offcpu"); break;
	case GT_FLIGHT_SYSCALL:
		snprintf(buf, len, "-syscall%s%s", sys ? "-" : "", sys ? sys : "");
		break;
	}
}
