/* The command-line value parsers shared by gotracectl and gotraced
 * (common/parse_args.c): sizes, the one parser of every size option. */
#include <errno.h>
#include <stdint.h>

#include "common/parse_args.h"
#include "gt_test.h"

static void test_size_units(void)
{
	static const struct { const char *s; uint64_t want; } ok[] = {
		{"4096", 4096}, {"8K", 8u << 10}, {"8k", 8u << 10}, {"8KiB", 8u << 10},
		{"16M", 16u << 20}, {"16MiB", 16u << 20}, {"1G", 1u << 30}, {"1GiB", 1u << 30},
	};
	uint64_t b;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		GT_CHECK(gt_args_size(ok[i].s, 1, 1ull << 40, &b) == 0 && b == ok[i].want,
			 "'%s' -> %llu", ok[i].s, (unsigned long long)b);
}

static void test_size_refused(void)
{
	static const char *const bad[] = {"", "M", "16X", "16 M", " 16M", "-1", "+1", "16MB",
					  "1.5M", "16m", "99999999999999999999G"};
	uint64_t b;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		GT_CHECK(gt_args_size(bad[i], 1, UINT64_MAX, &b) == -EINVAL, "'%s' taken", bad[i]);
	GT_CHECK(gt_args_size(NULL, 1, 10, &b) == -EINVAL, "NULL taken");
	/* the bounds apply after the unit */
	GT_CHECK(gt_args_size("4K", 4096, 1u << 30, &b) == 0, "4K at the minimum refused");
	GT_CHECK(gt_args_size("4095", 4096, 1u << 30, &b) == -EINVAL, "under the minimum taken");
	GT_CHECK(gt_args_size("2G", 4096, 1u << 30, &b) == -EINVAL, "over the maximum taken");
}

int main(void)
{
	GT_RUN(test_size_units);
	GT_RUN(test_size_refused);
	return gt_test_done();
}
