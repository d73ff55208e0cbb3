/* Demangling via dlopen("libstdc++.so.6") -> __cxa_demangle. */
#include "demangle.h"

#include <dlfcn.h>
#include <stddef.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn demangler(void)
{
	static int tried;
	static cxa_demangle_fn fn;

	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

		tried = 1;
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
		/* h stays open for the process's life: fn points into it. */
	}
	return fn;
}

char *gt_demangle(const char *name)
{
	cxa_demangle_fn fn;
	int status = -1;
	char *out;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	fn = demangler();
	if (!fn)
		return NULL;
	out = fn(name, NULL, NULL, &status);
	return status == 0 ? out : NULL;
}
