/* Process titles for goroutine names: what /proc/PID/cmdline shows as the
 * program set it ("postgres: checkpointer", "nginx: worker process"),
 * cached per process; the translator asks through a gt_title_source. */
#ifndef GT_ENGINE_TITLES_H
#define GT_ENGINE_TITLES_H

#include <stddef.h>
#include <stdint.h>

#include "translate/translate.h"

#define GT_TITLE_CACHE 1024 /* direct-mapped by tgid: a collision rereads */

struct gt_title_entry {
	uint32_t tgid;          /* 0 = empty */
	char title[GT_TITLE_LEN];
	char comm[GT_COMM_LEN];
};

struct gt_titles {
	struct gt_title_entry *cache; /* GT_TITLE_CACHE entries, on first use */
	struct gt_title_source src;
};

/* The source to hand a translator (its ctx is titles). */
const struct gt_title_source *gt_titles_source(struct gt_titles *titles);
/* Reads tgid's title now unless it is known: the engine calls it for the
 * processes it follows, so that one that ends before the recording does
 * (a PostgreSQL backend) is still named by the title it had. */
void gt_titles_note(struct gt_titles *titles, uint32_t tgid);
/* Forgets tgid's title: after its exec, or once it is gone. */
void gt_titles_forget(struct gt_titles *titles, uint32_t tgid);
void gt_titles_free(struct gt_titles *titles);
/* A private copy of what src knows (a flight dump's thread reads titles
 * while the engine's thread updates its own): 0, or -1 without memory
 * (then dst reads /proc every time).  gt_titles_source(dst) to use it,
 * gt_titles_free(dst) after. */
int gt_titles_copy(struct gt_titles *dst, const struct gt_titles *src);

/* A cmdline's bytes (NUL-separated arguments) as one title: arguments
 * joined by spaces, trailing NULs and spaces dropped, cut to fit out.
 * Exposed for tests. */
void gt_title_from_cmdline(const char *buf, size_t n, char *out, size_t outlen);

#endif
