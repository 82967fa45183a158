// SPDX-License-Identifier: GPL-2.0
/* The reconcile planner. */
#include <string.h>

#include "unit.h"
#include "../../agent/plan.h"

#define DATA1 "0 131072 linear 254:0 131072"
#define DATA2 "0 131072 linear 254:0 131072\n131072 131072 linear 254:0 393216"
#define TOP1 "0 131072 sluice 253:1 0 2 rbps=1048576 pool=p"
#define TOP1_LIMITS "0 131072 sluice 253:1 0 3 riops=100 pool=p weight=300"
#define TOP1_OTHER_POOL "0 131072 sluice 253:1 0 1 pool=q"
#define TOP2 "0 262144 sluice 253:1 0 2 rbps=1048576 pool=p"
#define TOP1_GROUP(n) "0 131072 sluice 253:1 0 4 rbps=1048576 pool=p group=tenant.g group_iops=" n
#define TOP1_OTHER_GROUP "0 131072 sluice 253:1 0 4 rbps=1048576 pool=p group=tenant.h group_iops=500"

static struct ag_action *acts;
static size_t nacts;

static int plan(const struct ag_want *w, size_t nw, const struct ag_have *h, size_t nh)
{
	ag_plan_free(acts, nacts);
	acts = NULL;
	nacts = 0;
	return ag_plan(w, nw, h, nh, &acts, &nacts);
}

static bool is(size_t i, enum ag_action_kind k, const char *name, const char *arg)
{
	return i < nacts && acts[i].kind == k && !strcmp(acts[i].name, name) &&
	       (!arg ? !acts[i].arg : acts[i].arg && !strcmp(acts[i].arg, arg));
}

static void plan_creates_data_then_top(void)
{
	struct ag_want w = { "v1", DATA1, TOP1, false };

	CHECK(plan(&w, 1, NULL, 0) == 0);
	CHECK_EQ_U64(nacts, 2);
	CHECK(is(0, AG_CREATE, "sluice-v1-data", DATA1));
	CHECK(is(1, AG_CREATE, "sluice-v1", TOP1));
}

static void plan_nothing_when_converged(void)
{
	struct ag_want w[] = { { "v1", DATA1, TOP1, false }, { "v2", DATA2, TOP2, false } };
	struct ag_have h[] = {
		{ .name = "sluice-v2", .table = TOP2 }, { .name = "sluice-v1-data", .table = DATA1 }, { .name = "other", .table = "0 8 zero" },
		{ .name = "sluice-v1", .table = TOP1 }, { .name = "sluice-v2-data", .table = DATA2 },
	};

	CHECK(plan(w, 2, h, 5) == 0);
	CHECK_EQ_U64(nacts, 0);
}

static void plan_policy_drift_is_a_message(void)
{
	struct ag_want w = { "v1", DATA1, TOP1_LIMITS, false };
	struct ag_have h[] = { { .name = "sluice-v1-data", .table = DATA1 }, { .name = "sluice-v1", .table = TOP1 } };

	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK_EQ_U64(nacts, 1);
	CHECK(acts[0].kind == AG_MESSAGE);
	CHECK(!strncmp(acts[0].arg, "set bps=0 rbps=0 wbps=0 iops=0 riops=100 ", 41));
	CHECK(strstr(acts[0].arg, " weight=300 reserve_iops=0 reserve_bps=0"));
	CHECK(!strstr(acts[0].arg, "pool="));
}

static void plan_pool_or_length_drift_is_a_reload(void)
{
	struct ag_want w = { "v1", DATA1, TOP1_OTHER_POOL, false };
	struct ag_want grown = { "v1", DATA2, TOP2, false };
	struct ag_have h[] = { { .name = "sluice-v1-data", .table = DATA1 }, { .name = "sluice-v1", .table = TOP1 } };

	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK_EQ_U64(nacts, 1);
	CHECK(is(0, AG_RELOAD, "sluice-v1", TOP1_OTHER_POOL));
	CHECK(plan(&grown, 1, h, 2) == 0);
	CHECK_EQ_U64(nacts, 2);
	CHECK(is(0, AG_RELOAD, "sluice-v1-data", DATA2));
	CHECK(is(1, AG_RELOAD, "sluice-v1", TOP2));
}


/*
 * A tenant's rate quotas are its group's limits: new ones are a message
 * that names every group key (a set leaves the group alone otherwise); a
 * group joined, left or another is a new table.
 */
static void plan_group_limits_are_a_message_the_group_a_reload(void)
{
	struct ag_want w = { "v1", DATA1, TOP1_GROUP("500"), false };
	struct ag_have h[] = { { .name = "sluice-v1-data", .table = DATA1 },
			       { .name = "sluice-v1", .table = TOP1_GROUP("1000") } };

	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK_EQ_U64(nacts, 1);
	CHECK(acts[0].kind == AG_MESSAGE && strstr(acts[0].arg, " group_iops=500 "));
	CHECK(strstr(acts[0].arg, " group_riops=0 ") && strstr(acts[0].arg, " group_burst_s=1"));
	h[1].table = TOP1;
	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK(is(0, AG_RELOAD, "sluice-v1", TOP1_GROUP("500")));
	h[1].table = TOP1_OTHER_GROUP;
	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK(is(0, AG_RELOAD, "sluice-v1", TOP1_GROUP("500")));
	w.sluice_table = TOP1;
	h[1].table = TOP1_GROUP("500");
	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK(is(0, AG_RELOAD, "sluice-v1", TOP1));
}

static void plan_a_foreign_table_is_a_reload(void)
{
	struct ag_want w = { "v1", DATA1, TOP1, false };
	struct ag_have h[] = { { .name = "sluice-v1-data", .table = DATA1 }, { .name = "sluice-v1", .table = "0 131072 linear 253:1 0" } };

	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK_EQ_U64(nacts, 1);
	CHECK(is(0, AG_RELOAD, "sluice-v1", TOP1));
}

static void plan_delete_top_then_data(void)
{
	struct ag_want w = { "v1", DATA1, TOP1, true };
	struct ag_have h[] = { { .name = "sluice-v1-data", .table = DATA1 }, { .name = "sluice-v1", .table = TOP1 } };
	struct ag_have half[] = { { .name = "sluice-v1-data", .table = DATA1 } };

	CHECK(plan(&w, 1, h, 2) == 0);
	CHECK_EQ_U64(nacts, 2);
	CHECK(is(0, AG_REMOVE, "sluice-v1", NULL));
	CHECK(is(1, AG_REMOVE, "sluice-v1-data", NULL));
	CHECK(plan(&w, 1, half, 1) == 0);
	CHECK_EQ_U64(nacts, 1);
	CHECK(is(0, AG_REMOVE, "sluice-v1-data", NULL));
	CHECK(plan(&w, 1, NULL, 0) == 0);
	CHECK_EQ_U64(nacts, 0);
}

static void plan_unknown_sluice_devices_reported_only(void)
{
	struct ag_want w = { "v1", DATA1, TOP1, false };
	struct ag_have h[] = {
		{ .name = "sluice-v1-data", .table = DATA1 }, { .name = "sluice-v1", .table = TOP1 }, { .name = "sluice-v10", .table = TOP1 },
		{ .name = "sluice-old-data", .table = DATA1 }, { .name = "vg-root", .table = "0 8 linear 8:0 0" },
	};
	size_t i;

	CHECK(plan(&w, 1, h, 5) == 0);
	CHECK_EQ_U64(nacts, 2);
	CHECK(is(0, AG_REPORT, "sluice-v10", "not in the store; left alone"));
	CHECK(is(1, AG_REPORT, "sluice-old-data", "not in the store; left alone"));
	for (i = 0; i < nacts; i++)
		CHECK(acts[i].kind != AG_REMOVE);
}

/* 1000 converged volumes: no action at all. */
static void plan_1000_unchanged_volumes_no_action(void)
{
	static struct ag_want w[1000];
	static struct ag_have h[2000];
	static char names[1000][3][32];
	size_t i;

	for (i = 0; i < 1000; i++) {
		snprintf(names[i][0], 32, "vol%zu", i);
		snprintf(names[i][1], 32, "sluice-vol%zu", i);
		snprintf(names[i][2], 32, "sluice-vol%zu-data", i);
		w[i] = (struct ag_want){ names[i][0], DATA1, TOP1, false };
		h[2 * i] = (struct ag_have){ .name = names[i][1], .table = TOP1 };
		h[2 * i + 1] = (struct ag_have){ .name = names[i][2], .table = DATA1 };
	}
	CHECK(plan(w, 1000, h, 2000) == 0);
	CHECK_EQ_U64(nacts, 0);
	ag_plan_free(acts, nacts);
	acts = NULL;
	nacts = 0;
}

static const struct unit_test tests[] = {
	UNIT_TEST(plan_creates_data_then_top),
	UNIT_TEST(plan_nothing_when_converged),
	UNIT_TEST(plan_policy_drift_is_a_message),
	UNIT_TEST(plan_pool_or_length_drift_is_a_reload),
	UNIT_TEST(plan_a_foreign_table_is_a_reload),
	UNIT_TEST(plan_group_limits_are_a_message_the_group_a_reload),
	UNIT_TEST(plan_delete_top_then_data),
	UNIT_TEST(plan_unknown_sluice_devices_reported_only),
	UNIT_TEST(plan_1000_unchanged_volumes_no_action),
};

UNIT_MAIN("plan", tests)
