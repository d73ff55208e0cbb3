#include "record_ui.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

static const char *human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 10ull << 20)
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else if (b >= 10ull << 10)
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
	return buf;
}

void gt_progress_init(struct gt_progress *p, int quiet)
{
	p->enabled = !quiet && isatty(STDERR_FILENO);
	p->last_ns = 0;
	p->shown = 0;
	p->stopping = 0;
	p->quiet = quiet;
	p->cost_told = 0;
}

/* --heap malloc: a user who asked for probes learns at once what they cost
 * the target here (measured by the recorder: machines differ 10x). */
static void tell_call_cost(struct gt_progress *p, const struct gt_record_figures *f)
{
	if (p->quiet || p->cost_told || !f->probe_call_ns)
		return;
	p->cost_told = 1;
	fprintf(stderr, "%sgotracectl: --heap malloc: every malloc, free, calloc or realloc in "
		"the target now traps into the kernel twice, %.1f us a call on this machine "
		"(measured); --heap rss costs nothing per call\n",
		p->shown ? "\r\033[K" : "", f->probe_call_ns / 1e3);
	p->last_ns = 0; /* redraw the progress line below it */
}

void gt_progress_show(struct gt_progress *p, const struct gt_record_figures *f)
{
	uint64_t now = gt_now_ns();
	char b[32];

	tell_call_cost(p, f);
	if (!p->enabled || p->stopping || now - p->last_ns < 500000000ull)
		return;
	p->last_ns = now;
	p->shown = 1;
	fprintf(stderr, "\r\033[Krecording %.1fs  threads %" PRIu64 "  events %" PRIu64
		"  %s  dropped %" PRIu64, f->elapsed_ns / 1e9, f->threads, f->trace_events,
		human_bytes(f->bytes, b, sizeof(b)), f->drops);
	fflush(stderr);
}

void gt_progress_stopping(struct gt_progress *p)
{
	if (!p->enabled || p->stopping)
		return;
	p->stopping = 1;
	p->shown = 1;
	fprintf(stderr, "\r\033[Kstopping\xe2\x80\xa6");
	fflush(stderr);
}

void gt_progress_clear(struct gt_progress *p)
{
	if (p->enabled && p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = 0;
	p->stopping = 0;
}

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

static void start_timing(const struct gt_record_figures *f)
{
	uint64_t start = f->window_start_ns - f->launched_ns;
	uint64_t parts = f->load_total_ns + f->start_attach_ns + f->start_perf_ns +
			 f->start_targets_ns + f->start_probes_ns;
	char load[320] = "";

	if (f->embedded)
		snprintf(load, sizeof(load), "BPF load %.1f (kernel check %.1f, open and BTF "
			 "offsets %.1f, CO-RE relocation and verifier %.1f [maps %.1f, then at once: "
			 "programs %.1f and %.1f, memory programs %.1f, rings %.1f; %llu "
			 "instructions verified], perf events tried %.1f), ",
			 ms(f->load_total_ns), ms(f->load_check_ns), ms(f->load_open_ns),
			 ms(f->load_ns), ms(f->load_maps_ns), ms(f->load_progs_ns[0]),
			 ms(f->load_progs_ns[1]), ms(f->load_mem_ns), ms(f->load_rings_ns),
			 (unsigned long long)f->verified_insns, ms(f->load_probe_ns));
	fprintf(stderr, "gotracectl: start %.1f ms from `record` to the trace's first instant: "
		"%sattach %.1f, perf events %.1f, targets (/proc) %.1f, memory tracking %.1f, "
		"the rest %.1f (ms)\n", ms(start), load, ms(f->start_attach_ns), ms(f->start_perf_ns),
		ms(f->start_targets_ns), ms(f->start_probes_ns), start > parts ? ms(start - parts) : 0.0);
}

static void stop_timing(const struct gt_record_figures *f, uint64_t stop)
{
	uint64_t parts = f->stop_notice_ns + f->stop_flush_ns + f->stop_detach_ns +
			 f->stop_mem_ns + f->stop_finish_ns + f->unload_ns + f->reap_ns + f->commit_ns;
	char unload[48] = "";

	if (f->embedded)
		snprintf(unload, sizeof(unload), ", BPF unload %.1f", ms(f->unload_ns));
	fprintf(stderr, "gotracectl: stop %.1f ms from the trace's last instant to the file "
		"complete: noticing the end %.1f, flush %.1f, detach %.1f, memory tracking %.1f, "
		"closing events and footer %.1f%s, command reaped %.1f, file synced and renamed "
		"%.1f, the rest %.1f (ms)\n", ms(stop), ms(f->stop_notice_ns), ms(f->stop_flush_ns),
		ms(f->stop_detach_ns), ms(f->stop_mem_ns), ms(f->stop_finish_ns), unload,
		ms(f->reap_ns), ms(f->commit_ns), stop > parts ? ms(stop - parts) : 0.0);
}

void gt_record_timing(const struct gt_record_figures *f, uint64_t done_ns)
{
	uint64_t end = f->window_start_ns + f->elapsed_ns;

	if (!f->window_start_ns || f->window_start_ns < f->launched_ns || done_ns < end)
		return;
	start_timing(f);
	stop_timing(f, done_ns - end);
}

/* "in X s" is the trace's span; loading, attaching and the teardown
 * (detaching probes can take seconds) are not in the trace: shown apart
 * when they are worth a mention. */
void gt_record_summary(const struct gt_record_figures *f, const char *reason,
		       const char *path)
{
	char extra[64] = "";

	if (f->wall_ns > f->elapsed_ns + 100000000ull)
		snprintf(extra, sizeof(extra), "; %.2fs more starting and stopping",
			 (f->wall_ns - f->elapsed_ns) / 1e9);
	fprintf(stderr, "gotracectl: recorded %" PRIu64 " threads, %" PRIu64 " events, %"
		PRIu64 " bytes, %" PRIu64 " dropped in %.2fs (%s%s) -> %s\n",
		f->threads, f->trace_events, f->bytes, f->drops, f->elapsed_ns / 1e9,
		reason && *reason ? reason : "done", extra, path);
	if (!f->threads) /* valid but empty: exit 0 as perf record does, but say it */
		fprintf(stderr, "gotracectl: warning: 0 threads recorded: no thread of the "
			"targets was seen while recording (an empty cgroup or container, or "
			"targets that had all exited); the trace is valid but empty\n");
	if (f->left)
		fprintf(stderr, "gotracectl: %" PRIu64 " process%s left the recording: %s gained "
			"privileges you may not trace (a set-user-ID, set-group-ID or file-capability "
			"program, or changed credentials); nothing %s did after that is in the trace\n",
			f->left, f->left == 1 ? "" : "es", f->left == 1 ? "it" : "they",
			f->left == 1 ? "it" : "they");
	if (f->refused)
		fprintf(stderr, "gotracectl: %" PRIu64 " process%s not recorded: %s selected "
			"(a child, or in the cgroup) but you may not trace %s (another user's, "
			"set-user-ID, or holding capabilities); nothing of %s is in the trace\n",
			f->refused, f->refused == 1 ? "" : "es", f->refused == 1 ? "it was" : "they were",
			f->refused == 1 ? "it" : "them", f->refused == 1 ? "it" : "them");
	if (f->loopback_anon)
		fprintf(stderr, "gotracectl: %" PRIu64 " wakeup%s by loopback packets name no waker "
			"([loopback], G 0): the sender is one this session may not see, or the packet was sent "
			"from a softirq (an ACK, a retransmit) or received on another CPU or "
			"in ksoftirqd\n", f->loopback_anon, f->loopback_anon == 1 ? "" : "s");
	if (f->samples_lost)
		fprintf(stderr, "gotracectl: %" PRIu64 " allocation sample%s not written: read "
			"while %s thread was off CPU, %s did not run again before it ended or the "
			"recording stopped, or too many waited for it (a UserLog belongs to "
			"its thread running: docs/mapping.md)\n", f->samples_lost,
			f->samples_lost == 1 ? "" : "s", f->samples_lost == 1 ? "its" : "their",
			f->samples_lost == 1 ? "it" : "they");
	if (f->drops)
		fprintf(stderr, "gotracectl: warning: %" PRIu64 " kernel events were lost because "
			"the ring buffers were full; the trace is valid but incomplete "
			"(try a larger --ring-size)\n", f->drops);
}
