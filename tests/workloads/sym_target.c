/* sym_target: a PIE program for the symbolizer test.  It prints where its
 * own function and libc's write() live, then waits for EOF on stdin so the
 * test can snapshot it, kill it, and symbolize those addresses afterwards.
 *
 *   stdout: `leaf ADDR LINE` (function address and its definition line),
 *           `write ADDR`, then `ready`.
 */
#include <stdio.h>
#include <unistd.h>

#include "wl_common.h"

static const int leaf_line = __LINE__ + 2; /* the line naming the function */
__attribute__((noinline))
int sym_target_leaf(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	char c;

	wl_say("leaf %p %d\n", (void *)sym_target_leaf, leaf_line);
	wl_say("write %p\n", (void *)write);
	wl_say("ready %d\n", sym_target_leaf(1));
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
