/* The fuzz targets' sink for printed output: /dev/null, opened once
 * (abort if it cannot be: a target must not print to the terminal). */
#ifndef FUZZ_DEVNULL_H
#define FUZZ_DEVNULL_H

#include <stdio.h>
#include <stdlib.h>

static inline FILE *fuzz_devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

#endif
