/* uwalk_chains [--wait] ROUNDS: blocks (short nanosleeps) at user stacks
 * made to test every path of the BPF frame walk (bpf/compat.bpf.h
 * gt_uframe_at, which reads the stack a window at a time): real frames,
 * up to past GT_STACK_DEPTH deep, of sizes that spread them over many
 * windows and pages; and on x86-64 frame chains built by hand, blocked on
 * with rbp pointing at them: frames 8 bytes off alignment, astride two
 * windows, astride a page and an unmapped one, a chain that goes down
 * the stack, one that loops on itself, one that ends in an unmapped page,
 * one that ends on a low address.  test_capture records it with both
 * walks compared (GT_PARTS_UWALK_CHECK): the keys must be the same.
 * Prints `blocks N` (the nanosleeps done) before `done`. */
#include <sys/mman.h>

#include "wl_common.h"

#define WIN 1024  /* bpf/compat.bpf.h GT_UWALK_WIN */
#define PAGE 4096

static long blocks;

static void block(void)
{
	struct timespec ts = { 0, 20000 };

	nanosleep(&ts, NULL);
	blocks++;
}

/* Real frames: depth levels, each with a frame of its own size. */
__attribute__((noinline)) static void deep(int depth, int salt)
{
	volatile char pad[(depth * 97 + salt * 61) % 700 + 16];

	pad[0] = (char)depth;
	if (depth > 0)
		deep(depth - 1, salt);
	else
		block();
	pad[sizeof(pad) - 1] = pad[0];
}

#if defined(__x86_64__)
/* A nanosleep with rbp = fp: the frame chain the walk follows is the one
 * at fp.  Below the red zone, rbp saved and put back around the syscall. */
static void block_at(void *fp)
{
	struct timespec ts = { 0, 20000 };
	long ret;

	__asm__ volatile("sub $128, %%rsp\n\t"
			 "push %%rbp\n\t"
			 "mov %[fp], %%rbp\n\t"
			 "syscall\n\t"
			 "pop %%rbp\n\t"
			 "add $128, %%rsp"
			 : "=a"(ret)
			 : "a"((long)SYS_nanosleep), "D"(&ts), "S"(0L), [fp] "r"(fp)
			 : "rcx", "r11", "memory");
	(void)ret;
	blocks++;
}

/* A frame at p: {next, ret}. */
static void frame(char *p, uint64_t next, uint64_t ret)
{
	memcpy(p, &next, 8);
	memcpy(p + 8, &ret, 8);
}

static void chains(void)
{
	/* two pages mapped, the third not: a frame astride them is unreadable */
	char *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a, *unmapped;

	if (m == MAP_FAILED)
		wl_die("mmap");
	a = m;                 /* pages 0, 1: mapped */
	unmapped = m + 2 * PAGE;
	if (munmap(unmapped, PAGE))
		wl_die("munmap");
	memset(a, 0, 2 * PAGE);
	/* up the stack, across both windows and the page: 16-aligned, then
	 * 8 off alignment, then astride a window (at WIN - 8), then on */
	frame(a + 16, (uint64_t)(a + 200), 0x1001);
	frame(a + 200, (uint64_t)(a + 203), 0x1002);       /* next unaligned */
	frame(a + 203, (uint64_t)(a + WIN - 8), 0x1003);
	frame(a + WIN - 8, (uint64_t)(a + PAGE + 48), 0x1004); /* astride */
	frame(a + PAGE + 48, (uint64_t)(a + 64), 0x1005);  /* down the stack */
	frame(a + 64, (uint64_t)(a + 2 * PAGE - 8), 0x1006);
	memcpy(a + 2 * PAGE - 8, &(uint64_t){0}, 8);      /* astride the hole */
	block_at(a + 16);
	/* ends in the unmapped page itself */
	frame(a + 300, (uint64_t)(unmapped + 16), 0x2001);
	block_at(a + 300);
	/* ends on a low address (unmapped under 512 GiB: stops before it) */
	frame(a + 400, 4096, 0x3001);
	block_at(a + 400);
	/* a loop: to the depth limit */
	frame(a + 512, (uint64_t)(a + 528), 0x4001);
	frame(a + 528, (uint64_t)(a + 512), 0x4002);
	block_at(a + 512);
	/* a frame at the very end of a window, then the next window's start */
	frame(a + WIN - 16, (uint64_t)(a + WIN), 0x5001);
	frame(a + WIN, 0, 0x5002);
	block_at(a + WIN - 16);
	munmap(m, 2 * PAGE);
}
#else
static void chains(void)
{
}
#endif

int main(int argc, char **argv)
{
	int wait = wl_take_wait_flag(&argc, &argv);
	long rounds = wl_arg(argc, argv, 1, 20);

	wl_say("pid %d\n", (int)getpid());
	wl_announce("uwalk");
	wl_wait_go(wait);
	for (long r = 0; r < rounds; r++) {
		deep((int)(r * 7 % 150), (int)r);
		chains();
	}
	wl_say("blocks %ld\n", blocks);
	wl_wait_end(wait);
	return 0;
}
