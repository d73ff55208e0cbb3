/* The checker's entry points: runs the phases in Go's order (decode,
 * order, futile wakeups, state machine) and maps files read-only. */
#include "gt_check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_check_internal.h"

int gt_ctx_fail(struct gt_ctx *c, int type, uint64_t off, const char *fmt, ...)
{
	struct gt_check_report *rep = c->rep;
	size_t n = 0;
	va_list ap;

	if (!rep->ok)
		return 1; /* keep the first error */
	if (type >= 0 && type < GT_EV_COUNT)
		n = (size_t)snprintf(rep->error, sizeof(rep->error), "%s at offset %llu: ",
				     gt_event_descs[type].name, (unsigned long long)off);
	if (n < sizeof(rep->error)) {
		va_start(ap, fmt);
		vsnprintf(rep->error + n, sizeof(rep->error) - n, fmt, ap);
		va_end(ap);
	}
	rep->error_offset = off;
	rep->ok = 0;
	return 1;
}

void gt_check_release(struct gt_ctx *c, uint64_t nbytes)
{
	uintptr_t lo, hi;
	long pg;

	if (!c->mapped || (c->read_since += nbytes) < GT_RELEASE_EVERY)
		return;
	c->read_since = 0;
	pg = sysconf(_SC_PAGESIZE);
	lo = (uintptr_t)c->data & ~(uintptr_t)(pg - 1);
	hi = (uintptr_t)c->data + c->len;
	/* only a hint: if it fails the pages just stay */
	(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

int gt_ctx_viewer_rules(const struct gt_ctx *c)
{
	return !(c->flags & GT_CHECK_PARSER_ONLY);
}

int gt_ctx_design_rules(const struct gt_ctx *c)
{
	return !(c->flags & (GT_CHECK_PARSER_ONLY | GT_CHECK_GO_TOOLS));
}

int gt_check_ctx_init(struct gt_ctx *c, const uint8_t *data, size_t len, unsigned flags,
		    struct gt_check_report *rep)
{
	memset(c, 0, sizeof(*c));
	c->data = data;
	c->len = len;
	c->flags = flags;
	c->rep = rep;
	c->raw = malloc(sizeof(*c->raw));
	if (!c->raw)
		return -ENOMEM;
	if (gt_idmap_init(&c->strings, 1, sizeof(struct gt_string)) < 0 ||
	    gt_idmap_init(&c->stacks, 1, sizeof(struct gt_stack)) < 0 ||
	    gt_idmap_init(&c->timer_gs, 1, 1) < 0 ||
	    gt_idmap_init(&c->batch_of, 1, sizeof(uint32_t)) < 0)
		return -ENOMEM;
	return 0;
}

void gt_check_ctx_free(struct gt_ctx *c)
{
	gt_psegs_free(&c->segs);
	free(c->raw);
	free(c->ev);
	free(c->order);
	free(c->batches);
	gt_idmap_free(&c->strings);
	gt_idmap_free(&c->stacks);
	gt_idmap_free(&c->timer_gs);
	gt_idmap_free(&c->batch_of);
}

int gt_check_run_mem(const uint8_t *data, size_t len, unsigned flags,
		     struct gt_check_report *rep, gt_goroutine_fn fn, void *arg)
{
	struct gt_ctx c;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rep->bytes = len;
	rep->ok = 1;
	rc = gt_check_ctx_init(&c, data, len, flags, rep);
	if (!rc)
		rc = gt_check_decode(&c);
	if (!rc)
		rc = gt_check_order(&c);
	if (!rc)
		rc = gt_check_futile(&c);
	if (!rc)
		rc = gt_check_state(&c, fn, arg);
	if (!rc)
		rc = gt_check_go122(&c);
	gt_check_ctx_free(&c);
	if (rc < 0) {
		snprintf(rep->error, sizeof(rep->error), "checker: %s", strerror(-rc));
		rep->ok = 0;
		return rc;
	}
	return rep->ok ? 0 : 1;
}

int gt_check_buffer(const uint8_t *data, size_t len, struct gt_check_report *rep)
{
	return gt_check_run(data, len, 0, rep, NULL, NULL);
}

/* Maps path read-only; an empty file maps to a zero-length buffer. */
static int map_file(const char *path, const uint8_t **data, size_t *len,
		    struct gt_check_report *rep)
{
	struct stat st;
	void *p = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &st) < 0)
		goto fail_fd;
	if (!S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		goto fail_fd;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			goto fail_fd;
	}
	close(fd);
	*data = p;
	*len = (size_t)st.st_size;
	return 0;
fail_fd:
	err = errno;
	close(fd);
	errno = err;
fail:
	err = errno;
	memset(rep, 0, sizeof(*rep));
	snprintf(rep->error, sizeof(rep->error), "cannot open %s: %s", path, strerror(err));
	return -err;
}

int gt_check_file_run(const char *path, unsigned flags, struct gt_check_report *rep,
		      gt_goroutine_fn fn, void *arg)
{
	static const uint8_t empty[1];
	const uint8_t *data = NULL;
	size_t len = 0;
	int rc = map_file(path, &data, &len, rep);

	if (rc < 0)
		return rc;
	rc = gt_check_run_mapped(len ? data : empty, len, flags, len > 0, rep, fn, arg);
	if (len)
		munmap((void *)data, len);
	return rc;
}

int gt_check_file(const char *path, struct gt_check_report *rep)
{
	return gt_check_file_run(path, 0, rep, NULL, NULL);
}
