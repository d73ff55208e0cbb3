/* One mapped binary (executable or shared library), parsed once: ELF
 * symbols (.symtab, .dynsym, and those of a /usr/lib/debug file found by
 * build-id or debuglink: debug_file.h, else of its MiniDebugInfo:
 * minidebug.h), load segments, DWARF lines, Go pclntab. */
#ifndef GT_SYM_ELF_H
#define GT_SYM_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "cfi.h"
#include "dwarf.h"
#include "pclntab.h"
#include "table.h"

struct gt_sym_segment {
	uint64_t vaddr, offset, filesz;
};

struct gt_binary {
	int fd;                 /* kept open: the file may vanish later */
	void *elf;              /* Elf * */
	int debug_fd;           /* separate debug file, or -1 */
	void *debug_elf;
	void *mini_elf;         /* MiniDebugInfo (minidebug.h), or NULL */
	void *mini_buf;         /* its decompressed bytes */
	struct gt_sym_segment *segs;
	size_t nsegs;
	struct gt_symtab syms;
	struct gt_dwarf dwarf;
	struct gt_cfi cfi;      /* return-address rules (.eh_frame) */
	void *map;              /* whole file, only for Go binaries */
	size_t map_len;
	void *image;            /* in-memory ELF (the vDSO), owned copy */
	struct gt_pcln pcln;
	int is_go;
	unsigned flags;         /* enum gt_sym_info_flags */
};

/* Parses the ELF file open at fd; takes ownership of fd (closed by
 * gt_binary_close, also on failure).  o says where it was found, for its
 * debug file (debug_file.h; NULL: by build-id only).  Returns 0 or
 * -errno. */
struct gt_sym_origin;
int gt_binary_load(struct gt_binary *b, int fd, const struct gt_sym_origin *o);

/* Parses an ELF image held in memory (the vDSO); copies it. */
int gt_binary_load_image(struct gt_binary *b, const void *image, size_t size);

/* File offset -> link-time virtual address via PT_LOAD; 0 or -ENOENT. */
int gt_binary_vaddr(const struct gt_binary *b, uint64_t file_off,
		    uint64_t *vaddr);

struct gt_binary_sym {
	const char *func; /* NULL if unknown */
	const char *file; /* NULL if unknown */
	unsigned line;
};

/* Symbolizes a link-time address.  Returns 0 if func is known. */
int gt_binary_lookup(const struct gt_binary *b, uint64_t vaddr,
		     struct gt_binary_sym *out);

/* Where the code at a link-time address keeps its return address; 0 or
 * -ENOENT (see gt_cfi_ra). */
int gt_binary_ra(const struct gt_binary *b, uint64_t vaddr, struct gt_ra_rule *out);

void gt_binary_close(struct gt_binary *b);

#endif
