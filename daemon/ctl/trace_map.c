/* Lets the pages of a read trace's mapping go (trace_map.h). */
#include <sys/mman.h>
#include <unistd.h>

#include "trace_map.h"

void trace_map_release(void *arg, size_t end)
{
	struct trace_map *m = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	end = end < m->len ? end / page * page : m->len;
	if (end <= m->gone)
		return;
	/* advice only: if it fails the pages just stay */
	(void)madvise((void *)(m->data + m->gone), end - m->gone, MADV_DONTNEED);
	m->gone = end;
}
