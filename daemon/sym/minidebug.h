/* MiniDebugInfo: the .gnu_debugdata section some distributions (Fedora,
 * CentOS) leave in stripped binaries, an xz-compressed ELF file holding the
 * .symtab of the functions .dynsym lacks (gdb and perf read it).  The
 * section is another user's data: it is decompressed with liblzma under
 * GT_MINIDEBUG_MAX bytes of output and of decoder memory, and what comes
 * out is parsed as any ELF file of the user's (fuzzed with fuzz_sym_elf). */
#ifndef GT_SYM_MINIDEBUG_H
#define GT_SYM_MINIDEBUG_H

#include <stddef.h>

#define GT_MINIDEBUG_MAX (64u << 20)

/* The ELF file in elf's .gnu_debugdata: 0 with *out (an Elf *, elf_end it)
 * over *buf (free it after), or -ENOENT (none), -EINVAL (not xz, or
 * larger than the bounds), -ENOMEM. */
int gt_minidebug_open(void *elf, void **buf, void **out);

#endif
