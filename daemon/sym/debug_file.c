/* See debug_file.h. */
#include "debug_file.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "crc_cache.h"
#include "loader.h"
#include "safe_open.h"

int gt_debuglink_parse(const void *data, size_t size, int big_endian,
		       char name[GT_DEBUGLINK_MAX + 1], uint32_t *crc)
{
	const unsigned char *p = data, *c;
	size_t len, off;

	if (!data)
		return -EINVAL;
	for (len = 0; len < size && p[len]; len++)
		if (p[len] <= 0x20 || p[len] >= 0x7f || p[len] == '/')
			return -EINVAL;
	if (len == 0 || len > GT_DEBUGLINK_MAX || len == size)
		return -EINVAL;
	if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
		return -EINVAL;
	off = (len + 1 + 3) & ~(size_t)3; /* NUL-padded to 4 bytes, then the CRC */
	if (off > size || size - off < 4)
		return -EINVAL;
	c = p + off;
	*crc = big_endian ? (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3]
			  : (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	memcpy(name, p, len);
	name[len] = 0;
	return 0;
}

Elf_Scn *gt_elf_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, want))
			return scn;
	}
	return NULL;
}

/* The GNU build-id note's bytes (at most GT_BUILD_ID_MAX): its length,
 * or 0 if elf has none. */
static size_t build_id(Elf *elf, uint8_t id[GT_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + noff, "GNU", 4) ||
			    nh.n_descsz < 2 || nh.n_descsz > GT_BUILD_ID_MAX)
				continue;
			memcpy(id, (const uint8_t *)data->d_buf + doff, nh.n_descsz);
			return nh.n_descsz;
		}
	}
	return 0;
}

/* /usr/lib/debug/.build-id/xx/yyyy.debug for a build-id. */
static void build_id_path(const uint8_t *id, size_t n, char *path, size_t len)
{
	size_t k = (size_t)snprintf(path, len, GT_DEBUG_ROOT "/.build-id/%02x/", id[0]);

	for (size_t i = 1; i < n && k + 3 < len; i++)
		k += (size_t)snprintf(path + k, len - k, "%02x", id[i]);
	snprintf(path + k, len - k, ".debug");
}

/* The file at fd has the build-id id[0..n): the debug file of the binary,
 * not another (a process's root is its user's: anything can be there). */
static int same_build_id(int fd, const uint8_t *id, size_t n)
{
	uint8_t got[GT_BUILD_ID_MAX];
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int same = e && elf_kind(e) == ELF_K_ELF && build_id(e, got) == n && !memcmp(got, id, n);

	if (e)
		elf_end(e);
	return same;
}

/* By build-id: in the process's root (a container's dbgsym packages,
 * links refused), then in ours.  Either must carry the same build-id. */
static int open_build_id(Elf *elf, const struct gt_sym_origin *o)
{
	uint8_t id[GT_BUILD_ID_MAX];
	size_t n = build_id(elf, id);
	char path[256];
	int fd;

	if (!n)
		return -ENOENT;
	build_id_path(id, n, path, sizeof(path));
	for (int mine = 0; mine < 2; mine++) {
		if (!mine && (!o || o->root_fd == AT_FDCWD))
			continue;
		fd = mine ? gt_sym_open(AT_FDCWD, path, GT_SYM_OPEN_TRUSTED, NULL, GT_SYM_FILE_MAX)
			  : gt_sym_open(o->root_fd, path, GT_SYM_OPEN_NO_LINKS, NULL, GT_SYM_FILE_MAX);
		if (fd < 0)
			continue;
		if (same_build_id(fd, id, n))
			return fd;
		gt_sym_reject(GT_SYM_REJECT_BUILD_ID, path);
		close(fd);
	}
	return -ENOENT;
}

#define CRC_DROP_EVERY (8 << 20)

/* CRC-32 (zlib's, as gdb's gnu_debuglink_crc32) of the whole file, as
 * remembered (crc_cache.h) or read on this loader thread, 64 KiB at a
 * time, until the load is cancelled (-ECANCELED: no session needs it). */
static int file_crc(int fd, uint32_t *out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	struct stat st;
	off_t off = 0;
	ssize_t n = 0;

	if (fstat(fd, &st))
		return -errno;
	if (gt_crc_cache_get(&st, out))
		return 0;
	while (!gt_sym_cancelled() && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
		/* the pages read go back at once: a user's 1 GiB file (its
		 * holes too) must not fill the page cache the machine needs */
		if (off % CRC_DROP_EVERY == 0)
			posix_fadvise(fd, off - CRC_DROP_EVERY, CRC_DROP_EVERY, POSIX_FADV_DONTNEED);
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (n < 0)
		return -errno;
	/* a file read to the size it had when it was looked up is
	 * remembered (one that grew or shrank meanwhile is read again next
	 * time), even if its load was just cancelled: the work is done */
	if ((uint64_t)off == (uint64_t)st.st_size)
		gt_crc_cache_put(&st, (uint32_t)crc);
	else if (gt_sym_cancelled())
		return -ECANCELED;
	*out = (uint32_t)crc;
	return 0;
}

/* Opens one candidate; kept only if its CRC is the link's. */
static int try_link(int root_fd, const char *path, enum gt_sym_open_how how, uint32_t want)
{
	uint32_t crc;
	int fd = gt_sym_open(root_fd, path, how, NULL, GT_DEBUGLINK_FILE_MAX), err;

	if (fd < 0)
		return fd;
	err = file_crc(fd, &crc);
	if (err || crc != want) {
		if (err != -ECANCELED)
			gt_sym_reject(GT_SYM_REJECT_DEBUGLINK_CRC, path);
		close(fd);
		return err == -ECANCELED ? err : -ENOENT;
	}
	return fd;
}

/* The debug link's candidates, in gdb's order. */
static int open_debuglink(Elf *elf, const struct gt_sym_origin *o)
{
	char name[GT_DEBUGLINK_MAX + 1], dir[4096], path[4608];
	const char *slash;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn = gt_elf_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	uint32_t crc;
	int fd;

	if (!d || !o || !o->path || o->path[0] != '/' || !gelf_getehdr(elf, &eh))
		return -ENOENT;
	if (gt_debuglink_parse(d->d_buf, d->d_size, eh.e_ident[EI_DATA] == ELFDATA2MSB, name,
			       &crc)) {
		gt_sym_reject(GT_SYM_REJECT_DEBUGLINK_NAME, o->path);
		return -ENOENT;
	}
	slash = strrchr(o->path, '/');
	if ((size_t)(slash - o->path) >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, o->path, (size_t)(slash - o->path));
	dir[slash - o->path] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = try_link(o->root_fd, path, GT_SYM_OPEN_NO_LINKS, crc)) >= 0 || fd == -ECANCELED)
		return fd;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, name);
	if ((fd = try_link(o->root_fd, path, GT_SYM_OPEN_NO_LINKS, crc)) >= 0 || fd == -ECANCELED)
		return fd;
	snprintf(path, sizeof(path), GT_DEBUG_ROOT "%s/%s", dir, name);
	return try_link(AT_FDCWD, path, GT_SYM_OPEN_TRUSTED, crc);
}

int gt_debug_file_open(void *elf, const struct gt_sym_origin *o)
{
	int fd = open_build_id(elf, o);

	if (fd >= 0)
		return fd;
	fd = open_debuglink(elf, o);
	return fd < 0 ? -ENOENT : fd;
}
