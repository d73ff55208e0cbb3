/* A fuzz target made to crash: on the input "CRASH", and on nothing else.
 * tests/fuzz/selftest/replay_test.sh runs tests/lib/fuzz_run.sh on it to
 * prove that a saved crashing input fails the run, before any fuzzing.
 * Not in tests/fuzz/ itself, so `make fuzz` and `make check` never fuzz it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 5 && !memcmp(data, "CRASH", 5))
		__builtin_trap();
	return 0;
}
