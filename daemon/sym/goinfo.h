/* Where a Go binary keeps its running goroutine and that goroutine's id:
 * what bpf/goid.bpf.h needs to read the goid of a thread that switches out
 * (docs/mapping.md, "Goroutines of Go programs"). */
#ifndef GT_SYM_GOINFO_H
#define GT_SYM_GOINFO_H

#include <stdint.h>

struct gt_goinfo {
	int minor;         /* Go 1.minor from the build info, 0 if unread */
	int64_t tls_off;   /* amd64: g at fsbase + tls_off */
	uint32_t goid_off; /* g.goid */
	uint32_t labels_off; /* g.labels (pprof labels), 0 = unknown: none read */
	uint32_t m_off, curg_off; /* g.m, m.curg; 0 = unknown: g0's goroutine unread */
	int goid_from_dwarf; /* 1: DWARF's runtime.g (a Go the table does not know) */
};

/* Reads the ELF file open at fd (not closed).  0 and *out filled for a Go
 * 1.19+ binary of this machine's architecture; -ENOENT for anything else
 * (not Go, too old or too new a Go with no DWARF, another architecture),
 * -EPERM for a file on FUSE, -EFBIG when the DWARF it would need is larger
 * than the event loop may inflate or read (goinfo.c, docs/security.md). */
int gt_goinfo_read(int fd, struct gt_goinfo *out);

/* g.goid's offset for Go 1.minor on a 64-bit target, 0 if unknown. */
uint32_t gt_goinfo_goid_table(int minor);
/* g.labels's offset for Go 1.minor on a 64-bit target, 0 if unknown. */
uint32_t gt_goinfo_labels_table(int minor);
/* g.m's and m.curg's offsets for Go 1.minor (64-bit): 0 if unknown. */
uint32_t gt_goinfo_m_table(int minor);
uint32_t gt_goinfo_curg_table(int minor);

/* g.goid's offset from the DWARF type runtime.g of the ELF file at fd:
 * 0, or -ENOENT when it has none (-EPERM, -EFBIG as gt_goinfo_read). */
int gt_goinfo_dwarf_goid(int fd, uint32_t *off);
/* The same for any member of struct type `type` ("runtime.g", "runtime.m"). */
int gt_goinfo_dwarf_member(int fd, const char *type, const char *member, uint32_t *off);

#endif
