/* See minidebug.h. */
#include "minidebug.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdint.h>
#include <stdlib.h>

#include "debug_file.h"

/* xz data in in[0..n) into a malloc'd buffer of at most GT_MINIDEBUG_MAX
 * bytes: 0 with *out, *out_len, or -errno. */
static int unxz(const uint8_t *in, size_t n, uint8_t **out, size_t *out_len)
{
	lzma_stream st = LZMA_STREAM_INIT;
	size_t cap = n * 4 < 65536 ? 65536 : n * 4;
	uint8_t *buf = NULL;
	lzma_ret r;

	if (lzma_stream_decoder(&st, GT_MINIDEBUG_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	st.next_in = in;
	st.avail_in = n;
	do {
		uint8_t *more;

		if (cap > GT_MINIDEBUG_MAX)
			cap = GT_MINIDEBUG_MAX;
		more = realloc(buf, cap);
		if (!more) {
			r = LZMA_MEM_ERROR;
			break;
		}
		buf = more;
		st.next_out = buf + st.total_out;
		st.avail_out = cap - st.total_out;
		r = lzma_code(&st, LZMA_FINISH);
		if (r == LZMA_OK && st.avail_out == 0 && cap == GT_MINIDEBUG_MAX)
			r = LZMA_MEMLIMIT_ERROR; /* more than we take */
		cap *= 2;
	} while (r == LZMA_OK);
	*out_len = (size_t)st.total_out;
	lzma_end(&st);
	if (r != LZMA_STREAM_END) {
		free(buf);
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	*out = buf;
	return 0;
}

int gt_minidebug_open(void *elf, void **buf, void **out)
{
	GElf_Shdr sh;
	Elf_Scn *scn = gt_elf_section(elf, ".gnu_debugdata", &sh);
	Elf_Data *d = scn && sh.sh_type != SHT_NOBITS ? elf_rawdata(scn, NULL) : NULL;
	uint8_t *img;
	size_t len;
	Elf *e;
	int err;

	if (!d || !d->d_buf || !d->d_size)
		return -ENOENT;
	err = unxz(d->d_buf, d->d_size, &img, &len);
	if (err)
		return err;
	e = elf_memory((char *)img, len);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		free(img);
		return -EINVAL;
	}
	*buf = img;
	*out = e;
	return 0;
}
