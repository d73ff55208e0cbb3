/* Go's pclntab (runtime function table): pc -> function, file, line, read
 * straight from the bytes so stripped Go binaries still symbolize.
 * Formats: Go 1.2-1.15, 1.16-1.17, 1.18-1.19, 1.20+ (magic 0xfffffffb,
 * 0xfffffffa, 0xfffffff0, 0xfffffff1).  Outside input: every read is
 * bounds-checked (fuzzed); no libelf here. */
#ifndef GT_SYM_PCLNTAB_H
#define GT_SYM_PCLNTAB_H

#include <stddef.h>
#include <stdint.h>

struct gt_pcln {
	const uint8_t *data; /* not owned: must outlive the table */
	size_t size;
	int version;         /* 12, 116, 118 (1.18+ incl. 1.20) */
	int big_endian;
	unsigned quantum, ptrsize;
	uint64_t text_start; /* 1.18+: function pcs are offsets from it */
	uint32_t nfunc, nfiles;
	size_t funcnametab, cutab, filetab, pctab, funcdata, functab;
};

struct gt_pcln_result {
	const char *func; /* NUL-terminated, inside data */
	const char *file; /* NULL if unknown */
	int line;         /* -1 if unknown */
	uint64_t entry;   /* function start pc */
};

/* Validates the header at data.  text_start: the address of runtime.text
 * (start of .text) used when the header's own field is 0; may be 0.
 * Returns 0, -EINVAL (not a pclntab) or -ENOTSUP (unknown version). */
int gt_pcln_open(struct gt_pcln *t, const uint8_t *data, size_t size,
		 uint64_t text_start);

/* 0 if pc is inside a function, -ENOENT otherwise. */
int gt_pcln_lookup(const struct gt_pcln *t, uint64_t pc,
		   struct gt_pcln_result *r);

/* Offset of the first plausible pclntab header in data (scan for the
 * magics, for binaries without section headers), or -ENOENT. */
long gt_pcln_find(const uint8_t *data, size_t size);

#endif
