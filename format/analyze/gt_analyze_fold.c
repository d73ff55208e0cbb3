/* Folded stacks (`root;...;leaf COUNT`) and syscall names from stack
 * frames: the text forms of the analysis' stack aggregates. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gt_analyze_internal.h"
#include "util/gt_escape.h"

static int has_prefix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(s, p, k);
}

/* A C symbol: no Go package path or method dot, no C++ scope. */
static int c_symbol(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == '/' || s[i] == ':' || s[i] == '(' || s[i] == ' ')
			return 0;
	return 1;
}

const char *gt_an_syscall_name(const struct gt_an_frame *top, char *buf, size_t len)
{
	const char *s = top->fn, *k;
	size_t n = top->fn_len;
	static const char *const strip[] = { "__GI_", "__libc_", "__", "_" };
	static const char *const kstrip[] = { "__x64_sys_", "__arm64_sys_", "__ia32_sys_",
					      "__se_sys_", "__do_sys_", "ksys_", "sys_" };

	if (!c_symbol(s, n) || len < 2)
		return NULL;
	/* kernel entry points name the syscall after their prefix */
	for (size_t i = 0; i < sizeof(kstrip) / sizeof(*kstrip); i++)
		if (has_prefix(s, n, kstrip[i]) && n > strlen(kstrip[i])) {
			k = kstrip[i];
			s += strlen(k);
			n -= strlen(k);
			goto out;
		}
	/* libc wrappers: __GI___libc_read, __libc_read, __read, __read_nocancel */
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(strip) / sizeof(*strip); i++)
			if (has_prefix(s, n, strip[i]) && n > strlen(strip[i])) {
				s += strlen(strip[i]);
				n -= strlen(strip[i]);
				again = 1;
				break;
			}
	}
	if (n > 9 && !memcmp(s + n - 9, "_nocancel", 9))
		n -= 9;
out:
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	return buf;
}

/* Writes n bytes of a frame name, ';' (between frames) as '_', and
 * escaped (util/gt_escape.h) as every name a traced program chose: no
 * control byte reaches the terminal, no newline breaks the line. */
static void put_name(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		const char *semi = memchr(s + i, ';', n - i);
		size_t k = semi ? (size_t)(semi - (s + i)) : n - i;

		gt_escape_fput(out, s + i, k);
		i += k;
		if (i < n) {
			fputc('_', out);
			i++;
		}
	}
}

void gt_an_fold_line(FILE *out, const char *root, const struct gt_an_frame *f, size_t n,
		     uint64_t count)
{
	put_name(out, root, strlen(root));
	for (size_t i = n; i-- > 0;) {
		fputc(';', out);
		if (f[i].fn_len)
			put_name(out, f[i].fn, f[i].fn_len);
		else
			fprintf(out, "0x%llx", (unsigned long long)f[i].pc);
	}
	fprintf(out, " %llu\n", (unsigned long long)count);
}

struct fline {
	char *text; /* the stack part, without the count */
	uint64_t count;
};

static int by_text(const void *x, const void *y)
{
	return strcmp(((const struct fline *)x)->text, ((const struct fline *)y)->text);
}

static int wanted(const struct gt_analysis *a, const struct gt_an_stackagg *g, int kind,
		  gt_an_keep_fn keep, void *arg)
{
	if (keep && !keep(a, g->g, arg))
		return 0;
	if (kind < 0)
		return g->kind >= GT_AN_KIND_OFFCPU;
	return g->kind == (uint64_t)kind;
}

/* The line of aggregate g without its count, in a malloc'd string. */
static char *line_text(const struct gt_analysis *a, const struct gt_an_stackagg *g,
		       struct gt_an_frame *fr, size_t max)
{
	const struct gt_an_thread *t = gt_an_thread_of(a, g->g);
	char root[160], *buf = NULL;
	size_t nlen = 0, blen = 0, n;
	int64_t tid;
	const char *name = t ? gt_an_thread_name(a, t, &nlen, &tid) : "";
	FILE *m;

	if (nlen)
		snprintf(root, sizeof(root), "%.*s", (int)nlen, name);
	else
		snprintf(root, sizeof(root), "G%llu", (unsigned long long)g->g);
	n = gt_an_stack(a, g->stk, fr, max);
	m = open_memstream(&buf, &blen);
	if (!m)
		return NULL;
	gt_an_fold_line(m, root, fr, n, 0);
	if (fclose(m))
		return NULL;
	buf[blen - 3] = 0; /* drop " 0\n" */
	return buf;
}

static int fold_collect(const struct gt_analysis *a, int kind, gt_an_keep_fn keep, void *arg,
			struct fline **out, size_t *nout)
{
	struct gt_an_frame *fr = malloc(GT_READER_MAX_ARGS * sizeof(*fr));
	struct fline *v = calloc(a->naggs + 1, sizeof(*v));
	size_t n = 0;

	if (!fr || !v)
		goto oom;
	for (size_t i = 0; i < a->naggs; i++) {
		const struct gt_an_stackagg *g = &a->aggs[i];
		uint64_t c = g->kind == GT_AN_KIND_CPU ? g->weight : (g->weight + 500) / 1000;

		if (!wanted(a, g, kind, keep, arg) || !c)
			continue;
		v[n].text = line_text(a, g, fr, GT_READER_MAX_ARGS);
		if (!v[n].text)
			goto oom;
		v[n++].count = c;
	}
	free(fr);
	*out = v;
	*nout = n;
	return 0;
oom:
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(fr);
	free(v);
	return -ENOMEM;
}

int gt_an_fold(const struct gt_analysis *a, int kind, gt_an_keep_fn keep, void *arg, FILE *out)
{
	struct fline *v;
	size_t n;
	int rc = fold_collect(a, kind, keep, arg, &v, &n);

	if (rc)
		return rc;
	qsort(v, n, sizeof(*v), by_text);
	for (size_t i = 0; i < n; i++) {
		uint64_t c = v[i].count;

		/* threads of one name and off-CPU reasons of one stack merge */
		while (i + 1 < n && !strcmp(v[i].text, v[i + 1].text)) {
			free(v[i].text);
			c += v[++i].count;
		}
		fprintf(out, "%s %llu\n", v[i].text, (unsigned long long)c);
		free(v[i].text);
	}
	free(v);
	return ferror(out) ? -EIO : 0;
}
