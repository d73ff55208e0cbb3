/* See interpose.h. */
#include "interpose.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/procfs.h"
#include "interpose/heap_shm.h"
#include "internal.h"
#include "sym/safe_open.h"

/* Processes seen in the record (a session's command and its children). */
#define GT_IP_MAX_PROCS 1024

struct gt_ip_proc {
	int32_t tgid;
	int excluded;      /* Go program: RSS instead */
	int emitted;       /* last_live was written */
	int dead;          /* /proc said so at the last look (gt_proc_alive) */
	int64_t last_live;
	uint64_t limit;    /* cgroup limit (HeapGoal), read at first sight */
};

struct gt_mt_interpose {
	const struct gt_heap_shm *h;
	uint64_t tail;       /* next sample to read */
	uint64_t samples, lost;
	struct gt_ip_proc procs[GT_IP_MAX_PROCS];
	int nprocs;
};

/* The descriptor of pid whose link names our memfd, or -ENOENT. */
static int find_fd(pid_t pid, char *path, size_t pathlen)
{
	static const char want[] = "/memfd:" GT_HEAP_SHM_NAME;
	char dir[64], link[256];
	struct dirent *d;
	DIR *dp;
	int rc = -ENOENT;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		return -errno;
	while (rc == -ENOENT && (d = readdir(dp))) {
		ssize_t n;

		if (d->d_name[0] == '.' ||
		    (size_t)snprintf(path, pathlen, "%s/%s", dir, d->d_name) >= pathlen)
			continue;
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strncmp(link, want, sizeof(want) - 1))
			rc = 0;
	}
	closedir(dp);
	return rc;
}

static int map_checked(int fd, const struct gt_heap_shm **out, char *err, size_t errlen)
{
	struct stat st;
	const struct gt_heap_shm *h;

	if (fstat(fd, &st) < 0 || (size_t)st.st_size != GT_HEAP_SHM_BYTES) {
		snprintf(err, errlen, "the heap record is %lld bytes, want %zu",
			 (long long)st.st_size, (size_t)GT_HEAP_SHM_BYTES);
		return -EINVAL;
	}
	/* read-only: the traced program owns it and may scribble on it; it
	 * can only lie about its own heap */
	h = mmap(NULL, GT_HEAP_SHM_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		int e = errno;
		snprintf(err, errlen, "mapping the heap record: %s", strerror(e));
		return -e;
	}
	if (h->magic != GT_HEAP_SHM_MAGIC || h->version != GT_HEAP_SHM_VERSION ||
	    h->nslots != GT_HEAP_SHM_SLOTS) {
		munmap((void *)h, GT_HEAP_SHM_BYTES);
		snprintf(err, errlen, "the heap record has another layout (version %u)",
			 (unsigned)h->version);
		return -EPROTO;
	}
	*out = h;
	return 0;
}

int gt_mt_interpose_open(pid_t pid, struct gt_mt_interpose **out, char *err, size_t errlen)
{
	char path[320];
	int fd, rc;

	*out = NULL;
	rc = find_fd(pid, path, sizeof(path));
	if (rc) {
		snprintf(err, errlen, "pid %d has no heap record (%s): was it started by "
			 "`gotracectl record --heap interpose -- CMD`?", (int)pid,
			 rc == -ENOENT ? "no " GT_HEAP_SHM_NAME " memfd" : strerror(-rc));
		return rc;
	}
	/* the process's descriptor: a regular file (the memfd), never a FIFO */
	fd = gt_sym_open(AT_FDCWD, path, GT_SYM_OPEN_TRUSTED, NULL, GT_SYM_FILE_MAX);
	if (fd < 0) {
		rc = fd;
		snprintf(err, errlen, "opening the heap record of pid %d: %s", (int)pid,
			 strerror(-rc));
		return rc;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = map_checked(fd, &(*out)->h, err, errlen);
	close(fd); /* the mapping keeps the memfd */
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

void gt_mt_interpose_close(struct gt_mt_interpose *ip)
{
	if (!ip)
		return;
	munmap((void *)ip->h, GT_HEAP_SHM_BYTES);
	free(ip);
}

static struct gt_ip_proc *proc_of(struct gt_mt_interpose *ip, int32_t tgid, int add)
{
	for (int i = 0; i < ip->nprocs; i++)
		if (ip->procs[i].tgid == tgid)
			return &ip->procs[i];
	if (!add || ip->nprocs == GT_IP_MAX_PROCS)
		return NULL;
	ip->procs[ip->nprocs] = (struct gt_ip_proc){ .tgid = tgid, .limit = gt_mt_cgroup_limit(tgid) };
	return &ip->procs[ip->nprocs++];
}

void gt_mt_interpose_exclude(struct gt_mt_interpose *ip, pid_t tgid, int excluded)
{
	struct gt_ip_proc *p = proc_of(ip, (int32_t)tgid, 1);

	if (p)
		p->excluded = excluded;
}

/* Alive and not a zombie: a value written for a process whose exit the
 * translator has seen would bring its share of the total back.  When /proc
 * cannot tell, the last look's verdict stands. */
static int alive(struct gt_ip_proc *p)
{
	enum gt_proc_life life = gt_proc_alive((pid_t)p->tgid);

	if (life != GT_PROC_UNKNOWN)
		p->dead = life == GT_PROC_DEAD;
	return !p->dead;
}

static int emit(struct gt_ip_proc *p, int64_t live, int bit, uint64_t ts,
		gt_memtrack_emit_fn fn, void *ctx)
{
	struct gt_kev_heap ev;

	if (p->excluded || (p->emitted && p->last_live == live) || !alive(p))
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.hdr.ts = ts;
	ev.hdr.type = GT_KEV_HEAP;
	ev.hdr.tid = ev.hdr.tgid = (uint32_t)p->tgid;
	ev.hdr.sessions = 1u << bit;
	/* frees of blocks allocated before the interposer started counting */
	ev.live_bytes = live > 0 ? (uint64_t)live : 0;
	ev.limit_bytes = p->limit;
	p->last_live = live;
	p->emitted = 1;
	fn(ctx, &ev.hdr, sizeof(ev));
	return 1;
}

/* Copies ring entry i if it is complete and stays so while copied. */
static int read_sample(const struct gt_heap_shm *h, uint64_t i, struct gt_heap_sample *out)
{
	struct gt_heap_sample *e = &gt_heap_shm_ring(h)[i % GT_HEAP_RING];
	uint64_t want = 2 * i + 2, seq = atomic_load_explicit(&e->seq, memory_order_acquire);

	if (seq != want)
		return seq < want ? -EAGAIN : -ESTALE; /* being written / overwritten */
	memcpy((char *)out + sizeof(out->seq), (char *)e + sizeof(e->seq),
	       sizeof(*e) - sizeof(e->seq));
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->seq, memory_order_relaxed) == want ? 0 : -ESTALE;
}

static void emit_sample(struct gt_mt_interpose *ip, struct gt_mt_pcs *pcs,
			const struct gt_heap_sample *s, int bit, gt_memtrack_emit_fn fn, void *ctx)
{
	struct gt_ip_proc *p = proc_of(ip, s->tgid, 0);
	struct gt_kev_alloc_sample ev;
	int n = s->npcs < GT_HEAP_SAMPLE_PCS ? (int)s->npcs : GT_HEAP_SAMPLE_PCS;

	if (s->tgid <= 0 || (p && p->excluded))
		return;
	memset(&ev, 0, sizeof(ev));
	ev.hdr.ts = s->ts;
	ev.hdr.type = GT_KEV_ALLOC_SAMPLE;
	ev.hdr.cpu = 0xffff; /* read late: where it runs now is not known */
	ev.hdr.tid = (uint32_t)s->tid;
	ev.hdr.tgid = (uint32_t)s->tgid;
	ev.hdr.sessions = 1u << bit;
	ev.size = s->size;
	ev.addr = s->addr;
	ev.ustack = pcs ? gt_mt_pcs_intern(pcs, (uint32_t)s->tgid, s->pcs, n) : -1;
	ip->samples++;
	fn(ctx, &ev.hdr, sizeof(ev));
}

/* New samples of the ring, oldest first. */
static int read_samples(struct gt_mt_interpose *ip, struct gt_mt_pcs *pcs, int bit,
			gt_memtrack_emit_fn fn, void *ctx)
{
	uint64_t head = atomic_load_explicit(&((struct gt_heap_shm *)ip->h)->head,
					     memory_order_acquire);
	struct gt_heap_sample s;
	int n = 0;

	if (head - ip->tail > GT_HEAP_RING) { /* overrun: the oldest are gone */
		ip->lost += head - ip->tail - GT_HEAP_RING;
		ip->tail = head - GT_HEAP_RING;
	}
	while (ip->tail < head) {
		int rc = read_sample(ip->h, ip->tail, &s);

		/* a writer mid-entry: wait for it, unless it seems to have died
		 * there (half the ring written since) */
		if (rc == -EAGAIN && head - ip->tail < GT_HEAP_RING / 2)
			break;
		ip->tail++;
		if (rc) {
			ip->lost++;
			continue;
		}
		emit_sample(ip, pcs, &s, bit, fn, ctx);
		n++;
	}
	return n;
}

int gt_mt_interpose_samples(struct gt_mt_interpose *ip, struct gt_mt_pcs *pcs, int bit,
			    gt_memtrack_emit_fn fn, void *ctx)
{
	return read_samples(ip, pcs, bit, fn, ctx);
}

int gt_mt_interpose_poll(struct gt_mt_interpose *ip, struct gt_mt_pcs *pcs, int bit, uint64_t ts,
			 gt_memtrack_emit_fn fn, void *ctx)
{
	uint32_t used = atomic_load_explicit(&((struct gt_heap_shm *)ip->h)->used,
					     memory_order_acquire);
	int32_t done[64];
	int n = 0, ndone = 0;

	if (used > GT_HEAP_SHM_SLOTS)
		used = GT_HEAP_SHM_SLOTS;
	/* each process once: its sum walks the slots again (a handful of
	 * processes and slots in practice) */
	for (uint32_t i = 0; i < used; i++) {
		int32_t t = atomic_load_explicit(&((struct gt_heap_slot *)&ip->h->slot[i])->tgid,
						 memory_order_acquire);
		struct gt_ip_proc *p;
		int found, seen = 0;
		int64_t live;

		for (int j = 0; j < ndone && !seen; j++)
			seen = done[j] == t;
		if (t <= 0 || seen)
			continue;
		if (ndone < (int)(sizeof(done) / sizeof(done[0])))
			done[ndone++] = t;
		p = proc_of(ip, t, 1);
		live = gt_heap_shm_live(ip->h, t, &found);
		if (p && found)
			n += emit(p, live, bit, ts, fn, ctx);
	}
	return n + read_samples(ip, pcs, bit, fn, ctx);
}

void gt_mt_interpose_stats(const struct gt_mt_interpose *ip, struct gt_mt_interpose_stats *st)
{
	struct gt_heap_shm *h = (struct gt_heap_shm *)ip->h;

	st->slots_used = atomic_load(&h->used);
	st->full = atomic_load(&h->full);
	st->bypassed = atomic_load(&h->bypassed);
	st->samples = ip->samples;
	st->samples_lost = ip->lost;
}

int gt_mt_elf_is_static(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	/* path is /proc/PID/exe, the kernel's link to the very executable:
	 * followed, then held to a regular file (sym/safe_open.h) */
	int fd = gt_sym_open(AT_FDCWD, path, GT_SYM_OPEN_TRUSTED, NULL, GT_SYM_FILE_MAX), rc = 1;

	if (fd < 0)
		return fd;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph)) {
		close(fd);
		return -ENOEXEC;
	}
	for (unsigned i = 0; i < eh.e_phnum && rc == 1; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			rc = -EIO;
		else if (ph.p_type == PT_INTERP)
			rc = 0;
	}
	close(fd);
	return rc;
}
