// SPDX-License-Identifier: GPL-2.0
/* The API's policy objects: to and from target arguments, merges, ceilings. */
#include <string.h>

#include "unit.h"
#include "../../api/policy.h"

static json_t *obj(const char *text)
{
	return json_loads(text, 0, NULL);
}

/* args of a policy text, or "ERR <message>" */
static const char *to_args(const char *text)
{
	static char out[1024];
	char err[256], apolicy[256];
	json_t *p = obj(text);

	if (!p)
		return "UNPARSED";
	if (ap_policy_to_args(p, out, sizeof(out), apolicy, sizeof(apolicy), err, sizeof(err)))
		snprintf(out, sizeof(out), "ERR %s", err);
	else if (apolicy[0])
		snprintf(out + strlen(out), sizeof(out) - strlen(out), " | %s", apolicy);
	json_decref(p);
	return out;
}

static void policy_fields_map_to_target_keys_in_canonical_order(void)
{
	CHECK(!strcmp(to_args("{\"weight\": 300, \"read_iops_sec\": 100, \"total_bytes_sec\": 1048576}"),
		      "bps=1048576 riops=100 weight=300"));
	CHECK(!strcmp(to_args("{\"read_iops_sec_max\": 400, \"read_iops_sec\": 100,"
			      " \"read_iops_sec_max_length\": 5, \"size_iops_sec\": 8192}"),
		      "riops=100 riops_max=400 burst_s=5 iops_size=8192"));
	CHECK(!strcmp(to_args("{\"reservation_iops\": 50, \"reservation_bytes_sec\": 4096}"),
		      "reserve_iops=50 reserve_bps=4096"));
	/* zero is no limit, as absent */
	CHECK(!strcmp(to_args("{\"total_iops_sec\": 0}"), ""));
	CHECK(!strcmp(to_args("{}"), ""));
}

static void policy_rejects_bad_values_naming_the_field(void)
{
	CHECK(!strncmp(to_args("{\"total_iops_sec\": -1}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(to_args("{\"total_iops_sec\": 1.5}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(to_args("{\"total_iops_sec\": \"100\"}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(to_args("{\"total_iops_sec\": true}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(to_args("{\"total_iops_sec\": null}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(to_args("{\"total_iops_sec\": 9007199254740993}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(to_args("{\"iops\": 5}"), "ERR iops: not a policy field", 28));
	CHECK(!strncmp(to_args("[1]"), "ERR policy:", 11));
	CHECK(!strncmp(to_args("{\"read_iops_sec_max_length\": 2, \"write_iops_sec_max_length\": 3}"),
		       "ERR write_iops_sec_max_length: must equal", 41));
}

static void policy_round_trips_through_target_arguments(void)
{
	const char *texts[] = {
		"{\"total_bytes_sec\": 1048576, \"total_bytes_sec_max\": 4194304,"
		" \"total_bytes_sec_max_length\": 3, \"weight\": 20}",
		"{\"read_iops_sec\": 10, \"write_iops_sec\": 20, \"reservation_iops\": 5}",
		"{\"read_iops_sec_per_gb\": 10, \"read_iops_sec_per_gb_min\": 100,"
		" \"write_bytes_sec_per_gb\": 1048576, \"weight\": 30}",
		"{\"total_iops_sec_per_gb\": 3, \"dirty_bytes_max\": 67108864}",
		"{}",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char args[512], apolicy[256], err[128];
		json_t *p = obj(texts[i]), *back;

		CHECK(p && ap_policy_to_args(p, args, sizeof(args), apolicy, sizeof(apolicy), err,
					     sizeof(err)) == 0);
		back = ap_policy_from_args(args, apolicy);
		CHECK(back);
		CHECK(json_equal(p, back));
		json_decref(p);
		json_decref(back);
	}
	CHECK(ap_policy_from_args("bogus=1", NULL) == NULL);
	CHECK(ap_policy_from_args("riops=1x", NULL) == NULL);
	CHECK(ap_policy_from_args("riops", NULL) == NULL);
	CHECK(ap_policy_from_args("", "riops=1") == NULL);
	CHECK(ap_policy_from_args("", "weight=1:1") == NULL);
}

static void per_gb_fields_become_scale_words(void)
{
	/* the scaled rate gives way to its per-GiB word; the floor is optional */
	CHECK(!strcmp(to_args("{\"read_iops_sec_per_gb\": 10, \"weight\": 5}"),
		      "weight=5 | riops=10:0"));
	CHECK(!strcmp(to_args("{\"total_bytes_sec_per_gb\": 1048576,"
			      " \"total_bytes_sec_per_gb_min\": 4194304, \"total_iops_sec\": 50}"),
		      "iops=50 | bps=1048576:4194304"));
	/* a rate and its _per_gb are one or the other; a floor needs its rate */
	CHECK(!strncmp(to_args("{\"read_iops_sec\": 10, \"read_iops_sec_per_gb\": 1}"),
		       "ERR read_iops_sec_per_gb: give read_iops_sec or", 47));
	CHECK(!strncmp(to_args("{\"read_iops_sec_per_gb_min\": 10}"),
		       "ERR read_iops_sec_per_gb_min: needs read_iops_sec_per_gb", 56));
	CHECK(!strncmp(to_args("{\"read_iops_sec_per_gb\": -1}"), "ERR read_iops_sec_per_gb:", 25));
	CHECK(!strcmp(to_args("{\"dirty_bytes_max\": 1048576, \"weight\": 5}"),
		      "weight=5 | dirty_bytes_max=1048576"));
	CHECK(!strncmp(to_args("{\"dirty_bytes_max\": -1}"), "ERR dirty_bytes_max:", 20));
	CHECK(!strncmp(to_args("{\"weight_per_gb\": 1}"), "ERR weight_per_gb: not a policy", 31));
	CHECK(!strncmp(to_args("{\"size_iops_sec_per_gb\": 1}"), "ERR size_iops_sec_per_gb: not", 29));
}

static void policy_merge_sets_and_removes_or_changes_nothing(void)
{
	json_t *p = obj("{\"read_iops_sec\": 10, \"weight\": 5}");
	json_t *bad = obj("{\"weight\": 7, \"nope\": 1}");
	json_t *bad2 = obj("{\"weight\": 7, \"read_iops_sec\": -3}");
	json_t *good = obj("{\"weight\": 7, \"read_iops_sec\": null, \"write_iops_sec\": 9}");
	json_t *want = obj("{\"weight\": 7, \"write_iops_sec\": 9}");
	json_t *orig = json_deep_copy(p);
	char err[128];

	CHECK(ap_policy_merge(p, bad, err, sizeof(err)) == -2 && strstr(err, "nope"));
	CHECK(ap_policy_merge(p, bad2, err, sizeof(err)) == -1 && strstr(err, "read_iops_sec"));
	CHECK(json_equal(p, orig));
	CHECK(ap_policy_merge(p, good, err, sizeof(err)) == 0);
	CHECK(json_equal(p, want));
	json_decref(p);
	json_decref(bad);
	json_decref(bad2);
	json_decref(good);
	json_decref(want);
	json_decref(orig);
}

static void policy_errors_speak_the_api_names(void)
{
	char out[128];

	ap_policy_rename_error("riops_max: needs riops", out, sizeof(out));
	CHECK(!strcmp(out, "read_iops_sec_max: needs read_iops_sec"));
	ap_policy_rename_error("bps: cannot be combined with rbps or wbps", out, sizeof(out));
	CHECK(!strcmp(out, "total_bytes_sec: cannot be combined with read_bytes_sec or write_bytes_sec"));
	ap_policy_rename_error("burst_s: needs a _max limit", out, 12);
	CHECK(strlen(out) == 11);
}

static int within(const char *policy, const char *ceilings)
{
	json_t *p = obj(policy), *c = obj(ceilings);
	char err[160];
	int rc = ap_policy_within(p, c, err, sizeof(err));

	json_decref(p);
	json_decref(c);
	return rc;
}

static void ceilings_bound_rates_and_forbid_unlimited(void)
{
	const char *c = "{\"total_iops_sec\": 1000, \"weight\": 200, \"read_bytes_sec\": 1048576}";

	CHECK(within("{\"total_iops_sec\": 1000, \"total_bytes_sec\": 1048576}", c) == 0);
	CHECK(within("{\"read_iops_sec\": 500, \"write_iops_sec\": 500, \"read_bytes_sec\": 1}", c) == 0);
	/* read + write above the total ceiling */
	CHECK(within("{\"read_iops_sec\": 600, \"write_iops_sec\": 500, \"read_bytes_sec\": 1}", c) == -1);
	/* no IOPS limit at all: unlimited is above 1000 */
	CHECK(within("{\"read_bytes_sec\": 1}", c) == -1);
	/* read only: writes unlimited */
	CHECK(within("{\"read_iops_sec\": 10, \"read_bytes_sec\": 1}", c) == -1);
	/* weight defaults to 100, within 200; 300 is not */
	CHECK(within("{\"total_iops_sec\": 10, \"read_bytes_sec\": 1}", c) == 0);
	CHECK(within("{\"total_iops_sec\": 10, \"read_bytes_sec\": 1, \"weight\": 300}", c) == -1);
	/* a total bytes limit bounds reads too */
	CHECK(within("{\"total_iops_sec\": 10, \"total_bytes_sec\": 1048576}", c) == 0);
	CHECK(within("{\"total_iops_sec\": 10, \"total_bytes_sec\": 1048577}", c) == -1);
	/* a burst ceiling falls back to the base rate */
	CHECK(within("{\"total_iops_sec\": 10}", "{\"total_iops_sec_max\": 10}") == 0);
	CHECK(within("{\"total_iops_sec\": 10, \"total_iops_sec_max\": 11}",
		     "{\"total_iops_sec_max\": 10}") == -1);
	/* a dirty ceiling: unlimited (absent) is above it */
	CHECK(within("{\"dirty_bytes_max\": 4096}", "{\"dirty_bytes_max\": 4096}") == 0);
	CHECK(within("{\"dirty_bytes_max\": 4097}", "{\"dirty_bytes_max\": 4096}") == -1);
	CHECK(within("{}", "{\"dirty_bytes_max\": 4096}") == -1);
}

static void ceilings_objects_are_checked(void)
{
	char err[128];
	json_t *ok = obj("{\"total_iops_sec\": 5}"), *unk = obj("{\"x\": 1}");
	json_t *len = obj("{\"total_iops_sec_max_length\": 5}"), *neg = obj("{\"weight\": -1}");

	CHECK(ap_ceilings_check(ok, err, sizeof(err)) == 0);
	CHECK(ap_ceilings_check(unk, err, sizeof(err)) == -1);
	CHECK(ap_ceilings_check(len, err, sizeof(err)) == -1);
	CHECK(ap_ceilings_check(neg, err, sizeof(err)) == -1 && strstr(err, "weight"));
	json_decref(ok);
	json_decref(unk);
	json_decref(len);
	json_decref(neg);
}

static const struct unit_test tests[] = {
	UNIT_TEST(policy_fields_map_to_target_keys_in_canonical_order),
	UNIT_TEST(policy_rejects_bad_values_naming_the_field),
	UNIT_TEST(policy_round_trips_through_target_arguments),
	UNIT_TEST(per_gb_fields_become_scale_words),
	UNIT_TEST(policy_merge_sets_and_removes_or_changes_nothing),
	UNIT_TEST(policy_errors_speak_the_api_names),
	UNIT_TEST(ceilings_bound_rates_and_forbid_unlimited),
	UNIT_TEST(ceilings_objects_are_checked),
};

UNIT_MAIN("policy", tests)
