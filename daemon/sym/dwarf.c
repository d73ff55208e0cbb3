/* DWARF line lookups through libdw. */
#include "dwarf.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <stddef.h>

int gt_dwarf_open(struct gt_dwarf *d, void *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_Aranges *ar;
	size_t n = 0;

	d->dw = dw;
	d->walk_units = dw && (dwarf_getaranges(dw, &ar, &n) || n == 0);
	return dw ? 0 : -ENOENT;
}

/* The compile unit covering vaddr: from .debug_aranges, or for producers
 * that emit none a walk of all units (slow: callers cache results). */
static int find_cu(const struct gt_dwarf *d, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf *dw = d->dw;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(dw, vaddr, cu))
		return 0;
	if (!d->walk_units)
		return -ENOENT;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) &&
		    dwarf_haspc(cu, vaddr) > 0)
			return 0;
		off = next;
	}
	return -ENOENT;
}

int gt_dwarf_line(const struct gt_dwarf *d, uint64_t vaddr, const char **file,
		  unsigned *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	int lineno = 0;

	if (!d->dw || find_cu(d, vaddr, &cu))
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, vaddr);
	if (!l)
		return -ENOENT;
	*file = dwarf_linesrc(l, NULL, NULL);
	if (!*file || dwarf_lineno(l, &lineno) || lineno < 0)
		return -ENOENT;
	*line = (unsigned)lineno;
	return 0;
}

struct func_search {
	uint64_t vaddr;
	const char *name;
};

static int match_func(Dwarf_Die *fn, void *arg)
{
	struct func_search *s = arg;

	if (dwarf_haspc(fn, s->vaddr) > 0) {
		s->name = dwarf_diename(fn);
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

int gt_dwarf_func(const struct gt_dwarf *d, uint64_t vaddr, const char **name)
{
	struct func_search s = { vaddr, NULL };
	Dwarf_Die cu;

	if (!d->dw || find_cu(d, vaddr, &cu))
		return -ENOENT;
	dwarf_getfuncs(&cu, match_func, &s, 0);
	if (!s.name)
		return -ENOENT;
	*name = s.name;
	return 0;
}

void gt_dwarf_close(struct gt_dwarf *d)
{
	if (d->dw)
		dwarf_end(d->dw);
	d->dw = NULL;
}
