/* Finding a process's allocators: which mapped binaries export malloc and
 * friends (glibc, jemalloc, tcmalloc) and at which file offsets, and
 * whether the program is written in Go (never probed with uretprobes).
 *
 * Return convention: 0 or -errno.
 */
#ifndef GT_ALLOC_SYMS_H
#define GT_ALLOC_SYMS_H

#include <stdint.h>
#include <sys/types.h>

enum gt_alloc_fn {
	GT_AF_MALLOC, GT_AF_CALLOC, GT_AF_REALLOC, GT_AF_FREE,
	GT_AF_POSIX_MEMALIGN, GT_AF_ALIGNED_ALLOC, GT_AF_MEMALIGN,
	GT_AF_VALLOC, GT_AF_PVALLOC,
	GT_AF_COUNT
};

extern const char *const gt_alloc_fn_names[GT_AF_COUNT];

#define GT_ALLOC_MAX_LIBS 4

/* One binary that exports allocators. */
struct gt_alloc_lib {
	char path[4096];                /* openable from here: /proc/PID/root/... */
	uint64_t offset[GT_AF_COUNT];   /* file offset of each function; 0 = absent */
};

struct gt_alloc_target {
	int is_go;                      /* the main executable is a Go program */
	int nlibs;
	struct gt_alloc_lib libs[GT_ALLOC_MAX_LIBS];
};

/* Reads /proc/PID/maps and /proc/PID/exe.  -ESRCH if the process is gone.
 * No allocator found is not an error (nlibs = 0). */
int gt_alloc_find(pid_t pid, struct gt_alloc_target *out);

/* File offsets of the allocator functions exported by the ELF file at path
 * (.dynsym, then .symtab).  Returns how many were found, or -errno. */
int gt_alloc_elf_offsets(const char *path, uint64_t offset[GT_AF_COUNT]);

/* 1 if the ELF file at path is a Go binary (.gopclntab / .go.buildinfo
 * section, or a Go build-id note), 0 if not, -errno. */
int gt_alloc_is_go_binary(const char *path);

#endif
