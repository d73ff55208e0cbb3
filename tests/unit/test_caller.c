/* The rule that gives back the caller a frame-pointer walk loses at a
 * syscall (daemon/engine/caller.h), against this very process: where
 * libc's read() keeps its return address at each of its syscall
 * instructions, held to binutils' own reading of the same CFI (readelf
 * --debug-dump=frames-interp, the oracle); a function of ours built with
 * frame pointers (nothing to give back past its prologue); and which
 * candidate addresses go in as frame 1 (code of the process, not frame 1
 * already) and which never do (heap, stack, data, nothing, unknown pid). */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_test.h"
#include "engine/caller.h"
#include "sym/symbolize.h"
#include "translate/translate.h"

/* ---- the oracle ----------------------------------------------------- */

/* binutils' rule at link-time address vaddr of lib: the slot a stack top
 * would hold the return address in (word index, GT_RA_LR), GT_RA_NONE
 * when the frame is not addressed from the stack pointer; -100 when
 * readelf has no row for it. */
static int oracle_slot(const char *lib, uint64_t vaddr)
{
	char cmd[600], line[512], cfa[64] = "", ra[64] = "";
	char cols[16][16];
	int ncols = 0, found = 0, in_fde = 0, ra_col = -1;
	unsigned long long lo, hi, loc;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", lib);
	p = popen(cmd, "r");
	if (!p)
		return -100;
	while (fgets(line, sizeof(line), p)) {
		char *fde = strstr(line, " FDE cie=");

		if (fde && sscanf(strstr(fde, "pc=") + 3, "%llx..%llx", &lo, &hi) == 2) {
			if (found)
				break;
			in_fde = vaddr >= lo && vaddr < hi;
			/* an FDE without rows keeps the CIE's: x86-64 rsp+8 c-8 */
			if (in_fde)
				found = 1, strcpy(cfa, "rsp+8"), strcpy(ra, "c-8");
			continue;
		}
		if (!in_fde)
			continue;
		if (strstr(line, " LOC ")) { /* the header names the columns */
			char *tok = strtok(line, " \t\n");

			for (ncols = 0; tok && ncols < 16; tok = strtok(NULL, " \t\n"))
				snprintf(cols[ncols++], sizeof(cols[0]), "%s", tok);
			for (int i = 0; i < ncols; i++)
				if (!strcmp(cols[i], "ra") || !strcmp(cols[i], "x30"))
					ra_col = i;
			if (ra_col < 0)
				strcpy(ra, "s"); /* arm64: an unnamed x30 is unchanged */
			continue;
		}
		if (sscanf(line, "%llx", &loc) == 1 && loc <= vaddr && ncols) {
			char *tok = strtok(line, " \t\n");

			for (int i = 0; tok && i < ncols; i++, tok = strtok(NULL, " \t\n")) {
				if (i == 1)
					snprintf(cfa, sizeof(cfa), "%s", tok);
				if (i == ra_col)
					snprintf(ra, sizeof(ra), "%s", tok);
			}
		}
	}
	pclose(p);
	if (!found)
		return -100;
	if (!strcmp(ra, "s") || !strcmp(ra, "u")) /* same value: x30 holds it */
		return GT_RA_LR;
	long k, off;
	if ((sscanf(cfa, "rsp+%ld", &k) != 1 && sscanf(cfa, "sp+%ld", &k) != 1) ||
	    sscanf(ra, "c%ld", &off) != 1)
		return GT_RA_NONE;
	return (k + off) % 8 || (k + off) / 8 >= GT_UTOP_WORDS ? GT_RA_NONE : (int)((k + off) / 8);
}

/* ---- libc's read() ---------------------------------------------------- */

/* The addresses just after each syscall instruction of the function at
 * fn (size bytes): where a stack taken at that syscall has frame 0. */
static int syscall_sites(const uint8_t *fn, size_t size, uint64_t *out, int max)
{
	int n = 0;

#if defined(__x86_64__)
	for (size_t i = 0; i + 2 <= size && n < max; i++)
		if (fn[i] == 0x0f && fn[i + 1] == 0x05)
			out[n++] = (uint64_t)(uintptr_t)(fn + i + 2);
#elif defined(__aarch64__)
	for (size_t i = 0; i + 4 <= size && n < max; i += 4) {
		uint32_t insn;

		memcpy(&insn, fn + i, 4);
		if (insn == 0xd4000001) /* svc #0 */
			out[n++] = (uint64_t)(uintptr_t)(fn + i + 4);
	}
#endif
	return n;
}

/* libc's own read(), not a sanitizer's interceptor of it. */
static void *libc_read(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "read") : NULL;

	if (libc)
		dlclose(libc);
	return fn;
}

/* The symbolizer of this process for one test case (freed by it). */
static struct gt_symbolizer *self_symbolizer(void)
{
	struct gt_symbolizer *s = gt_symbolizer_new();
	int rc = s ? gt_symbolizer_add_process(s, getpid()) : -ENOMEM;

	GT_CHECK(rc == 0, "symbolizer of this process: %s", strerror(-rc));
	if (rc && s) {
		gt_symbolizer_free(s);
		s = NULL;
	}
	return s;
}

static void check_read_slots(struct gt_symbolizer *s)
{
	void *fn = libc_read();
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	uint64_t sites[16];
	int n, on_sp0 = 0;

	GT_REQUIRE(fn, "no read() in libc.so.6: %s", dlerror());
	GT_REQUIRE(dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size,
		   "dladdr1(read) gave no symbol size");
	n = syscall_sites(fn, sym->st_size, sites, 16);
	GT_REQUIRE(n > 0, "no syscall instruction in read() (%s)", info.dli_fname);
	for (int i = 0; i < n; i++) {
		uint64_t vaddr = sites[i] - (uint64_t)(uintptr_t)info.dli_fbase;
		int want = oracle_slot(info.dli_fname, vaddr);
		int got = gt_caller_slot(s, (uint32_t)getpid(), sites[i]);

		GT_CHECK(want != -100, "readelf has no row for %s+%#llx", info.dli_fname,
			 (unsigned long long)vaddr);
		GT_CHECK(got == want, "read()'s syscall at %s+%#llx: slot %d, readelf says %d",
			 info.dli_fname, (unsigned long long)vaddr, got, want);
		on_sp0 += got == 0 || got == GT_RA_LR;
	}
	/* Debian's libc: read() pushes nothing on its single-threaded path */
	GT_CHECK(on_sp0 > 0, "no syscall of read() with its return address at sp or in LR");
}

static void test_libc_read_slots(void)
{
	struct gt_symbolizer *s = self_symbolizer();

	if (s)
		check_read_slots(s);
	gt_symbolizer_free(s);
}

/* ---- a function with a frame pointer ------------------------------------ */

__attribute__((noinline)) static uint64_t return_address(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

/* Built with -fno-omit-frame-pointer (the tests' CFLAGS): past its
 * prologue its frame is addressed from the frame pointer. */
__attribute__((noinline)) static uint64_t with_frame_pointer(void)
{
	volatile uint64_t r = return_address();

	return r;
}

static void test_frame_pointer_function(void)
{
	struct gt_symbolizer *s = self_symbolizer();
	uint64_t body = with_frame_pointer();
	uint64_t entry = (uint64_t)(uintptr_t)with_frame_pointer;
	int slot;

	if (!s)
		return;
	slot = gt_caller_slot(s, (uint32_t)getpid(), body);
	GT_CHECK(slot == GT_RA_NONE, "inside a frame-pointer function: slot %d", slot);
	/* at its first instruction nothing is pushed yet */
	slot = gt_caller_slot(s, (uint32_t)getpid(), entry);
#if defined(__aarch64__)
	GT_CHECK(slot == GT_RA_LR, "at a function's entry: slot %d, want the link register", slot);
#else
	GT_CHECK(slot == 0, "at a function's entry: slot %d, want the word at sp", slot);
#endif
	/* no mapping, no CFI */
	slot = gt_caller_slot(s, (uint32_t)getpid(), 0x10);
	GT_CHECK(slot == GT_RA_NONE, "at an unmapped address: slot %d", slot);
	slot = gt_caller_slot(s, (uint32_t)getpid(), 0);
	GT_CHECK(slot == GT_RA_NONE, "at address 0: slot %d", slot);
	gt_symbolizer_free(s);
}

/* ---- which candidates go in ---------------------------------------------- */

static const char rodata[] = "not code";

static void check_insert(struct gt_symbolizer *s, void *heap);

static void test_insert(void)
{
	struct gt_symbolizer *s = self_symbolizer();
	void *heap = malloc(64);

	if (s && heap)
		check_insert(s, heap);
	free(heap);
	gt_symbolizer_free(s);
}

static void check_insert(struct gt_symbolizer *s, void *heap)
{
	uint32_t me = (uint32_t)getpid();
	uint64_t frame0 = (uint64_t)(uintptr_t)libc_read() + 4;
	uint64_t code = with_frame_pointer(); /* a real return address of ours */
	uint64_t grand = (uint64_t)(uintptr_t)test_insert + 8;
	uint64_t ips[4];
	int local, n;

#define RESET() (ips[0] = frame0, ips[1] = grand, ips[2] = 0, ips[3] = 0)
	RESET();
	n = gt_caller_insert(s, me, ips, 2, 4, code);
	GT_CHECK(n == 3 && ips[0] == frame0 && ips[1] == code && ips[2] == grand,
		 "a return address in our code: n %d [%#llx %#llx %#llx]", n,
		 (unsigned long long)ips[0], (unsigned long long)ips[1], (unsigned long long)ips[2]);
	RESET();
	n = gt_caller_insert(s, me, ips, 1, 4, code);
	GT_CHECK(n == 2 && ips[1] == code, "after a lone frame 0: n %d", n);

	const struct { const char *what; uint64_t caller; int n, max; } never[] = {
		{"nothing", 0, 2, 4},
		{"a heap address", (uint64_t)(uintptr_t)heap, 2, 4},
		{"a stack address", (uint64_t)(uintptr_t)&local, 2, 4},
		{"read-only data", (uint64_t)(uintptr_t)rodata, 2, 4},
		{"below every mapping", 0x1000, 2, 4},
		{"frame 1 already", grand, 2, 4},
		{"a full stack", code, 4, 4},
		{"an empty stack", code, 0, 4},
	};
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++) {
		RESET();
		n = gt_caller_insert(s, me, ips, never[i].n, never[i].max, never[i].caller);
		GT_CHECK(n == never[i].n && ips[0] == frame0 && ips[1] == grand,
			 "%s went in: n %d ips[1] %#llx", never[i].what, n,
			 (unsigned long long)ips[1]);
	}
	/* a process the symbolizer never read: nothing is known of it */
	RESET();
	n = gt_caller_insert(s, me + 1, ips, 2, 4, code);
	GT_CHECK(n == 2 && ips[1] == grand, "an unknown process got a caller: n %d", n);
}

/* The translator's pick from a stack top: only words BPF could read. */
static void test_pick(void)
{
	struct gt_utop top = {.lr = 0x7000, .nwords = GT_UTOP_WORDS};

	for (int i = 0; i < GT_UTOP_WORDS; i++)
		top.words[i] = 0x1000 + (uint64_t)i;
	GT_CHECK(gt_utop_pick(&top, 0) == 0x1000, "word 0");
	GT_CHECK(gt_utop_pick(&top, 5) == 0x1005, "word 5");
	GT_CHECK(gt_utop_pick(&top, GT_RA_LR) == 0x7000, "link register");
	GT_CHECK(gt_utop_pick(&top, GT_RA_NONE) == 0, "no slot");
	GT_CHECK(gt_utop_pick(&top, GT_UTOP_WORDS) == 0, "past the words");
	top.nwords = 0;
	GT_CHECK(gt_utop_pick(&top, 0) == 0, "words BPF could not read");
}

int main(void)
{
	GT_RUN(test_libc_read_slots);
	GT_RUN(test_frame_pointer_function);
	GT_RUN(test_insert);
	GT_RUN(test_pick);
	return gt_test_done();
}
