/* format/util/: the one id map against a plain array (random inserts,
 * lookups and deletes, deleting while iterating too), wide keys, the
 * zeroed struct as a set; the one interner's ids, stable copies and
 * reserved ids; the one escaper of user text (every C0, C1, DEL and
 * invalid UTF-8 byte shown, well-formed UTF-8 kept, cut at whole escapes). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_test.h"
#include "util/gt_escape.h"
#include "util/gt_idmap.h"
#include "util/gt_strset.h"

#define N 5000

static void test_against_array(void)
{
	static uint32_t ref[N]; /* 0 absent, else value */
	struct gt_idmap m;
	uint64_t seed = 0x1234567;

	memset(ref, 0, sizeof(ref));
	gt_idmap_init(&m, 1, sizeof(uint32_t));
	for (int step = 0; step < 200000; step++) {
		uint64_t k;
		int isnew;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		k = (seed >> 33) % N;
		if ((seed >> 20) % 3 == 0) {
			int had = ref[k] != 0;

			GT_REQUIRE(gt_idmap_del(&m, k * 0x10000 + 7) == had, "del %llu", (unsigned long long)k);
			ref[k] = 0;
		} else {
			uint32_t *v = gt_idmap_put(&m, k * 0x10000 + 7, &isnew);

			GT_REQUIRE(v && isnew == (ref[k] == 0), "put %llu", (unsigned long long)k);
			GT_REQUIRE(isnew ? *v == 0 : *v == ref[k], "value kept");
			*v = ref[k] = (uint32_t)step + 1;
		}
	}
	size_t count = 0;
	for (uint64_t k = 0; k < N; k++) {
		uint32_t *v = gt_idmap_get(&m, k * 0x10000 + 7);

		count += ref[k] != 0;
		GT_CHECK(ref[k] ? v && *v == ref[k] : !v, "key %llu", (unsigned long long)k);
	}
	GT_CHECK(m.count == count, "count %zu vs %zu", m.count, count);
	/* deleting every key while iterating visits each once */
	size_t seen = 0;
	for (size_t i = 0; i < m.cap; i++)
		if (gt_idmap_full(&m, i)) {
			seen++;
			GT_REQUIRE(gt_idmap_del(&m, gt_idmap_key(&m, i)[0]) == 1, "del in loop");
		}
	GT_CHECK(seen == count && m.count == 0, "seen %zu of %zu", seen, count);
	gt_idmap_free(&m);
}

static void test_wide_keys(void)
{
	struct gt_idmap m;
	int isnew;

	gt_idmap_init(&m, 3, sizeof(uint64_t));
	for (uint64_t a = 0; a < 20; a++)
		for (uint64_t b = 0; b < 20; b++) {
			uint64_t key[3] = {a, b, a ^ b}, *v = gt_idmap_insert(&m, key, &isnew);

			GT_REQUIRE(v && isnew, "insert");
			*v = a * 100 + b;
		}
	for (uint64_t a = 0; a < 20; a++)
		for (uint64_t b = 0; b < 20; b++) {
			uint64_t key[3] = {a, b, a ^ b}, other[3] = {a, b, a ^ b ^ 1};
			uint64_t *v = gt_idmap_find(&m, key);

			GT_CHECK(v && *v == a * 100 + b, "find %llu %llu", (unsigned long long)a,
				 (unsigned long long)b);
			GT_CHECK(!gt_idmap_find(&m, other) || (a ^ b ^ 1) == (a ^ b), "third word");
		}
	gt_idmap_free(&m);
}

static void test_zeroed_is_a_set(void)
{
	struct gt_idmap s;
	int isnew;

	memset(&s, 0, sizeof(s));
	GT_CHECK(!gt_idmap_get(&s, 5) && gt_idmap_del(&s, 5) == 0, "empty");
	GT_CHECK(gt_idmap_put(&s, 5, &isnew) && isnew, "add");
	GT_CHECK(gt_idmap_put(&s, 5, &isnew) && !isnew, "add again");
	GT_CHECK(gt_idmap_get(&s, 5) && !gt_idmap_get(&s, 6), "has");
	GT_CHECK(gt_idmap_del(&s, 5) == 1 && !gt_idmap_get(&s, 5), "del");
	gt_idmap_free(&s);
}

static void test_strset(void)
{
	struct gt_strset s;
	const void *first = NULL, *copy;
	char buf[32];
	uint64_t id, rid;
	size_t len;

	memset(&s, 0, sizeof(s));
	GT_CHECK(gt_strset_add(&s, "", 0, &id, NULL) == -EINVAL, "empty refused");
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(buf, sizeof(buf), "name-%d", i % 7000);

		GT_REQUIRE(gt_strset_add(&s, buf, (size_t)n, &id, &copy) == 0, "add");
		GT_REQUIRE(id == (uint64_t)(i % 7000) + 1, "id %llu is the rank of %s",
			   (unsigned long long)id, buf);
		GT_REQUIRE(!strcmp(copy, buf), "NUL-terminated copy");
		if (i == 0)
			first = copy;
	}
	GT_CHECK(s.n == 7000, "%zu entries", s.n);
	GT_CHECK(gt_strset_get(&s, 1, &len) == first && len == 6, "copies never move");
	GT_CHECK(!gt_strset_get(&s, 0, &len) && !gt_strset_get(&s, 7001, &len), "unknown ids");
	/* a big one, and one with a NUL inside */
	static char big[100000];
	memset(big, 'b', sizeof(big));
	GT_CHECK(gt_strset_add(&s, big, sizeof(big), &id, &copy) == 0 && id == 7001 &&
		 !memcmp(copy, big, sizeof(big)), "big");
	GT_CHECK(gt_strset_add(&s, "a\0b", 3, &id, NULL) == 0 && id == 7002, "NUL inside");
	GT_CHECK(gt_strset_find(&s, "a\0b", 3) == 7002 && gt_strset_find(&s, "a\0d", 3) == 0 &&
		 s.n == 7002, "find adds nothing");
	GT_CHECK(gt_strset_add(&s, "a\0c", 3, &id, NULL) == 0 && id == 7003, "differs after NUL");
	/* reserved: an id now, contents later, never found by contents */
	GT_REQUIRE(gt_strset_reserve(&s, &rid) == 0 && rid == 7004, "reserve");
	GT_CHECK(!gt_strset_get(&s, rid, &len), "reserved: nothing yet");
	GT_CHECK(gt_strset_define(&s, rid, "name-1", 6) == 0, "define");
	GT_CHECK(gt_strset_define(&s, rid, "name-1", 6) == -EALREADY, "define twice");
	GT_CHECK(gt_strset_define(&s, 2, "x", 1) == -EINVAL, "define an interned id");
	GT_CHECK(gt_strset_add(&s, "name-1", 6, &id, NULL) == 0 && id == 2, "found by contents: %llu",
		 (unsigned long long)id);
	copy = gt_strset_get(&s, rid, &len);
	GT_CHECK(copy && len == 6 && !memcmp(copy, "name-1", 6), "defined contents");
	gt_strset_free(&s);
}

/* gt_escape: what each hostile byte becomes (docs/security.md, "Text from
 * users"), and that no output byte is a control byte. */
static void test_escape(void)
{
	static const struct { const char *in; size_t n; const char *want; } cases[] = {
		{ "plain text 1.2", 0, "plain text 1.2" },
		{ "x\033]0;OWNED\a\n99 root", 0, "x\\e]0;OWNED\\a\\n99 root" },
		{ "a\\b", 0, "a\\\\b" },
		{ "\t\r\v\f\b", 0, "\\t\\r\\v\\f\\b" },
		{ "\x01\x1f\x7f", 0, "\\x01\\x1f\\x7f" },
		{ "nul\0x", 5, "nul\\x00x" },
		{ "csi\x9b" "31m", 0, "csi\\x9b31m" },            /* 8-bit CSI, not UTF-8 */
		{ "c1\xc2\x9b" "31m", 0, "c1\\u009b31m" },          /* U+009B as UTF-8 */
		{ "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 0,
		  "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80" }, /* kept */
		{ "\xc0\xaf", 0, "\\xc0\\xaf" },                    /* overlong '/' */
		{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80" },           /* surrogate */
		{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80" },  /* > U+10FFFF */
		{ "cut\xe6\x97", 0, "cut\\xe6\\x97" },              /* truncated */
		{ "rtl\xe2\x80\xae" "fdp.exe", 0, "rtl\\u202efdp.exe" },
		{ "ls\xe2\x80\xa8x", 0, "ls\\u2028x" },
	};
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t n = cases[i].n ? cases[i].n : strlen(cases[i].in);
		size_t k = gt_escape(out, sizeof(out), cases[i].in, n);

		GT_CHECK(k == strlen(out) && !strcmp(out, cases[i].want), "case %zu: '%s' not '%s'",
			 i, out, cases[i].want);
		GT_CHECK(gt_escape_needed(cases[i].in, n) == !!strcmp(cases[i].in, cases[i].want),
			 "case %zu: needed", i);
	}
	/* cut at a whole escape, never inside one */
	GT_CHECK(gt_escape(out, 7, "ab\033cd", 5) == 6 && !strcmp(out, "ab\\ecd"), "fits");
	GT_CHECK(gt_escape(out, 4, "ab\033cd", 5) == 2 && !strcmp(out, "ab"), "cut: '%s'", out);
	GT_CHECK(!strcmp(gt_esc(out, sizeof(out), NULL), ""), "NULL is empty");
	/* every byte pair: the output holds no control byte and stays in bounds */
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b += 7) {
			char in[3] = { (char)a, (char)b, (char)0x9b };
			char big[GT_ESCAPE_SIZE(3)];
			size_t k = gt_escape(big, sizeof(big), in, 3);

			for (size_t j = 0; j < k; j++) {
				unsigned char c = (unsigned char)big[j];

				GT_REQUIRE(c >= 0x20 && c != 0x7f, "%02x %02x: byte %02x out", a, b, c);
			}
			GT_REQUIRE(k < sizeof(big), "%02x %02x: %zu bytes", a, b, k);
		}
}

int main(void)
{
	GT_RUN(test_strset);
	GT_RUN(test_escape);
	GT_RUN(test_against_array);
	GT_RUN(test_wide_keys);
	GT_RUN(test_zeroed_is_a_set);
	return gt_test_done();
}
