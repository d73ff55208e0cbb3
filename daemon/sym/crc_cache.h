/* The CRC-32 of files read whole for a debug link (debug_file.h),
 * remembered across sessions: a 1 GiB candidate costs seconds of CPU, and
 * the same file was read again for every new session that mapped its
 * binary.  A file is known by its device, inode, size, modification and
 * change times: a file written since (or whose times were set back: the
 * change time moves then too) is read again.  At most GT_CRC_CACHE_SLOTS
 * files, the one unused longest replaced first; process-wide, locked
 * (loader threads run at once). */
#ifndef GT_SYM_CRC_CACHE_H
#define GT_SYM_CRC_CACHE_H

#include <stdint.h>
#include <sys/stat.h>

#define GT_CRC_CACHE_SLOTS 64

/* 1 and *crc if the file st describes is known, else 0. */
int gt_crc_cache_get(const struct stat *st, uint32_t *crc);

/* Remembers the file's CRC. */
void gt_crc_cache_put(const struct stat *st, uint32_t crc);

/* Forgets every file (tests). */
void gt_crc_cache_clear(void);

#endif
