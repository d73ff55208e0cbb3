/* Fuzzes the ELF side of the symbolizer on a binary another user would
 * present to the root daemon: the file (program and section headers,
 * .symtab/.dynsym, the GNU build-id note, .gnu_debuglink, DWARF line
 * tables through libdw, .eh_frame, a Go .gopclntab or its magic anywhere,
 * an xz-compressed .gnu_debugdata and the ELF file in it)
 * is loaded from a memfd as a mapped binary is, and as the in-memory
 * vDSO image; then looked up at the addresses its own segments and
 * symbols name, and at one the input chooses.  The debug link parser runs
 * on the raw bytes too.  No debug file is looked up beside the input
 * (no origin): only /usr/lib/debug by build-id, root's.
 */
// fuzz-links: daemon/sym
// fuzz-libs: -lelf -ldw -lz -llzma
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sym/debug_file.h"
#include "sym/elf_file.h"

static void check_str(const char *s)
{
	if (s && strlen(s) > (1u << 20))
		abort();
}

static void probe(const struct gt_binary *b, uint64_t vaddr)
{
	struct gt_binary_sym r;
	struct gt_ra_rule ra;

	if (gt_binary_lookup(b, vaddr, &r) == 0 && !r.func)
		abort();
	check_str(r.func);
	check_str(r.file);
	gt_binary_ra(b, vaddr, &ra);
}

static void exercise(const struct gt_binary *b, uint64_t pick)
{
	uint64_t v;

	for (size_t i = 0; i < b->nsegs; i++) {
		probe(b, b->segs[i].vaddr);
		probe(b, b->segs[i].vaddr + b->segs[i].filesz / 2);
	}
	for (size_t i = 0; i < b->syms.n && i < 64; i++)
		probe(b, b->syms.v[i].addr + 1);
	probe(b, pick);
	if (gt_binary_vaddr(b, pick & 0xffff, &v) == 0)
		probe(b, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[GT_DEBUGLINK_MAX + 1];
	struct gt_binary b;
	uint64_t pick = 0;
	uint32_t crc;
	int fd;

	if (size >= 8)
		memcpy(&pick, data + size - 8, 8);
	gt_debuglink_parse(data, size, 0, name, &crc);
	if (gt_binary_load_image(&b, data, size) == 0) {
		exercise(&b, pick);
		gt_binary_close(&b);
	}
	fd = memfd_create("fuzz_sym_elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	if (gt_binary_load(&b, fd, NULL) == 0) { /* takes fd */
		exercise(&b, pick);
		gt_binary_close(&b);
	}
	return 0;
}
