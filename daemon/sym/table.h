/* Sorted address -> name tables and a string arena: the lookup structure
 * shared by ELF symbols and /proc/kallsyms (no libelf here, fuzzable). */
#ifndef GT_SYM_TABLE_H
#define GT_SYM_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Append-only storage for NUL-terminated strings; blocks never move, so
 * returned pointers stay valid until gt_arena_free. */
struct gt_arena_block;
struct gt_arena {
	struct gt_arena_block *head;
};

const char *gt_arena_strndup(struct gt_arena *a, const char *s, size_t n);
void gt_arena_free(struct gt_arena *a);
/* Moves every block of from into to (pointers into them stay valid). */
void gt_arena_move(struct gt_arena *to, struct gt_arena *from);

struct gt_symtab_entry {
	uint64_t addr;
	uint64_t size;    /* 0 = unknown: extends to the next symbol */
	const char *name; /* in the table's arena */
	const char *mod;  /* kallsyms: module name or NULL */
};

struct gt_symtab {
	struct gt_symtab_entry *v;
	size_t n, cap;
	struct gt_arena names;
	uint64_t max_gap; /* size-0 symbols cover at most this many bytes */
};

int gt_symtab_add(struct gt_symtab *t, uint64_t addr, uint64_t size,
		  const char *name, size_t name_len, const char *mod);
/* Sorts by address and drops exact duplicates (keeps the sized one). */
void gt_symtab_finish(struct gt_symtab *t);
/* The symbol covering addr, or NULL. */
const struct gt_symtab_entry *gt_symtab_find(const struct gt_symtab *t,
					     uint64_t addr);
void gt_symtab_free(struct gt_symtab *t);

#endif
