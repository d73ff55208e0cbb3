/* The separate debug file of a binary, looked up only where gdb and perf
 * look: /usr/lib/debug/.build-id/xx/rest.debug by its GNU build-id (in
 * the process's root first, as perf does in the process's mount namespace:
 * a container's installed -dbgsym packages; then in ours), used only if it
 * carries the same build-id; then the name in its .gnu_debuglink in the
 * binary's own directory, in that directory's .debug/, and in
 * /usr/lib/debug/<binary's directory>/.
 *
 * A debug link is another user's data: it must be a bare file name (no
 * '/', not "." or "..", printable, at most GT_DEBUGLINK_MAX bytes) and the
 * file found must have the CRC-32 the link names (as gdb checks).  The
 * binary's directory is resolved as its process sees it (root_fd) and
 * with no link in it; /usr/lib/debug is root's.  Every file is opened by
 * gt_sym_open (safe_open.h).  A candidate's CRC costs a read of the whole
 * file (at most GT_DEBUGLINK_FILE_MAX bytes): it is remembered
 * (crc_cache.h), and the read stops when the load is cancelled
 * (loader.h); only a loader thread may run it. */
#ifndef GT_SYM_DEBUG_FILE_H
#define GT_SYM_DEBUG_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <gelf.h>

#define GT_DEBUG_ROOT "/usr/lib/debug"
#define GT_DEBUGLINK_MAX 255
#define GT_BUILD_ID_MAX 64
/* A debug-link candidate is read whole for its CRC: bounded, as gdb's
 * users' are. */
#define GT_DEBUGLINK_FILE_MAX (1ull << 30)

/* Where a binary was found: its path as the process maps it, and the
 * directory to resolve that path in (a process's root, or AT_FDCWD).
 * path NULL: an image in memory (the vDSO): build-id only. */
struct gt_sym_origin {
	int root_fd;
	const char *path;
};

/* The debug link's file name and CRC from the .gnu_debuglink section's
 * bytes: 0, or -EINVAL when it is not a bare, printable file name or the
 * section is cut short. */
int gt_debuglink_parse(const void *data, size_t size, int big_endian,
		       char name[GT_DEBUGLINK_MAX + 1], uint32_t *crc);

/* The section of the ELF image elf named want, its header in *sh; NULL
 * if it has none. */
Elf_Scn *gt_elf_section(Elf *elf, const char *want, GElf_Shdr *sh);

/* Opens the debug file of the binary elf (an Elf *); its descriptor or
 * -ENOENT. */
int gt_debug_file_open(void *elf, const struct gt_sym_origin *o);

#endif
