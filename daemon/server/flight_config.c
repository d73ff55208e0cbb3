/* gotraced's always-on flight recording (gotraced(8), --flight-unit,
 * --flight-cgroup; docs/design.md "Flight recorder"): its options, and
 * the session started with the daemon, root's, detached, listed by status
 * and dumped and stopped as any (by root). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cgroup_resolve.h"
#include "common/parse_args.h"
#include "engine/session.h"

static int bad(const char *opt, const char *arg, const char *want)
{
	fprintf(stderr, "gotraced: bad %s '%s' (%s)\n", opt, arg, want);
	return -EINVAL;
}

int gt_srv_flight_option(const char *opt, const char *arg, struct gt_server_opts *o)
{
	struct gt_srv_flight_config *c = &o->flight;
	struct gt_flight_opts *f = &c->opts;
	char why[256];

	if (!strcmp(opt, "flight-unit") || !strcmp(opt, "flight-cgroup")) {
		if (c->unit || c->cgroup)
			return bad(opt, arg, "one --flight-unit or --flight-cgroup");
		*(opt[7] == 'u' ? &c->unit : &c->cgroup) = arg;
	} else if (!strcmp(opt, "flight-dir")) {
		c->dir = arg;
	} else if (!strcmp(opt, "flight-go-version")) {
		if (gt_args_go_version(arg, &c->go_version))
			return bad(opt, arg, "1.11, 1.19, 1.21, 1.22 or 1.23");
	} else if (!strcmp(opt, "flight-window")) {
		if (gt_args_duration(arg, &f->window_ns) || !f->window_ns)
			return bad(opt, arg, "a duration: 10s, 1m");
	} else if (!strcmp(opt, "flight-size")) {
		if (gt_flight_size_parse(arg, &f->size_bytes))
			return bad(opt, arg, "bytes, K, M or G; at least 1M");
	} else if (!strcmp(opt, "flight-trigger")) {
		if (f->ntriggers == GT_FLIGHT_MAX_TRIGGERS)
			return bad(opt, arg, "at most 8 triggers");
		if (gt_flight_trigger_parse(arg, &f->triggers[f->ntriggers], why, sizeof(why))) {
			fprintf(stderr, "gotraced: %s\n", why);
			return -EINVAL;
		}
		f->ntriggers++;
	} else if (!strcmp(opt, "flight-after")) {
		if (gt_args_duration(arg, &f->after_ns))
			return bad(opt, arg, "a duration");
	} else if (!strcmp(opt, "flight-holdoff")) {
		f->holdoff_set = 1;
		f->holdoff_ns = 0;
		if (strcmp(arg, "0") && gt_args_duration(arg, &f->holdoff_ns))
			return bad(opt, arg, "a duration, or 0");
	} else if (!strcmp(opt, "flight-max-dumps")) {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (*end || end == arg || v < 1 || v > GT_FLIGHT_MAX_DUMPS)
			return bad(opt, arg, "1 to 1000000");
		f->max_dumps = (unsigned)v;
	} else {
		return -ENOENT;
	}
	return 0;
}

int gt_srv_flight_config_check(const struct gt_server_opts *o)
{
	const struct gt_srv_flight_config *c = &o->flight;
	const struct gt_flight_opts *f = &c->opts;

	if (c->unit || c->cgroup)
		return 0;
	if (c->dir || c->go_version || f->window_ns || f->size_bytes || f->ntriggers || f->after_ns ||
	    f->holdoff_set || f->max_dumps) {
		fprintf(stderr, "gotraced: the --flight-* options go with --flight-unit or "
			"--flight-cgroup\n");
		return -EINVAL;
	}
	return 0;
}

static int start_configured(struct gt_server *sv, const struct gt_srv_flight_config *c,
			    int dir, const char *cgroup, char *why, size_t whylen)
{
	struct gt_session_opts so;
	struct gt_session_stats st;
	struct gt_srv_session *ss = calloc(1, sizeof(*ss));
	int slot = -1, rc;

	for (int i = 0; i < GT_PROTO_MAX_SESSIONS && slot < 0; i++)
		slot = sv->sessions[i] ? -1 : i;
	if (!ss || slot < 0) {
		free(ss);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	memset(&so, 0, sizeof(so));
	so.cgroup_path = cgroup;
	so.out_fd = -1;
	so.flight = &c->opts;
	so.go_version = c->go_version;
	so.detach = 1;
	rc = gt_session_start(sv->engine, &so, &ss->s);
	if (rc) {
		const char *e = gt_engine_error(sv->engine);

		snprintf(why, whylen, "%s", e && *e ? e : strerror(-rc));
		free(ss);
		return rc;
	}
	gt_session_stats(ss->s, &st);
	ss->id = st.id;
	ss->out_fd = dir;
	ss->flight = ss->detached = 1;
	ss->fopts = c->opts;
	ss->ok_pending = gt_session_starting(ss->s);
	snprintf(ss->targets, sizeof(ss->targets), "cgroup %.190s", cgroup);
	snprintf(ss->label, sizeof(ss->label), "always on: %s %s",
		 c->unit ? "--flight-unit" : "--flight-cgroup", c->unit ? c->unit : c->cgroup);
	sv->sessions[slot] = ss;
	gt_log("session %d: always-on flight recording of %s, dumps to %s", ss->id, ss->targets,
	       c->dir ? c->dir : GT_SRV_FLIGHT_DIR);
	return 0;
}

int gt_srv_flight_start_configured(struct gt_server *sv, const struct gt_srv_flight_config *c)
{
	char cgroup[4096], why[1024];
	int dir, rc;

	if (!c->unit && !c->cgroup)
		return 0;
	rc = c->unit ? gt_cgroup_resolve_container(c->unit, cgroup, sizeof(cgroup), why, sizeof(why))
		     : gt_cgroup_resolve_path(c->cgroup, cgroup, sizeof(cgroup), why, sizeof(why));
	if (rc)
		goto fail;
	dir = gt_flight_dir_open(c->dir ? c->dir : GT_SRV_FLIGHT_DIR, NULL, why, sizeof(why));
	if (dir < 0) {
		rc = -ENOENT;
		goto fail;
	}
	rc = start_configured(sv, c, dir, cgroup, why, sizeof(why));
	if (!rc)
		return 0;
	close(dir);
fail:
	gt_log("the always-on flight recording (%s %s) did not start: %s",
	       c->unit ? "--flight-unit" : "--flight-cgroup", c->unit ? c->unit : c->cgroup, why);
	return rc;
}
