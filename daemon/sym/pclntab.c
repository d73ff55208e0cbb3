/* Go pclntab decoder, after Go's debug/gosym/pclntab.go and
 * runtime/symtab.go.  Layout (1.18+, words of ptrsize after an 8-byte
 * header): nfunc, nfiles, textStart, funcnameOff, cuOff, filetabOff,
 * pctabOff, pclnOff.  1.16/1.17 lack textStart.  The function table holds
 * (pc, funcoff) pairs plus an end pc; each _func record holds the entry,
 * then 4-byte fields: nameoff, args, deferreturn, pcsp, pcfile, pcln,
 * npcdata, cuOffset.  pcfile/pcln are pc-value tables of zig-zag varint
 * (value delta, pc delta) pairs. */
#include "pclntab.h"

#include <errno.h>
#include <string.h>

#define MAGIC_12 0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* Reads n (4 or 8) bytes at off; returns -1 (as error) via ok flag. */
static int rd(const struct gt_pcln *t, size_t off, unsigned n, uint64_t *v)
{
	const uint8_t *p;
	uint64_t x = 0;

	if (off > t->size || t->size - off < n)
		return -EINVAL;
	p = t->data + off;
	for (unsigned i = 0; i < n; i++) {
		unsigned shift = t->big_endian ? 8 * (n - 1 - i) : 8 * i;

		x |= (uint64_t)p[i] << shift;
	}
	*v = x;
	return 0;
}

static int rd32(const struct gt_pcln *t, size_t off, uint32_t *v)
{
	uint64_t x;

	if (rd(t, off, 4, &x))
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* A header word (ptrsize wide) as an offset inside data. */
static int hdr_off(const struct gt_pcln *t, unsigned word, size_t *out)
{
	uint64_t v;

	if (rd(t, 8 + (size_t)word * t->ptrsize, t->ptrsize, &v) ||
	    v >= t->size)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

static int magic_version(uint32_t m)
{
	switch (m) {
	case MAGIC_12: return 12;
	case MAGIC_116: return 116;
	case MAGIC_118: case MAGIC_120: return 118;
	default: return 0;
	}
}

static int header_plausible(const uint8_t *d, size_t size)
{
	return size >= 16 && d[4] == 0 && d[5] == 0 &&
	       (d[6] == 1 || d[6] == 2 || d[6] == 4) &&
	       (d[7] == 4 || d[7] == 8);
}

static unsigned functab_field(const struct gt_pcln *t)
{
	return t->version >= 118 ? 4 : t->ptrsize;
}

static int layout_116(struct gt_pcln *t, int has_text)
{
	unsigned w = has_text ? 1 : 0;
	uint64_t v;

	if (rd(t, 8, t->ptrsize, &v) || v > UINT32_MAX)
		return -EINVAL;
	t->nfunc = (uint32_t)v;
	if (rd(t, 8 + t->ptrsize, t->ptrsize, &v) || v > UINT32_MAX)
		return -EINVAL;
	t->nfiles = (uint32_t)v;
	if (has_text) {
		if (rd(t, 8 + 2 * t->ptrsize, t->ptrsize, &v))
			return -EINVAL;
		if (v) /* else keep the caller's hint (unrelocated PIE) */
			t->text_start = v;
	}
	if (hdr_off(t, 2 + w, &t->funcnametab) || hdr_off(t, 3 + w, &t->cutab) ||
	    hdr_off(t, 4 + w, &t->filetab) || hdr_off(t, 5 + w, &t->pctab) ||
	    hdr_off(t, 6 + w, &t->funcdata))
		return -EINVAL;
	t->functab = t->funcdata;
	return 0;
}

static int layout_12(struct gt_pcln *t)
{
	uint64_t v;

	if (rd(t, 8, t->ptrsize, &v) || v > UINT32_MAX)
		return -EINVAL;
	t->nfunc = (uint32_t)v;
	t->funcdata = t->funcnametab = t->pctab = 0;
	t->functab = 8 + t->ptrsize;
	t->cutab = 0;
	return 0;
}

int gt_pcln_open(struct gt_pcln *t, const uint8_t *data, size_t size,
		 uint64_t text_start)
{
	uint32_t le, be;
	size_t ftsize;
	int err;

	memset(t, 0, sizeof(*t));
	t->data = data;
	t->size = size;
	t->text_start = text_start;
	if (!data || !header_plausible(data, size))
		return -EINVAL;
	le = (uint32_t)data[0] | (uint32_t)data[1] << 8 |
	     (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
	be = (uint32_t)data[3] | (uint32_t)data[2] << 8 |
	     (uint32_t)data[1] << 16 | (uint32_t)data[0] << 24;
	if (magic_version(le)) {
		t->version = magic_version(le);
	} else if (magic_version(be)) {
		t->version = magic_version(be);
		t->big_endian = 1;
	} else {
		return -ENOTSUP;
	}
	t->quantum = data[6];
	t->ptrsize = data[7];
	err = t->version == 12 ? layout_12(t) : layout_116(t, t->version >= 118);
	if (err)
		return err;
	/* The function table (2 fields per function + end pc) must fit. */
	ftsize = ((size_t)t->nfunc * 2 + 1) * functab_field(t);
	if (!t->nfunc || t->functab > size || size - t->functab < ftsize)
		return -EINVAL;
	if (t->version == 12) {
		uint32_t fileoff;

		if (rd32(t, t->functab + ftsize, &fileoff) || fileoff >= size ||
		    rd32(t, fileoff, &t->nfiles))
			return -EINVAL;
		t->filetab = fileoff;
	}
	return 0;
}

/* Function table entry i: field 0 = pc, field 1 = funcoff. */
static int ft_get(const struct gt_pcln *t, uint32_t i, int field, uint64_t *v)
{
	unsigned sz = functab_field(t);

	if (rd(t, t->functab + ((size_t)2 * i + (size_t)field) * sz, sz, v))
		return -EINVAL;
	if (field == 0 && t->version >= 118)
		*v += t->text_start;
	return 0;
}

static const char *cstr_at(const struct gt_pcln *t, size_t base, uint64_t off)
{
	size_t at;

	if (base > t->size || off >= t->size - base)
		return NULL;
	at = base + (size_t)off;
	if (!memchr(t->data + at, 0, t->size - at))
		return NULL;
	return (const char *)t->data + at;
}

static int read_uvarint(const struct gt_pcln *t, size_t *pos, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*pos >= t->size)
			return -EINVAL;
		b = t->data[(*pos)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

/* Value of the pc-value table at pctab+off for targetpc, or -1. */
static int32_t pcvalue(const struct gt_pcln *t, uint32_t off, uint64_t entry,
		       uint64_t targetpc)
{
	size_t pos;
	uint64_t pc = entry;
	int32_t val = -1;
	int first = 1;

	if (!off || t->pctab > t->size || off >= t->size - t->pctab)
		return -1;
	pos = t->pctab + off;
	for (;;) {
		uint32_t uv, pcd;

		if (read_uvarint(t, &pos, &uv) || (uv == 0 && !first))
			return -1;
		first = 0;
		uv = (uv & 1) ? ~(uv >> 1) : uv >> 1;
		if (read_uvarint(t, &pos, &pcd))
			return -1;
		pc += (uint64_t)pcd * t->quantum;
		val = (int32_t)((uint32_t)val + uv); /* wraps, no UB */
		if (targetpc < pc)
			return val;
	}
}

/* Index of the function containing pc (binary search), or -ENOENT. */
static long find_func(const struct gt_pcln *t, uint64_t pc)
{
	uint64_t lo_pc, end_pc, v;
	uint32_t lo = 0, hi = t->nfunc;

	if (ft_get(t, 0, 0, &lo_pc) || ft_get(t, t->nfunc, 0, &end_pc) ||
	    pc < lo_pc || pc >= end_pc)
		return -ENOENT;
	while (lo < hi) { /* first i with pc(i) > pc */
		uint32_t mid = lo + (hi - lo) / 2;

		if (ft_get(t, mid, 0, &v))
			return -ENOENT;
		if (v > pc)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo ? (long)lo - 1 : -ENOENT;
}

/* The _func record's field n (1 = nameoff ... 8 = cuOffset). */
static int func_field(const struct gt_pcln *t, size_t fd, unsigned n,
		      uint32_t *v)
{
	unsigned sz0 = t->version >= 118 ? 4 : t->ptrsize;

	return rd32(t, fd + sz0 + (n - 1) * 4, v);
}

static const char *file_name(const struct gt_pcln *t, size_t fd, int32_t fno)
{
	uint32_t cuoff, fnoff;

	if (t->version == 12) {
		if (fno <= 0 || (uint32_t)fno >= t->nfiles ||
		    rd32(t, t->filetab + 4 * (size_t)fno, &fnoff))
			return NULL;
		return cstr_at(t, 0, fnoff);
	}
	if (fno < 0 || func_field(t, fd, 8, &cuoff) || cuoff == UINT32_MAX ||
	    rd32(t, t->cutab + ((size_t)cuoff + (size_t)fno) * 4, &fnoff) ||
	    fnoff == UINT32_MAX)
		return NULL;
	return cstr_at(t, t->filetab, fnoff);
}

int gt_pcln_lookup(const struct gt_pcln *t, uint64_t pc,
		   struct gt_pcln_result *r)
{
	uint64_t funcoff, entry;
	uint32_t nameoff, pcfile, pcln;
	long i = find_func(t, pc);
	size_t fd;

	memset(r, 0, sizeof(*r));
	r->line = -1;
	if (i < 0 || ft_get(t, (uint32_t)i, 1, &funcoff) ||
	    funcoff >= t->size - t->funcdata)
		return -ENOENT;
	fd = t->funcdata + (size_t)funcoff;
	if (t->version >= 118) {
		uint32_t e32;

		if (rd32(t, fd, &e32))
			return -ENOENT;
		entry = t->text_start + e32;
	} else if (rd(t, fd, t->ptrsize, &entry)) {
		return -ENOENT;
	}
	if (func_field(t, fd, 1, &nameoff) || func_field(t, fd, 5, &pcfile) ||
	    func_field(t, fd, 6, &pcln))
		return -ENOENT;
	r->func = cstr_at(t, t->funcnametab, nameoff);
	if (!r->func)
		return -ENOENT;
	r->entry = entry;
	r->line = pcvalue(t, pcln, entry, pc);
	r->file = file_name(t, fd, pcvalue(t, pcfile, entry, pc));
	return 0;
}

long gt_pcln_find(const uint8_t *data, size_t size)
{
	struct gt_pcln t;
	struct gt_pcln_result r;
	uint64_t pc0;

	/* The table is pointer-aligned in every Go binary: step by 4. */
	for (size_t off = 0; size >= 16 && off <= size - 16; off += 4) {
		uint32_t m = (uint32_t)data[off] | (uint32_t)data[off + 1] << 8 |
			     (uint32_t)data[off + 2] << 16 |
			     (uint32_t)data[off + 3] << 24;

		if ((m & 0xfffffff0u) != 0xfffffff0u &&
		    (m & 0xf0ffffffu) != 0xf0ffffffu)
			continue;
		if (gt_pcln_open(&t, data + off, size - off, 0) == 0 &&
		    ft_get(&t, 0, 0, &pc0) == 0 &&
		    gt_pcln_lookup(&t, pc0, &r) == 0)
			return (long)off;
	}
	return -ENOENT;
}
