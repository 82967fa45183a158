// SPDX-License-Identifier: GPL-2.0
/* The agent's extent allocator. */
#include <errno.h>
#include <stdlib.h>

#include "unit.h"
#include "../../agent/extent.h"

static uint64_t total(const struct ag_run *r, size_t n)
{
	uint64_t t = 0;
	size_t i;

	for (i = 0; i < n; i++)
		t += r[i].count;
	return t;
}

static void extent_zero_is_the_label(void)
{
	struct ag_extmap m;
	struct ag_run *r = NULL;
	size_t n = 0;

	CHECK(ag_extmap_init(&m, 10) == 0);
	CHECK_EQ_U64(m.nr_free, 9);
	CHECK(ag_extmap_alloc(&m, 9, &r, &n) == 0);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(r[0].start, 1);
	CHECK_EQ_U64(r[0].count, 9);
	CHECK(ag_extmap_alloc(&m, 1, &r, &n) == -ENOSPC);
	CHECK_EQ_U64(n, 1);
	ag_extmap_release(&m, r, n);
	CHECK_EQ_U64(m.nr_free, 9);
	free(r);
	ag_extmap_destroy(&m);
}

static void extent_grows_in_place_then_elsewhere(void)
{
	struct ag_extmap m;
	struct ag_run *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	CHECK(ag_extmap_init(&m, 100) == 0);
	CHECK(ag_extmap_alloc(&m, 10, &a, &na) == 0);	/* 1..10 */
	CHECK(ag_extmap_alloc(&m, 5, &a, &na) == 0);	/* grows to 1..15 */
	CHECK_EQ_U64(na, 1);
	CHECK_EQ_U64(a[0].count, 15);
	CHECK(ag_extmap_alloc(&m, 10, &b, &nb) == 0);	/* 16..25 */
	CHECK_EQ_U64(b[0].start, 16);
	CHECK(ag_extmap_alloc(&m, 5, &a, &na) == 0);	/* cannot grow: a second run */
	CHECK_EQ_U64(na, 2);
	CHECK_EQ_U64(total(a, na), 20);
	CHECK(a[1].start >= 26);
	CHECK_EQ_U64(m.nr_free, 99 - 30);
	free(a);
	free(b);
	ag_extmap_destroy(&m);
}

/* Best fit: the smallest hole that holds the request. */
static void extent_best_fit(void)
{
	struct ag_extmap m;
	struct ag_run *v[6] = { NULL }, *x = NULL;
	size_t n[6] = { 0 }, nx = 0;
	int i;

	CHECK(ag_extmap_init(&m, 61) == 0);
	for (i = 0; i < 6; i++)
		CHECK(ag_extmap_alloc(&m, 10, &v[i], &n[i]) == 0);
	ag_extmap_release(&m, v[1], n[1]);	/* hole 11..20 (10) */
	ag_extmap_release(&m, v[3], n[3]);	/* hole 31..40 (10) */
	ag_extmap_release(&m, v[4], n[4]);	/* hole 31..50 (20) */
	CHECK(ag_extmap_alloc(&m, 8, &x, &nx) == 0);
	CHECK_EQ_U64(x[0].start, 11);
	free(x);
	x = NULL;
	nx = 0;
	/* 25 fits in no hole: the largest first, then the next */
	CHECK(ag_extmap_alloc(&m, 22, &x, &nx) == 0);
	CHECK_EQ_U64(nx, 2);
	CHECK_EQ_U64(x[0].start, 31);
	CHECK_EQ_U64(x[0].count, 20);
	CHECK_EQ_U64(total(x, nx), 22);
	CHECK_EQ_U64(m.nr_free, 0);
	for (i = 0; i < 6; i++)
		free(v[i]);
	free(x);
	ag_extmap_destroy(&m);
}

/* Rebuilding from a store: overlaps and out-of-range runs are refused whole. */
static void extent_mark_refuses_bad_runs(void)
{
	struct ag_extmap m;
	struct ag_run ok[] = { { 1, 4 }, { 10, 2 } };
	struct ag_run overlap[] = { { 20, 5 }, { 3, 1 } };
	struct ag_run self[] = { { 30, 5 }, { 32, 1 } };
	struct ag_run label[] = { { 0, 1 } };
	struct ag_run past[] = { { 40, 11 } };
	struct ag_run wrap[] = { { 2, UINT64_MAX } };

	CHECK(ag_extmap_init(&m, 50) == 0);
	CHECK(ag_extmap_mark(&m, ok, 2) == 0);
	CHECK_EQ_U64(m.nr_free, 49 - 6);
	CHECK(ag_extmap_mark(&m, overlap, 2) == -EEXIST);
	CHECK(ag_extmap_mark(&m, self, 2) == -EEXIST);
	CHECK(ag_extmap_mark(&m, label, 1) == -ERANGE);
	CHECK(ag_extmap_mark(&m, past, 1) == -ERANGE);
	CHECK(ag_extmap_mark(&m, wrap, 1) == -ERANGE);
	CHECK_EQ_U64(m.nr_free, 49 - 6);	/* nothing marked by the failures */
	ag_extmap_destroy(&m);
}

/* Random allocs and frees never hand out an extent twice or lose one. */
static void extent_random_churn(void)
{
	enum { V = 40, N = 1000 };
	struct ag_extmap m;
	struct ag_run *r[V] = { NULL };
	size_t n[V] = { 0 };
	static unsigned char owner[N];
	uint64_t seed = 12345;
	int step, i;

	CHECK(ag_extmap_init(&m, N) == 0);
	for (step = 0; step < 20000; step++) {
		int v;
		uint64_t want, used = 0;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		v = (int)((seed >> 33) % V);
		want = (seed >> 13) % 40 + 1;
		if ((seed >> 7) % 3 == 0) {
			ag_extmap_release(&m, r[v], n[v]);
			free(r[v]);
			r[v] = NULL;
			n[v] = 0;
		} else {
			int rc = ag_extmap_alloc(&m, want, &r[v], &n[v]);

			CHECK(rc == 0 || rc == -ENOSPC);
		}
		for (i = 0; i < N; i++)
			owner[i] = 0;
		for (i = 0; i < V; i++) {
			size_t k;
			uint64_t e;

			for (k = 0; k < n[i]; k++)
				for (e = r[i][k].start; e < r[i][k].start + r[i][k].count; e++) {
					CHECK(e >= 1 && e < N);
					CHECK(!owner[e]);
					owner[e] = 1;
					used++;
				}
		}
		CHECK_EQ_U64(used + m.nr_free + 1, N);
	}
	for (i = 0; i < V; i++)
		free(r[i]);
	ag_extmap_destroy(&m);
}

static const struct unit_test tests[] = {
	UNIT_TEST(extent_zero_is_the_label),
	UNIT_TEST(extent_grows_in_place_then_elsewhere),
	UNIT_TEST(extent_best_fit),
	UNIT_TEST(extent_mark_refuses_bad_runs),
	UNIT_TEST(extent_random_churn),
};

UNIT_MAIN("extent", tests)
