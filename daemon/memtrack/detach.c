/* Detaching allocator probes in parallel.
 *
 * Closing one uprobe link blocks in the kernel for RCU grace periods:
 * synchronize_rcu_tasks_trace() once for a uprobe_multi link, twice for a
 * perf-event uprobe (detaching the program, then unregistering the probe),
 * 100-700 ms each on the test VM (6.18).  Grace periods waited for at the
 * same time are shared, so the links are closed on several threads at
 * once.  One busy process (bench_uprobe_stop): its 8 uprobe_multi links,
 * 0.97 s one after another, 0.17 s at once (4 processes: 2.9 s, 0.23 s).
 * Its 17 perf-event links gain less, 4.0 s -> 1.9 s: the kernel holds
 * event_mutex across one of their two grace periods.
 *
 * Entry probes all go before any return probe is taken away: a call whose
 * entry was seen must have its return seen (else the thread would look
 * inside an allocator until its pending entry goes stale). */
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/libbpf.h>

/* Threads closing links at once (besides the caller). */
#define GT_MT_DETACH_THREADS 64
/* Their stacks: they only call close() (ASan wants some room). */
#define GT_MT_DETACH_STACK (256 * 1024)

struct batch {
	struct gt_mt_link **v;
	int n;
	int next; /* the next link to close, taken atomically */
};

static void link_free(struct gt_mt_link *l)
{
	if (l->bl)
		bpf_link__destroy(l->bl);
	else if (l->fd >= 0)
		close(l->fd);
	l->bl = NULL;
	l->fd = -1;
}

static void *closer(void *arg)
{
	struct batch *b = arg;
	int i;

	while ((i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < b->n)
		link_free(b->v[i]);
	return NULL;
}

/* Closes v[0..n) on up to GT_MT_DETACH_THREADS threads and this one; a
 * thread that cannot be made only means less overlap.  The helpers block
 * every signal: the caller's handlers stay with the caller. */
static void close_all(struct gt_mt_link **v, int n)
{
	struct batch b = { .v = v, .n = n, .next = 0 };
	pthread_t t[GT_MT_DETACH_THREADS];
	int want = n - 1 < GT_MT_DETACH_THREADS ? n - 1 : GT_MT_DETACH_THREADS, made = 0;
	sigset_t all, old;
	pthread_attr_t at;

	if (want > 0 && pthread_attr_init(&at) == 0) {
		pthread_attr_setstacksize(&at, GT_MT_DETACH_STACK);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		while (made < want && pthread_create(&t[made], &at, closer, &b) == 0)
			made++;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&at);
	}
	closer(&b);
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
}

/* The links of procs[0..n) of one kind (entry or return) into v. */
static int gather(struct gt_mt_proc *procs, int n, int ret, struct gt_mt_link **v)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < procs[i].nlinks; j++)
			if (procs[i].links[j].is_ret == ret)
				v[k++] = &procs[i].links[j];
	return k;
}

void gt_mt_detach_procs(struct gt_mt_proc *procs, int n)
{
	int total = 0;
	struct gt_mt_link **v;

	for (int i = 0; i < n; i++)
		total += procs[i].nlinks;
	v = total ? malloc((size_t)total * sizeof(*v)) : NULL;
	for (int ret = 0; ret < 2 && total; ret++) {
		if (v) {
			close_all(v, gather(procs, n, ret, v));
			continue;
		}
		/* no memory for the list: one after another, still in order */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < procs[i].nlinks; j++)
				if (procs[i].links[j].is_ret == ret)
					link_free(&procs[i].links[j]);
	}
	free(v);
	for (int i = 0; i < n; i++)
		procs[i].nlinks = procs[i].nuprobes = procs[i].nuretprobes = procs[i].nlibs = 0;
}

void gt_mt_detach_process(struct gt_mt_proc *p)
{
	gt_mt_detach_procs(p, 1);
}
