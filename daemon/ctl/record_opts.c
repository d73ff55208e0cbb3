#include "record_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/gt_events.h"
#include "common/parse_args.h"
#include "record_flight.h"

#define GT_DWARF_DEFAULT_BYTES 8192 /* perf's --call-graph dwarf default */
#define DEFAULT_CPU_HZ 99 /* like perf: off the timer tick so samples don't alias */

static const char usage_text[] =
"usage: gotracectl record [OPTIONS] -o FILE -p PID[,PID...] [--children]\n"
"       gotracectl record [OPTIONS] -o FILE -a | -n NAME [-n NAME...]\n"
"       gotracectl record [OPTIONS] -o FILE --cgroup PATH | --container ID | --pod UID\n"
"       gotracectl record [OPTIONS] -o FILE -- CMD [ARGS...]\n"
"\n"
"Records threads, CPUs, blocking, wakeups and syscalls into a Go execution\n"
"trace; open it with `go tool trace FILE`.  JIT code is named from the\n"
"process's /tmp/perf-PID.map, read again when it is appended to or written\n"
"again, and at the process's exit and the end (a map written at exit names\n"
"the frames).  A loopback wakeup by a sender not recorded names it in G 0's\n"
"frame, [loopback from COMM PID/TID], if you may see it (root: always;\n"
"others: a process they could ptrace), else [loopback].\n"
"\n"
"targets:\n"
"  -p, --pid PIDS         processes (all their threads, and what they create)\n"
"      --children         with -p: also the processes' existing descendants\n"
"  -a, --all              every process of the machine (root), including\n"
"                         those started later; no kernel threads unless\n"
"      --kernel-threads   is given too\n"
"  -n, --name NAME        processes whose comm, or the basename of their\n"
"                         executable or argv[0], is NAME (repeatable), and\n"
"                         those that exec NAME while recording (root); none\n"
"                         running at the start is an error unless\n"
"      --wait             is given: then wait for one to exec NAME\n"
"      --cgroup PATH      a cgroup v2 subtree (absolute, or relative to the\n"
"                         cgroup2 mount), including processes started later\n"
"      --container ID     a Docker/containerd/CRI-O/Podman container id, or a\n"
"                         unique prefix (systemd or cgroupfs driver; rootful\n"
"                         or rootless Podman; one with no cgroup, by its\n"
"                         conmon), a Podman/CRI-O container name, or a\n"
"                         systemd unit name (nginx.service, x.scope; nginx\n"
"                         means nginx.service)\n"
"      --pod UID          a Kubernetes pod (all its containers) by its UID\n"
"                         (metadata.uid), found in kubelet's cgroups; or\n"
"                         NAMESPACE/NAME, asked of crictl when installed\n"
"  -- CMD ARGS...         start CMD and record it from its first instruction\n"
"output:\n"
"  -o, --output FILE      the trace; written atomically: a failed recording\n"
"                         leaves no file behind; Ctrl-C, SIGTERM save it;\n"
"                         killed (SIGKILL): nothing, but FILE.partial in\n"
"                         daemon mode or for a Go 1.22+ trace that has a\n"
"                         whole generation (gotracectl(1), --output)\n"
"  -d, --duration D       stop after D (750ms, 10s, 2m, 1h; a bare number is\n"
"                         seconds); default: until Ctrl-C, SIGTERM, or every\n"
"                         target exited (never for -a, -n or --cgroup);\n"
"                         SIGUSR1 is ignored (it dumps a --flight recording)\n"
"      --go-version V     trace format 1.11, 1.19 (default), 1.21, or Go 1.22+'s\n"
"                         1.22 or 1.23\n"
"      --go-trace URL     with -p PID of a Go 1.22+ program and -d: fetch its\n"
"                         own trace (URL: http://HOST:PORT/debug/pprof/trace,\n"
"                         net/http/pprof) over the recording and write one\n"
"                         Go 1.22+ file: the runtime's trace with the\n"
"                         kernel's view of its threads merged in (as\n"
"                         `gotracectl merge`)\n"
"      --syscalls MODE    blocking (default): the syscalls that block, with\n"
"                         their stacks; all: GoSysCall at every syscall\n"
"                         entry, which runs a BPF program at every syscall\n"
"                         of the machine: on a busy server that costs more\n"
"                         than all of perf sched record\n"
"      --kernel-stacks    the kernel stack at every blocking switch-out (by\n"
"                         default only where no syscall explains the block:\n"
"                         page faults, I/O waits); about 1 us per switch\n"
"      --call-graph=MODE  how user stacks are unwound: fp (default): frame\n"
"                         pointers, loses callers in code built without\n"
"                         them (Debian's libc); dwarf[,SIZE]: copy SIZE\n"
"                         bytes of stack (default 8192, at most 16384) and\n"
"                         the registers, unwind from .eh_frame, as perf\n"
"                         does; costs more per stack (docs/mapping.md)\n"
"memory and CPU:\n"
"      --heap MODE        the HeapAlloc counter: off: none; malloc: the\n"
"                         live heap from allocator uprobes, exact but a\n"
"                         uprobe trap per call (~15 us on a VM; measured\n"
"                         and printed at the start): only for programs that\n"
"                         allocate little; rss (default): resident memory;\n"
"                         interpose: for -- CMD, counted inside CMD by a\n"
"                         preloaded library (exact, tens of ns per call);\n"
"                         Go is always rss\n"
"      --cpu-profile[=HZ] CPU samples with stacks (default %d Hz)\n"
"      --alloc-stacks N   every Nth allocation as a log event with its stack\n"
"flight recorder (docs/design.md, \"Flight recorder\"):\n"
"      --flight[=WINDOW]  keep the last WINDOW (default 10s) in memory and\n"
"                         write nothing until asked: SIGUSR1 (to this\n"
"                         gotracectl's pid; every other one ignores it)\n"
"                         writes it to\n"
"                         FILE-YYYYMMDD-HHMMSS.trace (FILE from -o, less\n"
"                         .trace) and recording goes on; Ctrl-C or SIGTERM\n"
"                         ends it without a dump (but for a trigger's)\n"
"      --flight-size BYTES  memory held at most (K, M, G; default 64M, at\n"
"                         least 1M): the cap wins over WINDOW\n"
"      --trigger SPEC     write the window when a thread of the targets\n"
"                         waited longer than a threshold: sched-delay>D\n"
"                         (runnable, not running), offcpu>D (switched out\n"
"                         asleep -> running again: the sleep and the run-\n"
"                         queue wait after it, as offcputime counts),\n"
"                         syscall>D or syscall:NAME>D (the same, asleep in\n"
"                         that syscall), e.g.\n"
"                         'offcpu>200ms' (repeatable); SPEC@NAME: only for\n"
"                         threads named NAME or of a process whose main\n"
"                         thread is; the file is named after the trigger\n"
"                         and carries a log event at its time\n"
"      --after D          with --trigger: keep recording D after it fired\n"
"                         before writing (default 0)\n"
"      --holdoff D        ignore triggers for D after one fired (0: none;\n"
"                         default: WINDOW); a longer one ignored is said\n"
"                         when it fires, and counted at the end\n"
"      --max-dumps N      write at most N triggered dumps (default: no limit)\n"
"      --detach           record in gotraced, beyond this command: -o names\n"
"                         a directory (made if missing) where the daemon\n"
"                         writes triggered dumps as you; prints the\n"
"                         session's ID for `gotracectl dump ID`, `status`\n"
"                         and `stop ID` (without it --flight is embedded)\n"
"engine:\n"
"      --standalone       load the BPF programs here (root), not via gotraced\n"
"      --daemon           use gotraced only; fail if it is not running\n"
"      --socket PATH      gotraced's socket (default /run/gotraced/gotraced.sock)\n"
"      --ring-size BYTES  ring buffer per CPU, embedded (bytes, K, M or G; 4K to\n"
"                         1G, rounded up to a power of 2; default 16M, less on\n"
"                         machines of more than 8 CPUs, at least 4M; 4 times\n"
"                         that with --call-graph=dwarf)\n"
"  -q, --quiet            no live progress\n"
"  -v, --verbose          libbpf's messages, and how long starting and\n"
"                         stopping took, by phase\n"
"  -h, --help\n";

static int bad(const char *what, const char *value)
{
	fprintf(stderr, "gotracectl record: %s '%s'\n", what, value);
	fprintf(stderr, "try 'gotracectl record --help'\n");
	return 2;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || s[0] == '-')
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* --call-graph: fp, dwarf or dwarf,SIZE (perf's spelling). */
static int parse_call_graph(const char *s, unsigned *bytes)
{
	if (!strcmp(s, "fp")) {
		*bytes = 0;
		return 0;
	}
	if (!strcmp(s, "dwarf")) {
		*bytes = GT_DWARF_DEFAULT_BYTES;
		return 0;
	}
	if (strncmp(s, "dwarf,", 6) ||
	    parse_uint(s + 6, GT_MIN_DWARF_STACK, GT_MAX_DWARF_STACK, bytes) || *bytes % 8)
		return -EINVAL;
	return 0;
}

static int parse_heap(const char *s, enum gt_heap_mode *h)
{
	if (!strcmp(s, "off")) *h = GT_HEAP_OFF;
	else if (!strcmp(s, "malloc")) *h = GT_HEAP_MALLOC;
	else if (!strcmp(s, "rss")) *h = GT_HEAP_RSS;
	else if (!strcmp(s, "interpose")) *h = GT_HEAP_INTERPOSE;
	else return -EINVAL;
	return 0;
}

enum { O_CGROUP = 256, O_CONTAINER, O_POD, O_GOVER, O_HEAP, O_CPU, O_ALLOC, O_STANDALONE,
       O_DAEMON, O_SOCKET, O_RING, O_KSTACKS, O_SYSCALLS, O_KTHREADS, O_CHILDREN, O_WAIT,
       O_CALLGRAPH, O_FLIGHT, O_FLIGHT_SIZE, O_TRIGGER, O_AFTER, O_HOLDOFF, O_MAX_DUMPS,
       O_DETACH, O_GOTRACE };

static const struct option longopts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"all", no_argument, NULL, 'a'},
	{"name", required_argument, NULL, 'n'},
	{"kernel-threads", no_argument, NULL, O_KTHREADS},
	{"children", no_argument, NULL, O_CHILDREN},
	{"wait", no_argument, NULL, O_WAIT},
	{"output", required_argument, NULL, 'o'},
	{"duration", required_argument, NULL, 'd'},
	{"cgroup", required_argument, NULL, O_CGROUP},
	{"container", required_argument, NULL, O_CONTAINER},
	{"pod", required_argument, NULL, O_POD},
	{"go-version", required_argument, NULL, O_GOVER},
	{"heap", required_argument, NULL, O_HEAP},
	{"cpu-profile", optional_argument, NULL, O_CPU},
	{"alloc-stacks", required_argument, NULL, O_ALLOC},
	{"standalone", no_argument, NULL, O_STANDALONE},
	{"daemon", no_argument, NULL, O_DAEMON},
	{"socket", required_argument, NULL, O_SOCKET},
	{"ring-size", required_argument, NULL, O_RING},
	{"kernel-stacks", no_argument, NULL, O_KSTACKS},
	{"call-graph", required_argument, NULL, O_CALLGRAPH},
	{"syscalls", required_argument, NULL, O_SYSCALLS},
	{"flight", optional_argument, NULL, O_FLIGHT},
	{"flight-size", required_argument, NULL, O_FLIGHT_SIZE},
	{"trigger", required_argument, NULL, O_TRIGGER},
	{"after", required_argument, NULL, O_AFTER},
	{"holdoff", required_argument, NULL, O_HOLDOFF},
	{"max-dumps", required_argument, NULL, O_MAX_DUMPS},
	{"detach", no_argument, NULL, O_DETACH},
	{"go-trace", required_argument, NULL, O_GOTRACE},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{0},
};

static int bad_duration(const char *opt, const char *value)
{
	char what[128];

	snprintf(what, sizeof(what), "bad %s (want a duration: 500ms, 10s, 2m)", opt);
	return bad(what, value);
}

static int parse_flight(int c, struct gt_record_opts *o)
{
	struct gt_flight_opts *f = &o->flight;
	char why[256];

	switch (c) {
	case O_FLIGHT:
		o->flight_on = 1;
		return optarg && (gt_args_duration(optarg, &f->window_ns) || !f->window_ns) ?
			bad_duration("--flight window", optarg) : 0;
	case O_FLIGHT_SIZE:
		return gt_flight_size_parse(optarg, &f->size_bytes) ?
			bad("bad --flight-size (bytes, K, M or G; at least 1M)", optarg) : 0;
	case O_TRIGGER:
		if (f->ntriggers == GT_FLIGHT_MAX_TRIGGERS)
			return bad("too many --trigger (at most 8) at", optarg);
		if (gt_flight_trigger_parse(optarg, &f->triggers[f->ntriggers], why, sizeof(why))) {
			fprintf(stderr, "gotracectl record: %s\n", why);
			return 2;
		}
		f->ntriggers++;
		return 0;
	case O_AFTER:
		return gt_args_duration(optarg, &f->after_ns) ? bad_duration("--after", optarg) : 0;
	case O_DETACH:
		o->detach = 1;
		return 0;
	case O_HOLDOFF:
		f->holdoff_set = 1;
		f->holdoff_ns = 0; /* 0: every trigger (--max-dumps bounds them) */
		return strcmp(optarg, "0") && gt_args_duration(optarg, &f->holdoff_ns) ?
			bad_duration("--holdoff", optarg) : 0;
	default:
		return parse_uint(optarg, 1, 1000000, &f->max_dumps) ?
			bad("bad --max-dumps (1 to 1000000)", optarg) : 0;
	}
}

/* The options that choose what is recorded: 0, or 2 (said why). */
static int parse_target(int c, struct gt_record_opts *o)
{
	int n;

	switch (c) {
	case 'p':
		n = gt_args_pids(optarg, o->pids + o->npids, GT_RECORD_MAX_PIDS - o->npids);
		if (n == -E2BIG)
			return bad("too many PIDs in", optarg);
		if (n < 0)
			return bad("bad PID list (want PID[,PID...])", optarg);
		o->npids += n;
		return 0;
	case 'a': o->all_processes = 1; return 0;
	case 'n':
		if (o->nnames == GT_MAX_NAMES)
			return bad("too many names (at most 32) at", optarg);
		o->names[o->nnames++] = optarg;
		return 0;
	case O_KTHREADS: o->kernel_threads = 1; return 0;
	case O_CHILDREN: o->children = 1; return 0;
	case O_WAIT: o->wait = 1; return 0;
	case O_CGROUP: o->cgroup = optarg; return 0;
	case O_POD: o->pod = optarg; return 0;
	default: /* O_CONTAINER */
		o->container = optarg;
		return 0;
	}
}

/* The options that say what the trace holds: 0, or 2 (said why). */
static int parse_content(int c, struct gt_record_opts *o)
{
	switch (c) {
	case O_GOVER:
		return gt_args_go_version(optarg, &o->go_version) ? bad("unknown trace version (want 1.11, 1.19, 1.21, 1.22 or 1.23)", optarg) : 0;
	case O_HEAP:
		return parse_heap(optarg, &o->heap) ? bad("bad --heap (want off, malloc, rss or interpose)", optarg) : 0;
	case O_CPU:
		o->cpu_profile_hz = DEFAULT_CPU_HZ;
		return optarg && parse_uint(optarg, 1, GT_MAX_CPU_HZ, &o->cpu_profile_hz) ? bad("bad --cpu-profile rate (1 to 100000 Hz)", optarg) : 0;
	case O_ALLOC:
		return parse_uint(optarg, 1, GT_MAX_ALLOC_EVERY, &o->alloc_stack_every) ? bad("bad --alloc-stacks (a count from 1 to 2^30)", optarg) : 0;
	case O_KSTACKS: o->kernel_stacks = 1; return 0;
	case O_CALLGRAPH:
		return parse_call_graph(optarg, &o->dwarf_stack_bytes) ?
			bad("bad --call-graph (want fp, dwarf or dwarf,SIZE: SIZE a multiple "
			    "of 8 from 64 to 16384 bytes)", optarg) : 0;
	default: /* O_SYSCALLS */
		if (strcmp(optarg, "all") && strcmp(optarg, "blocking"))
			return bad("bad --syscalls (want all or blocking)", optarg);
		o->all_syscalls = !strcmp(optarg, "all");
		return 0;
	}
}

static int parse_one(int c, struct gt_record_opts *o)
{
	switch (c) {
	case 'p': case 'a': case 'n': case O_KTHREADS: case O_CHILDREN: case O_WAIT:
	case O_CGROUP: case O_CONTAINER: case O_POD:
		return parse_target(c, o);
	case O_GOVER: case O_HEAP: case O_CPU: case O_ALLOC: case O_KSTACKS: case O_CALLGRAPH:
	case O_SYSCALLS:
		return parse_content(c, o);
	case O_FLIGHT: case O_FLIGHT_SIZE: case O_TRIGGER: case O_AFTER: case O_HOLDOFF:
	case O_MAX_DUMPS: case O_DETACH:
		return parse_flight(c, o);
	case 'o': o->out = optarg; return 0;
	case O_GOTRACE: o->go_trace = optarg; return 0;
	case 'd':
		return gt_args_duration(optarg, &o->duration_ns) ?
			bad("bad duration (want a number and a unit: ns, us, ms, s, m or h; "
			    "e.g. 500ms, 10s, 2m; a bare number is seconds)", optarg) : 0;
	case O_STANDALONE: o->mode = GT_MODE_STANDALONE; return 0;
	case O_DAEMON: o->mode = GT_MODE_DAEMON; return 0;
	case O_SOCKET: o->socket = optarg; return 0;
	case O_RING: {
		uint64_t b;

		if (gt_args_size(optarg, 4096, 1u << 30, &b))
			return bad("bad --ring-size (bytes, K, M or G; 4096 to 1G)", optarg);
		o->ring_bytes = (unsigned)b;
		return 0;
	}
	case 'q': o->quiet = 1; return 0;
	case 'v': o->verbose = 1; return 0;
	case 'h': printf(usage_text, DEFAULT_CPU_HZ); return 1;
	default:
		fprintf(stderr, "try 'gotracectl record --help'\n");
		return 2;
	}
}

static int check_targets(struct gt_record_opts *o)
{
	int kinds = (o->npids > 0) + !!o->cgroup + !!o->container + !!o->pod + !!o->cmd +
		    !!o->all_processes + (o->nnames > 0);

	if (!o->out) {
		fprintf(stderr, "gotracectl record: no output file: give -o FILE\n");
		return 2;
	}
	if (kinds == 0) {
		fprintf(stderr, "gotracectl record: nothing to record: give -p PID, -a, -n NAME, --cgroup, --container, --pod or -- CMD\n");
		return 2;
	}
	if (o->wait && !o->nnames) {
		fprintf(stderr, "gotracectl record: --wait goes with -n NAME\n");
		return 2;
	}
	if (!o->flight_on && (o->flight.ntriggers || o->flight.size_bytes || o->flight.after_ns ||
			      o->flight.holdoff_set || o->flight.max_dumps)) {
		fprintf(stderr, "gotracectl record: --flight-size, --trigger, --after, --holdoff "
			"and --max-dumps go with --flight\n");
		return 2;
	}
	if (o->detach && (!o->flight_on || o->mode == GT_MODE_STANDALONE || o->cmd)) {
		fprintf(stderr, "gotracectl record: --detach goes with --flight, through gotraced "
			"(not --standalone), for running processes (-p, -n, -a, --cgroup, "
			"--container, --pod; not -- CMD)\n");
		return 2;
	}
	if (o->flight_on && !o->detach && o->mode == GT_MODE_DAEMON) {
		fprintf(stderr, "gotracectl record: --flight records through gotraced with "
			"--detach only (else in this process)\n");
		return 2;
	}
	if (o->go_trace && (!o->npids || !o->duration_ns || o->flight_on || o->cmd ||
			    o->go_version >= GT_GO_1_22)) {
		fprintf(stderr, "gotracectl record: --go-trace goes with -p PID and -d D, without "
			"--flight, -- CMD or --go-version 1.22+ (the merged file is the runtime's)\n");
		return 2;
	}
	if (kinds > 1) {
		fprintf(stderr, "gotracectl record: give only one of -p, -a, -n, --cgroup, --container, --pod, -- CMD\n");
		return 2;
	}
	return 0;
}

/* The bounds the daemon applies too (e.g. a duration of more than a year). */
static int check_bounds(const struct gt_record_opts *o)
{
	struct gt_session_opts so;
	char why[256];

	gt_record_session_opts(o, &so);
	if (!gt_session_opts_check(&so, why, sizeof(why)))
		return 0;
	fprintf(stderr, "gotracectl record: %s\n", why);
	return 2;
}

int gt_record_parse(int argc, char **argv, struct gt_record_opts *o)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->go_version = GT_V1_19;
	optind = 1;
	opterr = 1;
	/* '+': stop at the first non-option, so CMD's own flags stay its own. */
	while ((c = getopt_long(argc, argv, "+p:an:o:d:qvh", longopts, NULL)) != -1) {
		rc = parse_one(c, o);
		if (rc)
			return rc;
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0) {
			fprintf(stderr, "gotracectl record: unexpected argument '%s' (put a command after --)\n",
				argv[optind]);
			return 2;
		}
		o->cmd = argv + optind;
	}
	o->npids = gt_pids_dedup(o->pids, o->npids); /* -p 5 -p 5: one process */
	rc = check_targets(o);
	return rc ? rc : check_bounds(o);
}

void gt_record_session_opts(const struct gt_record_opts *o, struct gt_session_opts *so)
{
	memset(so, 0, sizeof(*so));
	so->pids = o->npids ? o->pids : NULL;
	so->npids = o->npids;
	so->names = o->nnames ? o->names : NULL;
	so->nnames = o->nnames;
	so->cgroup_path = o->cgroup_path[0] ? o->cgroup_path : NULL;
	GT_SESSION_OPTIONS_COPY(so, o);
	so->from_exec = o->cmd != NULL; /* the child is held before its exec */
	so->out_fd = -1;
	so->flight = o->flight_on ? &o->flight : NULL;
	so->detach = o->detach;
}
