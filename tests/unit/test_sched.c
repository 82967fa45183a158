// SPDX-License-Identifier: GPL-2.0
/* The pool scheduler's heap and tags, case by case. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../dmtarget/sluice-sched.h"

#define MS 1000000ULL

static u64 seed = 88172645463325252ULL;

static u64 rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* Random pushes, removes and key changes; the top is always the minimum. */
static void heap_matches_linear_scan(void)
{
	enum { N = 500 };
	static struct sl_heap_node nodes[N], *v[N];
	struct sl_heap h = { .v = v, .cap = N };
	int i, step;

	for (i = 0; i < N; i++)
		nodes[i].idx = U32_MAX;
	for (step = 0; step < 200000; step++) {
		struct sl_heap_node *n = &nodes[rnd() % N], *min = NULL;

		switch (rnd() % 3) {
		case 0:
			if (!sl_heap_in(n)) {
				/* keys near the wrap point, within 2^62 of each other */
				n->key = U64_MAX - (1ULL << 40) + (rnd() % (1ULL << 41));
				sl_heap_push(&h, n);
			}
			break;
		case 1:
			sl_heap_remove(&h, n);
			break;
		default:
			if (sl_heap_in(n)) {
				n->key += (rnd() % (1ULL << 30)) - (1ULL << 29);
				sl_heap_update(&h, n);
			}
		}
		for (i = 0; i < N; i++)
			if (sl_heap_in(&nodes[i]) &&
			    (!min || (long long)(nodes[i].key - min->key) < 0))
				min = &nodes[i];
		CHECK(sl_heap_top(&h) == NULL ? min == NULL :
		      sl_heap_top(&h)->key == min->key);
		CHECK(h.nr <= N);
	}
}

struct pool {
	struct sl_sched s;
	struct sl_heap_node *w[8], *r[8];
	struct sl_sched_client c[8];
};

static void pool_init(struct pool *p, int n, const u32 *weights)
{
	int i;

	memset(p, 0, sizeof(*p));
	sl_sched_init(&p->s, p->w, p->r, 8);
	for (i = 0; i < n; i++)
		sl_sched_client_init(&p->c[i], weights[i], 0, 0);
}

/* Send n bios from whoever is picked; count per client. */
static void run(struct pool *p, int n, u64 *now, u64 step, unsigned int *count,
		const bool *backlogged)
{
	int k;

	for (k = 0; k < n; k++) {
		bool by_res;
		struct sl_sched_client *c = sl_sched_pick(&p->s, *now, &by_res);

		if (!c)
			return;
		count[c - p->c]++;
		sl_sched_sent(&p->s, c, by_res, SL_COST_IO, 4096,
			      backlogged[c - p->c], *now);
		*now += step;
	}
}

/* Weights 1:2:4 give exactly 1:2:4 over whole rounds. */
static void weights_share_exactly(void)
{
	static const u32 w[] = { 100, 200, 400 };
	static const bool all[] = { true, true, true };
	struct pool p;
	unsigned int count[3] = { 0 };
	u64 now = 0;
	int i;

	pool_init(&p, 3, w);
	for (i = 0; i < 3; i++)
		sl_sched_activate(&p.s, &p.c[i], now);
	run(&p, 7000, &now, MS, count, all);
	CHECK(count[0] >= 999 && count[0] <= 1001);
	CHECK(count[1] >= 1999 && count[1] <= 2001);
	CHECK(count[2] >= 3999 && count[2] <= 4001);
}

/*
 * A volume idle while the other ran returns at the current virtual time:
 * it shares from then on, it does not get back what it did not use.
 */
static void idle_brings_no_credit(void)
{
	static const u32 w[] = { 100, 100 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	sl_sched_activate(&p.s, &p.c[0], now);
	run(&p, 1000, &now, MS, count, all);
	CHECK_EQ_U64(count[0], 1000);
	sl_sched_activate(&p.s, &p.c[1], now);
	memset(count, 0, sizeof(count));
	run(&p, 100, &now, MS, count, all);
	CHECK(count[1] >= 49 && count[1] <= 51);
}

/*
 * A weight-1 volume with reserve_iops=100 beside a weight-1000 one gets its
 * 100 IO/s when the device does 1000 IO/s, and not more.
 */
static void reservation_is_met_and_not_exceeded(void)
{
	static const u32 w[] = { 1, 1000 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	sl_sched_client_set(&p.s, &p.c[0], 1, 100, 0, now);
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 10000, &now, MS, count, all);	/* 10 s at 1000 IO/s */
	CHECK(count[0] >= 995 && count[0] <= 1010);
	CHECK(p.s.by_reservation > 900);
}

/* Reservations bring no credit from idle either. */
static void reservation_after_idle_no_burst(void)
{
	static const u32 w[] = { 1, 1000 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	sl_sched_client_set(&p.s, &p.c[0], 1, 100, 0, now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 5000, &now, MS, count, all);	/* c0 idle for 5 s */
	sl_sched_activate(&p.s, &p.c[0], now);
	memset(count, 0, sizeof(count));
	run(&p, 100, &now, MS, count, all);	/* the next 100 ms */
	CHECK(count[0] <= 11);
}

/* Changing a weight while backlogged takes effect on the next bios. */
static void live_weight_change(void)
{
	static const u32 w[] = { 100, 100 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 1000, &now, MS, count, all);
	CHECK(count[0] >= 499 && count[0] <= 501);
	sl_sched_client_set(&p.s, &p.c[0], 300, 0, 0, now);
	memset(count, 0, sizeof(count));
	run(&p, 4000, &now, MS, count, all);
	CHECK(count[0] >= 2995 && count[0] <= 3005);
}

/* A volume that empties leaves both heaps; pick then finds the others. */
static void deactivate_leaves_heaps(void)
{
	static const u32 w[] = { 100, 100 };
	static const bool one_empties[] = { false, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;
	bool by_res;

	pool_init(&p, 2, w);
	sl_sched_client_set(&p.s, &p.c[0], 100, 10, 0, now);
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 10, &now, MS, count, one_empties);
	CHECK_EQ_U64(count[0], 1);
	CHECK_EQ_U64(count[1], 9);
	CHECK(!p.c[0].backlogged);
	CHECK(!sl_heap_in(&p.c[0].wnode) && !sl_heap_in(&p.c[0].rnode));
	CHECK(sl_sched_pick(&p.s, now, &by_res) == &p.c[1]);
	sl_sched_deactivate(&p.s, &p.c[1]);
	CHECK(sl_sched_pick(&p.s, now, &by_res) == NULL);
}

/* Cost: every bio the same in the iops model, bytes (capped) in the other. */
static void cost_models(void)
{
	struct sl_sched s;

	sl_sched_init(&s, NULL, NULL, 0);
	CHECK_EQ_U64(sl_sched_cost(&s, 65536), SL_COST_IO);
	s.cost_model = SL_COST_BYTES;
	CHECK_EQ_U64(sl_sched_cost(&s, 65536), 65536);
	CHECK_EQ_U64(sl_sched_cost(&s, 0), SL_COST_IO);
	CHECK_EQ_U64(sl_sched_cost(&s, 1ULL << 40), SL_COST_MAX);
}

/*
 * The pool's virtual time runs for months: a member that joins, or comes
 * back after a long idle, when vtime is past 2^63 must still be served by
 * weight (a finish tag of 0 sorted after every key once vtime passed 2^63).
 */
static void fresh_member_after_vtime_wrap(void)
{
	static const u32 w[] = { 100, 100 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	/* c0 has run all along; c1 is new */
	p.s.vtime = (1ULL << 63) + (1ULL << 40);
	p.c[0].finish = p.s.vtime;
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 1000000, &now, 1000, count, all);
	CHECK(count[0] >= 499990 && count[0] <= 500010);
	CHECK(count[1] >= 499990 && count[1] <= 500010);
}

/*
 * A member idle while vtime moved on by more than 2^63 (its finish tag now
 * looks far ahead) comes back at the pool's vtime, not behind the others.
 */
static void long_idle_member_returns_at_vtime(void)
{
	static const u32 w[] = { 100, 100 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 1000, &now, MS, count, all);
	sl_sched_deactivate(&p.s, &p.c[1]);
	/* months of c0 alone: vtime 2^63 + 2^50 past c1's finish tag */
	p.s.vtime = p.c[1].finish - (1ULL << 63) + (1ULL << 50);
	p.c[0].finish = p.s.vtime;
	p.c[0].wnode.key = p.s.vtime;
	sl_heap_update(&p.s.w, &p.c[0].wnode);
	sl_sched_activate(&p.s, &p.c[1], now);
	memset(count, 0, sizeof(count));
	run(&p, 1000, &now, MS, count, all);
	CHECK(count[1] >= 499 && count[1] <= 501);
}

/*
 * Weight 1 beside weight 10000 once vtime has taken 2^40 weight-1 steps,
 * across the wrap of the 64-bit virtual time: 1:10000 still.
 */
static void extreme_weights_across_wrap(void)
{
	static const u32 w[] = { 1, 10000 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0, start;

	pool_init(&p, 2, w);
	/* 2^40 - 50 dispatches at weight 1: 50 steps short of a wrap */
	p.s.vtime = ((1ULL << 40) - 50) * ((u64)SL_COST_IO << SL_VT_SHIFT);
	start = p.s.vtime;
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 1000010, &now, 1000, count, all);
	CHECK(p.s.vtime < start);	/* it wrapped */
	CHECK(count[0] >= 99 && count[0] <= 101);
	CHECK(count[1] >= 999909 && count[1] <= 999911);
}

/*
 * A reservation far above the device still moves its tag on with each
 * pick: in an instant the volume is picked by reservation once, and then
 * shares by weight (a step of 10^9 / 2^31 ns rounded to 0, the tag stayed
 * due and the volume took every pick).
 */
static void huge_reservation_tag_moves(void)
{
	static const u32 w[] = { 100, 100 };
	static const bool all[] = { true, true };
	struct pool p;
	unsigned int count[2] = { 0 };
	u64 now = 0;

	pool_init(&p, 2, w);
	sl_sched_client_set(&p.s, &p.c[0], 100, 1ULL << 31, 0, now);
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	run(&p, 1, &now, 0, count, all);
	CHECK(p.c[0].r_io > now);
	/* at most the window's worth by reservation in an instant */
	run(&p, 300000, &now, 0, count, all);
	CHECK(count[1] > 50000);
}

/*
 * A volume that idles right after a large step and comes back with a
 * higher weight keeps its finish tag: the step bound is the one that made
 * the tag, not the new weight's (which let it skip most of its charge).
 */
static void weight_raised_while_idle_keeps_its_charge(void)
{
	static const u32 w[] = { 1, 100 };
	struct pool p;
	u64 now = 0, finish;
	bool by_res;

	pool_init(&p, 2, w);
	sl_sched_activate(&p.s, &p.c[0], now);
	sl_sched_activate(&p.s, &p.c[1], now);
	CHECK(sl_sched_pick(&p.s, now, &by_res) == &p.c[0]);
	/* a 1 MiB bio at weight 1, in the bytes model: a step of 2^40 */
	sl_sched_sent(&p.s, &p.c[0], false, 1 << 20, 1 << 20, false, now);
	finish = p.c[0].finish;
	sl_sched_client_set(&p.s, &p.c[0], 10000, 0, 0, now);
	sl_sched_activate(&p.s, &p.c[0], now);
	CHECK_EQ_U64(p.c[0].wnode.key, finish);
}

/*
 * sl_sched_pass() leaves a client and the scheduler as sl_sched_activate()
 * then sl_sched_sent(by weight, no more) do, the heaps empty. Two pools in
 * lockstep: bios of idle clients passed (one way in each pool), between
 * rounds where all are backlogged and sent by pick (the same in both), with
 * weights and reservations changed live, costs and sizes drawn, and vtime
 * started near the wrap.
 */
static void pass_matches_activate_then_sent(void)
{
	static const u32 w[] = { 1, 100, 1000, 77 };
	static const bool all[] = { true, true, true, true };
	struct pool a, b;
	unsigned int count[4] = { 0 }, k, i;
	u64 now = 5 * MS;

	pool_init(&a, 4, w);
	pool_init(&b, 4, w);
	a.s.vtime = b.s.vtime = ~0ULL - (1ULL << 30);
	for (k = 0; k < 20000; k++) {
		struct sl_sched_client *ca, *cb;
		u64 bytes = 512ULL << (rnd() % 12), cost;

		now += rnd() % (2 * MS);
		i = rnd() % 4;
		ca = &a.c[i];
		cb = &b.c[i];
		if (rnd() % 50 == 0) {
			u32 nw = 1 + rnd() % 1000;
			u64 ri = rnd() % 3 ? 0 : rnd() % 5000, rb = rnd() % 3 ? 0 : rnd() % 100000000;

			sl_sched_client_set(&a.s, ca, nw, ri, rb, now);
			sl_sched_client_set(&b.s, cb, nw, ri, rb, now);
		}
		if (rnd() % 100 == 0) {
			/* a round with everyone backlogged */
			for (i = 0; i < 4; i++) {
				sl_sched_activate(&a.s, &a.c[i], now);
				sl_sched_activate(&b.s, &b.c[i], now);
			}
			run(&a, 40, &now, 10000, count, all);
			now -= 40 * 10000;
			run(&b, 40, &now, 10000, count, all);
			for (i = 0; i < 4; i++) {
				sl_sched_deactivate(&a.s, &a.c[i]);
				sl_sched_deactivate(&b.s, &b.c[i]);
			}
			continue;
		}
		a.s.cost_model = k % 2 ? SL_COST_BYTES : SL_COST_IOPS;
		b.s.cost_model = a.s.cost_model;
		cost = sl_sched_cost(&a.s, bytes);
		sl_sched_activate(&a.s, ca, now);
		sl_sched_sent(&a.s, ca, false, cost, bytes, false, now);
		sl_sched_pass(&b.s, cb, cost, bytes, now);
		CHECK_EQ_U64(b.s.vtime, a.s.vtime);
		CHECK_EQ_U64(b.s.by_weight, a.s.by_weight);
		CHECK_EQ_U64(cb->finish, ca->finish);
		CHECK_EQ_U64(cb->last_step, ca->last_step);
		CHECK_EQ_U64(cb->wnode.key, ca->wnode.key);
		CHECK_EQ_U64(cb->r_io, ca->r_io);
		CHECK_EQ_U64(cb->r_byte, ca->r_byte);
		CHECK(cb->fresh == ca->fresh && !cb->backlogged && !ca->backlogged);
		CHECK(!sl_heap_in(&cb->wnode) && !sl_heap_in(&cb->rnode));
	}
}

static const struct unit_test tests[] = {
	UNIT_TEST(heap_matches_linear_scan),
	UNIT_TEST(pass_matches_activate_then_sent),
	UNIT_TEST(weights_share_exactly),
	UNIT_TEST(idle_brings_no_credit),
	UNIT_TEST(reservation_is_met_and_not_exceeded),
	UNIT_TEST(reservation_after_idle_no_burst),
	UNIT_TEST(live_weight_change),
	UNIT_TEST(deactivate_leaves_heaps),
	UNIT_TEST(cost_models),
	UNIT_TEST(fresh_member_after_vtime_wrap),
	UNIT_TEST(long_idle_member_returns_at_vtime),
	UNIT_TEST(extreme_weights_across_wrap),
	UNIT_TEST(huge_reservation_tag_moves),
	UNIT_TEST(weight_raised_while_idle_keeps_its_charge),
};

UNIT_MAIN("sched", tests)
