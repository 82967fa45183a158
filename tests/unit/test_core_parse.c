// SPDX-License-Identifier: GPL-2.0
/* The table/message parser, validation and canonical form of sluice-core. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../dmtarget/sluice-core.h"

#define MAXW 32

/* Split a space-separated line into words (in a static buffer). */
static unsigned int split(const char *line, char **argv)
{
	static char buf[4096];
	unsigned int n = 0;
	char *p;

	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok(buf, " "); p && n < MAXW; p = strtok(NULL, " "))
		argv[n++] = p;
	return n;
}

static int parse(struct sl_config *cfg, enum sl_parse_mode mode, const char *line,
		 const char **err)
{
	char *argv[MAXW];
	const char *bad;
	unsigned int n = split(line, argv);

	return sl_config_parse(cfg, mode, n, argv, err, &bad);
}

static const char *canon(const char *line)
{
	static char out[SL_FORMAT_MAX];
	struct sl_config cfg;
	const char *err;

	sl_config_init(&cfg);
	if (parse(&cfg, SL_PARSE_TABLE, line, &err))
		return err;
	if (sl_config_format(&cfg, out, sizeof(out)) < 0)
		return "format overflow";
	return out;
}

static void defaults_are_valid_and_print_nothing(void)
{
	struct sl_config cfg;
	char out[SL_FORMAT_MAX];
	const char *err = NULL;

	sl_config_init(&cfg);
	CHECK(sl_config_validate(&cfg, &err) == 0);
	CHECK(sl_config_format(&cfg, out, sizeof(out)) == 0);
	CHECK(out[0] == '\0');
	CHECK(!sl_config_limited(&cfg));
}

static void canonical_order_and_defaults_left_out(void)
{
	CHECK(!strcmp(canon("wbps=5 rbps=7"), "rbps=7 wbps=5"));
	CHECK(!strcmp(canon("burst_s=1 iops=10 weight=100"), "iops=10"));
	CHECK(!strcmp(canon("tenant=acme bps=0 iops=0"), "tenant=acme"));
	CHECK(!strcmp(canon("tenant=t-1 wiops_max=20 wiops=10 burst_s=3 iops_size=4096 rbps=1"),
		      "rbps=1 wiops=10 wiops_max=20 burst_s=3 iops_size=4096 tenant=t-1"));
	CHECK(!strcmp(canon("tenant=a dirty_strict=1 wbps=5"), "wbps=5 dirty_strict=1 tenant=a"));
	CHECK(!strcmp(canon("dirty_strict=0 wbps=5"), "wbps=5"));
	CHECK(!strcmp(canon("group_iops=1000 riops=300 group=acme group_burst_s=1"),
		      "riops=300 group=acme group_iops=1000"));
}

static void canonical_form_parses_back_to_itself(void)
{
	static const char *const lines[] = {
		"bps=1048576 bps_max=8388608 burst_s=2",
		"rbps=1 wbps=2 riops=3 wiops=4 rbps_max=5 wbps_max=6 riops_max=7 wiops_max=8 burst_s=86400",
		"iops=18446744073709551615 iops_max=18446744073709551615 iops_size=4294967295 tenant=A.b_c-9",
		"bps=0",
		"",
		"group=acme",
		"iops=300 group=acme group_iops=1000 group_wbps=5 group_wbps_max=10 group_burst_s=4",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char first[SL_FORMAT_MAX];

		snprintf(first, sizeof(first), "%s", canon(lines[i]));
		CHECK(strchr(first, ':') == NULL);	/* no error text */
		CHECK(!strcmp(canon(first), first));
	}
}

static void limits_up_to_2_pow_64_minus_1(void)
{
	struct sl_config cfg;
	const char *err;

	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_TABLE, "bps=18446744073709551615", &err) == 0);
	CHECK_EQ_U64(cfg.avg[SL_BPS], UINT64_MAX);
	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_TABLE, "bps=18446744073709551616", &err) != 0);
	CHECK(!strcmp(err, "bps: invalid value"));
}

struct bad_case {
	const char *line;
	const char *err;
};

/* Each rejection names the argument. */
static const struct bad_case bad_table[] = {
	{ "group_iops=10", "group_iops: needs group" },
	{ "group_bps=0", "group_bps: needs group" },
	{ "group_burst_s=1", "group_burst_s: needs group" },
	{ "iops=5 group_wiops_max=0", "group_wiops_max: needs group" },
	{ "group_wbps=10 group_wbps_max=20 group_burst_s=2", "group_wbps: needs group" },
	{ "group=g group_bps=1 group_rbps=1", "group_bps: cannot be combined with group_rbps or group_wbps" },
	{ "group=g group_iops_max=5", "group_iops_max: needs group_iops" },
	{ "group=g group_riops=5 group_riops_max=4", "group_riops_max: must not be below group_riops" },
	{ "group=g group_iops=5 group_burst_s=2", "group_burst_s: needs a group _max limit" },
	{ "group=g group_burst_s=0", "group_burst_s: invalid value" },
	{ "group=a/b", "group: invalid value" },
	{ "bps=", "bps: invalid value" },
	{ "bps=-1", "bps: invalid value" },
	{ "bps=1.5", "bps: invalid value" },
	{ "bps=12k", "bps: invalid value" },
	{ "bps= 1", "bps: invalid value" },
	{ "bps=+1", "bps: invalid value" },
	{ "wiops=99999999999999999999", "wiops: invalid value" },
	{ "bps=1 bps=2", "bps: given more than once" },
	{ "foo=1", "unknown argument (want key=value with a known key)" },
	{ "bps", "unknown argument (want key=value with a known key)" },
	{ "BPS=1", "unknown argument (want key=value with a known key)" },
	{ "bps=1 rbps=1", "bps: cannot be combined with rbps or wbps" },
	{ "wbps=1 bps=1", "bps: cannot be combined with rbps or wbps" },
	{ "iops=1 wiops=1", "iops: cannot be combined with riops or wiops" },
	{ "rbps=1 rbps_max=2 bps_max=3 bps=1", "bps: cannot be combined with rbps or wbps" },
	{ "rbps=1 rbps_max=2 bps_max=3", "bps_max: cannot be combined with rbps_max or wbps_max" },
	{ "riops=1 iops_max=3 riops_max=2", "iops_max: cannot be combined with riops_max or wiops_max" },
	{ "bps_max=10", "bps_max: needs bps" },
	{ "wiops_max=10", "wiops_max: needs wiops" },
	{ "bps=10 bps_max=9", "bps_max: must not be below bps" },
	{ "riops=10 riops_max=1", "riops_max: must not be below riops" },
	{ "burst_s=0", "burst_s: invalid value" },
	{ "burst_s=86401", "burst_s: invalid value" },
	{ "bps=10 burst_s=2", "burst_s: needs a _max limit" },
	{ "iops_size=4096", "iops_size: needs a limit of iops, riops or wiops" },
	{ "iops=1 iops_size=511", "iops_size: invalid value" },
	{ "iops=1 iops_size=4294967296", "iops_size: invalid value" },
	{ "weight=10", "weight: needs pool" },
	{ "reserve_iops=10", "reserve_iops: needs pool" },
	{ "reserve_bps=10", "reserve_bps: needs pool" },
	{ "pool=p weight=0", "weight: invalid value" },
	{ "pool=p weight=10001", "weight: invalid value" },
	{ "pool=p iops=10 reserve_iops=11", "reserve_iops: exceeds the volume's iops limit" },
	{ "pool=p rbps=10 wbps=10 reserve_bps=21", "reserve_bps: exceeds the volume's bps limit" },
	{ "pool=p reserve_iops=2147483648", "reserve_iops: above 10000000" },
	{ "pool=p reserve_iops=10000001", "reserve_iops: above 10000000" },
	{ "pool=p reserve_bps=1099511627777", "reserve_bps: above 1099511627776" },
	{ "latency_us=500", "latency_us: needs pool" },
	{ "pool=p latency_us=10000001", "latency_us: above 10000000" },
	{ "pool=p latency_us=1x", "latency_us: invalid value" },
	{ "tenant=", "tenant: invalid value" },
	{ "tenant=a/b", "tenant: invalid value" },
	{ "tenant=-x", "tenant: invalid value" },
	{ "tenant=0123456789012345678901234567890123456789012345678901234567890123",
	  "tenant: invalid value" },
	{ "pool=..", "pool: invalid value" },
	{ "dirty_strict=2", "dirty_strict: invalid value" },
	{ "dirty_strict=yes", "dirty_strict: invalid value" },
	{ "dirty_strict=1 dirty_strict=0", "dirty_strict: given more than once" },
};

static void bad_table_lines_name_their_argument(void)
{
	for (size_t i = 0; i < sizeof(bad_table) / sizeof(bad_table[0]); i++) {
		struct sl_config cfg;
		const char *err = NULL;

		sl_config_init(&cfg);
		if (parse(&cfg, SL_PARSE_TABLE, bad_table[i].line, &err) == 0 ||
		    strcmp(err, bad_table[i].err)) {
			char m[300];

			snprintf(m, sizeof(m), "'%s' gave '%s', want '%s'",
				 bad_table[i].line, err ? err : "(accepted)", bad_table[i].err);
			unit_fail(__FILE__, __LINE__, m);
			return;
		}
	}
}

static void reserve_within_total_of_both_directions(void)
{
	const char *c = canon("pool=p rbps=10 wbps=10 reserve_bps=20 riops=5 reserve_iops=100");

	/* riops alone bounds only reads, so any reservation is allowed */
	CHECK(!strcmp(c, "rbps=10 wbps=10 riops=5 pool=p reserve_iops=100 reserve_bps=20"));
}

static void set_merges_into_current_config(void)
{
	struct sl_config cfg;
	const char *err;

	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_TABLE, "rbps=100 tenant=a", &err) == 0);
	CHECK(parse(&cfg, SL_PARSE_SET, "wbps=200", &err) == 0);
	CHECK_EQ_U64(cfg.avg[SL_RBPS], 100);
	CHECK_EQ_U64(cfg.avg[SL_WBPS], 200);
	CHECK(!strcmp(cfg.tenant, "a"));
}

static void set_conflict_with_current_is_rejected(void)
{
	struct sl_config cfg, copy;
	const char *err;

	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_TABLE, "rbps=100", &err) == 0);
	copy = cfg;
	CHECK(parse(&copy, SL_PARSE_SET, "bps=5", &err) != 0);
	CHECK(!strcmp(err, "bps: cannot be combined with rbps or wbps"));
	copy = cfg;
	CHECK(parse(&copy, SL_PARSE_SET, "rbps=0 bps=5", &err) == 0);
	CHECK_EQ_U64(copy.avg[SL_BPS], 5);
	CHECK_EQ_U64(copy.avg[SL_RBPS], 0);
}

static void set_cannot_change_pool(void)
{
	struct sl_config cfg;
	const char *err;

	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_SET, "pool=x", &err) != 0);
	CHECK(!strcmp(err, "pool: cannot be changed by message (load a new table)"));
	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_SET, "group=x", &err) != 0);
	CHECK(!strcmp(err, "group: cannot be changed by message (load a new table)"));
	/* a group key that says 0, sent to a volume in no group */
	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_SET, "group_bps=0", &err) != 0);
	CHECK(!strcmp(err, "group_bps: needs group"));
}

/*
 * A set names the group's limits only when asked: the set that makes a
 * volume's own config leaves them out, and a set with group keys says so.
 */
static void set_changes_group_limits_only_when_named(void)
{
	struct sl_config cfg;
	char set[SL_FORMAT_MAX];
	const char *err;

	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_TABLE, "iops=5 group=g group_iops=100", &err) == 0);
	CHECK(cfg.group_given);
	CHECK(sl_config_format_set(&cfg, set, sizeof(set)) > 0);
	CHECK(strstr(set, "group") == NULL);
	cfg.group_given = false;
	CHECK(parse(&cfg, SL_PARSE_SET, "iops=6", &err) == 0);
	CHECK(!cfg.group_given);
	CHECK(parse(&cfg, SL_PARSE_SET, "group_iops=200", &err) == 0);
	CHECK(cfg.group_given);
	CHECK_EQ_U64(cfg.group_avg[SL_IOPS], 200);
	CHECK_EQ_U64(cfg.avg[SL_IOPS], 6);
}

static void format_reports_a_short_buffer(void)
{
	struct sl_config cfg;
	char small[8];
	const char *err;

	sl_config_init(&cfg);
	CHECK(parse(&cfg, SL_PARSE_TABLE, "bps=1048576", &err) == 0);
	CHECK(sl_config_format(&cfg, small, sizeof(small)) == -1);
	CHECK(strlen(small) < sizeof(small));
}

static void longest_config_fits_format_max(void)
{
	const char *c = canon("rbps=18446744073709551615 wbps=18446744073709551615 "
			      "riops=18446744073709551615 wiops=18446744073709551615 "
			      "rbps_max=18446744073709551615 wbps_max=18446744073709551615 "
			      "riops_max=18446744073709551615 wiops_max=18446744073709551615 "
			      "burst_s=86400 iops_size=4294967295 "
			      "pool=012345678901234567890123456789012345678901234567890123456789012 "
			      "weight=10000 reserve_iops=10000000 reserve_bps=1099511627776 latency_us=10000000 "
			      "dirty_strict=1 group=012345678901234567890123456789012345678901234567890123456789012 "
			      "group_rbps=18446744073709551615 group_wbps=18446744073709551615 "
			      "group_riops=18446744073709551615 group_wiops=18446744073709551615 "
			      "group_rbps_max=18446744073709551615 group_wbps_max=18446744073709551615 "
			      "group_riops_max=18446744073709551615 group_wiops_max=18446744073709551615 "
			      "group_burst_s=86400 "
			      "tenant=012345678901234567890123456789012345678901234567890123456789012");

	CHECK(strncmp(c, "rbps=", 5) == 0);
}

/*
 * A set built by sl_config_format_set() from a wanted config turns any
 * other valid config of the same pool into exactly the wanted one.
 */
static void format_set_reaches_the_wanted_config(void)
{
	static const char *const from[] = {
		"bps=100", "rbps=1 wbps=2 riops=3 wiops=4 rbps_max=10 burst_s=5",
		"iops=7 iops_size=4096 tenant=x", "pool=p weight=9 reserve_iops=3 iops=10 tenant=y",
	};
	static const char *const want[] = {
		"", "rbps=50 wbps=60", "iops=100 iops_max=1000 burst_s=3 iops_size=512 tenant=x",
		"pool=p reserve_bps=5 tenant=y",
	};
	unsigned int i, j;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		for (j = 0; j < sizeof(from) / sizeof(from[0]); j++) {
			struct sl_config w, c;
			char set[SL_FORMAT_MAX], a[SL_FORMAT_MAX], b[SL_FORMAT_MAX];
			const char *err;

			sl_config_init(&w);
			sl_config_init(&c);
			CHECK(parse(&w, SL_PARSE_TABLE, want[i], &err) == 0);
			CHECK(parse(&c, SL_PARSE_TABLE, from[j], &err) == 0);
			if (strcmp(w.pool, c.pool) || (c.tenant[0] && strcmp(w.tenant, c.tenant)))
				continue;	/* needs a new table, not a set */
			CHECK(sl_config_format_set(&w, set, sizeof(set)) > 0);
			CHECK(parse(&c, SL_PARSE_SET, set, &err) == 0);
			sl_config_format(&w, a, sizeof(a));
			sl_config_format(&c, b, sizeof(b));
			CHECK(!strcmp(a, b));
		}
}

static const struct unit_test tests[] = {
	UNIT_TEST(format_set_reaches_the_wanted_config),
	UNIT_TEST(defaults_are_valid_and_print_nothing),
	UNIT_TEST(canonical_order_and_defaults_left_out),
	UNIT_TEST(canonical_form_parses_back_to_itself),
	UNIT_TEST(limits_up_to_2_pow_64_minus_1),
	UNIT_TEST(bad_table_lines_name_their_argument),
	UNIT_TEST(reserve_within_total_of_both_directions),
	UNIT_TEST(set_merges_into_current_config),
	UNIT_TEST(set_conflict_with_current_is_rejected),
	UNIT_TEST(set_cannot_change_pool),
	UNIT_TEST(set_changes_group_limits_only_when_named),
	UNIT_TEST(format_reports_a_short_buffer),
	UNIT_TEST(longest_config_fits_format_max),
};

UNIT_MAIN("core-parse", tests)
