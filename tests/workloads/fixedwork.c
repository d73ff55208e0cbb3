/* fixedwork cpu|sys N: a fixed amount of work in one thread, timed by
 * itself, for the bystander benchmarks: `cpu` is N rounds of arithmetic
 * (no syscall, no switch), `sys` is N getppid() syscalls.  Prints
 * `elapsed_ns NS`, like pingpong. */
#include "wl_common.h"

__attribute__((noinline)) static void cpu_work(long n)
{
	volatile uint64_t x = 1;

	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
}

__attribute__((noinline)) static void sys_work(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "sys"))) {
		fprintf(stderr, "usage: fixedwork cpu|sys N\n");
		return 2;
	}
	long n = wl_arg(argc, argv, 2, 1000000);
	uint64_t t0 = wl_now_ns();
	if (!strcmp(argv[1], "cpu"))
		cpu_work(n);
	else
		sys_work(n);
	printf("elapsed_ns %llu\n", (unsigned long long)(wl_now_ns() - t0));
	return 0;
}
