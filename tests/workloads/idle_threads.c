/* idle_threads N: a process of N threads (main and N-1 others) that all
 * sleep until killed, as most processes of a real machine do; prints
 * `ready` once every thread exists.  For recordings of the whole machine
 * at realistic thread counts (record_select.sh). */
#include "wl_common.h"

#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 8);
	pthread_t t;

	for (long i = 1; i < n; i++)
		if (pthread_create(&t, NULL, idle, NULL))
			wl_die("pthread_create");
	wl_say("ready");
	idle(NULL);
	return 0;
}
