// SPDX-License-Identifier: GPL-2.0
/*
 * Typed policies: from and to the API's JSON, in force at a size, as the
 * store's text, merges, and tenants' ceilings on every field.
 */
#include <string.h>

#include "unit.h"
#include "../../api/policy_json.h"

#define GIB (1ULL << 30)

static json_t *obj(const char *text)
{
	return json_loads(text, 0, NULL);
}

/* The store's text of a policy object at size: "args | words", or "ERR <message>". */
static const char *stored_at(const char *text, uint64_t size)
{
	static char out[1024];
	char err[256], words[256];
	struct ag_policy p;
	struct ag_err e;
	json_t *j = obj(text);

	if (!j)
		return "UNPARSED";
	if (ap_policy_from_json(j, &p, err, sizeof(err)))
		snprintf(out, sizeof(out), "ERR %s", err);
	else if (ag_policy_format(&p, size, "p", out, sizeof(out), words, sizeof(words), &e))
		snprintf(out, sizeof(out), "ERR %s", e.msg);
	else if (words[0])
		snprintf(out + strlen(out), sizeof(out) - strlen(out), " | %s", words);
	json_decref(j);
	return out;
}

static const char *stored(const char *text)
{
	return stored_at(text, GIB);
}

static void policy_fields_map_to_target_keys_in_canonical_order(void)
{
	CHECK(!strcmp(stored("{\"weight\": 300, \"read_iops_sec\": 100, \"total_bytes_sec\": 1048576}"),
		      "bps=1048576 riops=100 weight=300"));
	CHECK(!strcmp(stored("{\"read_iops_sec_max\": 400, \"read_iops_sec\": 100,"
			     " \"read_iops_sec_max_length\": 5, \"size_iops_sec\": 8192}"),
		      "riops=100 riops_max=400 burst_s=5 iops_size=8192"));
	CHECK(!strcmp(stored("{\"reservation_iops\": 50, \"reservation_bytes_sec\": 4096}"),
		      "reserve_iops=50 reserve_bps=4096"));
	CHECK(!strcmp(stored("{\"latency_target_us\": 2000, \"weight\": 300, \"reservation_iops\": 5}"),
		      "weight=300 reserve_iops=5 latency_us=2000"));
	/* zero is no limit, as absent */
	CHECK(!strcmp(stored("{\"total_iops_sec\": 0, \"weight\": 0, \"latency_target_us\": 0}"), ""));
	CHECK(!strcmp(stored("{}"), ""));
}

static void policy_rejects_bad_values_naming_the_field(void)
{
	CHECK(!strncmp(stored("{\"total_iops_sec\": -1}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(stored("{\"total_iops_sec\": 1.5}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(stored("{\"total_iops_sec\": \"100\"}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(stored("{\"total_iops_sec\": true}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(stored("{\"total_iops_sec\": null}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(stored("{\"total_iops_sec\": 9007199254740993}"), "ERR total_iops_sec:", 19));
	CHECK(!strncmp(stored("{\"iops\": 5}"), "ERR iops: not a policy field", 28));
	CHECK(!strncmp(stored("[1]"), "ERR policy:", 11));
	CHECK(!strncmp(stored("{\"read_iops_sec_max_length\": 2, \"write_iops_sec_max_length\": 3}"),
		       "ERR write_iops_sec_max_length: must equal", 41));
	/* each field's own range, before the struct could truncate it */
	CHECK(!strncmp(stored("{\"weight\": 4294967397}"), "ERR weight: from 1 to 10000", 27));
	CHECK(!strncmp(stored("{\"total_iops_sec\": 5, \"total_iops_sec_max\": 9,"
			      " \"total_iops_sec_max_length\": 4294967297}"),
		       "ERR total_iops_sec_max_length: from 1", 37));
	CHECK(!strncmp(stored("{\"total_iops_sec\": 5, \"size_iops_sec\": 100}"),
		       "ERR size_iops_sec: 0, or from 512", 33));
	/* and the target's rules over the whole, in the API's names */
	CHECK(!strcmp(stored("{\"read_iops_sec_max\": 5}"),
		      "ERR read_iops_sec_max: needs read_iops_sec"));
	CHECK(!strcmp(stored("{\"total_bytes_sec\": 5, \"read_bytes_sec\": 1}"),
		      "ERR total_bytes_sec: cannot be combined with read_bytes_sec or write_bytes_sec"));
	CHECK(!strcmp(stored("{\"total_iops_sec\": 5, \"total_iops_sec_max\": 9,"
			     " \"write_iops_sec_max_length\": 3}"),
		      "iops=5 iops_max=9 burst_s=3"));
}

static void policy_round_trips_through_json_and_the_store(void)
{
	const char *texts[] = {
		"{\"total_bytes_sec\": 1048576, \"total_bytes_sec_max\": 4194304,"
		" \"total_bytes_sec_max_length\": 3, \"weight\": 20}",
		"{\"read_iops_sec\": 10, \"write_iops_sec\": 20, \"reservation_iops\": 5}",
		"{\"read_iops_sec_per_gb\": 10, \"read_iops_sec_per_gb_min\": 100,"
		" \"write_bytes_sec_per_gb\": 1048576, \"weight\": 30}",
		"{\"total_iops_sec_per_gb\": 3, \"dirty_bytes_max\": 67108864}",
		"{\"latency_target_us\": 10000000, \"reservation_iops\": 5, \"weight\": 7}",
		"{\"latency_target_us\": 1}",
		"{}",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char args[512], words[256], err[128];
		struct ag_policy p, q;
		struct ag_err e;
		json_t *j = obj(texts[i]), *back;

		CHECK(j && ap_policy_from_json(j, &p, err, sizeof(err)) == 0);
		CHECK(ag_policy_format(&p, 5 * GIB, "p", args, sizeof(args), words, sizeof(words),
				       &e) == 0);
		CHECK(ag_policy_parse(&q, args, words, &e) == 0);
		CHECK(ag_policy_equal(&p, &q));
		back = ap_policy_to_json(&q);
		CHECK(back && json_equal(j, back));
		json_decref(j);
		json_decref(back);
	}
}

static void store_text_is_checked_word_by_word(void)
{
	struct ag_policy p;
	struct ag_err e;

	CHECK(ag_policy_parse(&p, "bogus=1", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "riops=1x", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "riops", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "pool=x", "", &e) == -1 && strstr(e.msg, "pool=x"));
	CHECK(ag_policy_parse(&p, "tenant=x", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "group=x", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "weight=0", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "", "riops=1", &e) == -1);
	CHECK(ag_policy_parse(&p, "", "weight=1:1", &e) == -1);
	CHECK(ag_policy_parse(&p, "", "riops=1:0 riops=2:0", &e) == -1);
	CHECK(ag_policy_parse(&p, "", "dirty_bytes_max=0", &e) == -1);
	CHECK(ag_policy_parse(&p, "", "riops=9007199254740993:0", &e) == -1);
	/* the stored value of a scaled rate gives way to its scale; dirty_strict follows */
	CHECK(ag_policy_parse(&p, "riops=40 dirty_strict=1", "riops=10:0", &e) == 0);
	CHECK(p.limits.avg[SL_RIOPS] == 0 && p.scaled[SL_RIOPS].per_gib == 10);
	CHECK(p.limits.dirty_strict == 0 && p.dirty_bytes_max == 0);
}

static void per_gb_fields_scale_with_the_size(void)
{
	/* pro rata, rounded down, at least the floor and at least 1 */
	CHECK(!strcmp(stored_at("{\"read_iops_sec_per_gb\": 10, \"weight\": 5}", 3 * GIB),
		      "riops=30 weight=5 | riops=10:0"));
	CHECK(!strcmp(stored_at("{\"read_iops_sec_per_gb\": 10}", GIB + GIB / 2), "riops=15 | riops=10:0"));
	CHECK(!strcmp(stored_at("{\"read_iops_sec_per_gb\": 10, \"read_iops_sec_per_gb_min\": 100}", GIB),
		      "riops=100 | riops=10:100"));
	CHECK(!strcmp(stored_at("{\"read_iops_sec_per_gb\": 10}", 4096), "riops=1 | riops=10:0"));
	/* huge products saturate at 2^53 */
	CHECK(!strcmp(stored_at("{\"total_iops_sec_per_gb\": 9007199254740992}", 1ULL << 56),
		      "iops=9007199254740992 | iops=9007199254740992:0"));
	/* a rate and its _per_gb are one or the other; a floor needs its rate */
	CHECK(!strncmp(stored("{\"read_iops_sec\": 10, \"read_iops_sec_per_gb\": 1}"),
		       "ERR read_iops_sec_per_gb: give read_iops_sec or", 47));
	CHECK(!strncmp(stored("{\"read_iops_sec_per_gb_min\": 10}"),
		       "ERR read_iops_sec_per_gb_min: needs read_iops_sec_per_gb", 56));
	/* the target's rules hold at the size: a burst below its scaled rate */
	CHECK(!strncmp(stored_at("{\"read_iops_sec_per_gb\": 10, \"read_iops_sec_max\": 50}", 10 * GIB),
		       "ERR read_iops_sec_max: must not be below", 40));
	CHECK(!strcmp(stored("{\"dirty_bytes_max\": 1048576, \"weight\": 5}"),
		      "weight=5 dirty_strict=1 | dirty_bytes_max=1048576"));
	CHECK(!strncmp(stored("{\"weight_per_gb\": 1}"), "ERR weight_per_gb: not a policy", 31));
	CHECK(!strncmp(stored("{\"size_iops_sec_per_gb\": 1}"), "ERR size_iops_sec_per_gb: not", 29));
}

/*
 * latency_target_us: the pool's p90 completion-latency target for the
 * volume (the target's latency_us), 0 for none, at most 10 s; every bad
 * value refused naming the field, in the API's name.
 */
static void latency_target_is_checked_naming_the_field(void)
{
	struct ag_policy p;
	struct sl_config in_force;
	struct ag_err e;

	CHECK(!strcmp(stored("{\"latency_target_us\": 10000000}"), "latency_us=10000000"));
	CHECK(!strcmp(stored("{\"latency_target_us\": 10000001}"),
		      "ERR latency_target_us: 0 (none), or from 1 to 10000000 microseconds"));
	CHECK(!strncmp(stored("{\"latency_target_us\": 9007199254740992}"),
		       "ERR latency_target_us: 0 (none), or from 1", 42));
	CHECK(!strncmp(stored("{\"latency_target_us\": 9007199254740993}"),
		       "ERR latency_target_us: an integer from 0 to 2^53", 48));
	CHECK(!strncmp(stored("{\"latency_target_us\": -1}"), "ERR latency_target_us:", 22));
	CHECK(!strncmp(stored("{\"latency_target_us\": 1.5}"), "ERR latency_target_us:", 22));
	CHECK(!strncmp(stored("{\"latency_target_us\": \"500\"}"), "ERR latency_target_us:", 22));
	CHECK(!strncmp(stored("{\"latency_target_us\": true}"), "ERR latency_target_us:", 22));
	CHECK(!strncmp(stored("{\"latency_target_us\": null}"), "ERR latency_target_us:", 22));
	CHECK(!strncmp(stored("{\"latency_target_us\": [500]}"), "ERR latency_target_us:", 22));
	/* the kernel's name is not the API's */
	CHECK(!strcmp(stored("{\"latency_us\": 500}"), "ERR latency_us: not a policy field"));
	CHECK(!strncmp(stored("{\"latency_target_us_per_gb\": 5}"),
		       "ERR latency_target_us_per_gb: not a policy field", 49));
	/* the store's text: a word that does not parse is refused, a range in force */
	CHECK(ag_policy_parse(&p, "latency_us=1x", "", &e) == -1 && strstr(e.msg, "latency_us"));
	CHECK(ag_policy_parse(&p, "latency_us=-5", "", &e) == -1);
	CHECK(ag_policy_parse(&p, "", "latency_us=5", &e) == -1);
	CHECK(ag_policy_parse(&p, "latency_us=10000001", "", &e) == 0);
	CHECK(ag_policy_in_force(&p, GIB, "p", &in_force, &e) == -1);
	CHECK(!strcmp(e.msg, "latency_target_us: above 10000000"));
	CHECK(ag_policy_parse(&p, "weight=5 latency_us=250", "", &e) == 0);
	CHECK_EQ_U64(ag_policy_get(&p, ag_field_find("latency_target_us")), 250);
	CHECK(ag_policy_in_force(&p, GIB, "p", &in_force, &e) == 0);
	CHECK_EQ_U64(in_force.latency_us, 250);
	CHECK(!strcmp(in_force.pool, "p"));
	/* a field like the others: compared, shown, and 0 removes it */
	{
		struct ag_policy q;

		CHECK(ag_policy_parse(&q, "weight=5", "", &e) == 0);
		CHECK(!ag_policy_equal(&p, &q));
		CHECK(ag_policy_set(&q, ag_field_find("latency_target_us"), 250, &e) == 0);
		CHECK(ag_policy_equal(&p, &q));
		CHECK(ag_policy_set(&q, ag_field_find("latency_target_us"), 0, &e) == 0);
		CHECK_EQ_U64(q.limits.latency_us, 0);
	}
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

	ag_policy_rename("riops_max: needs riops", out, sizeof(out));
	CHECK(!strcmp(out, "read_iops_sec_max: needs read_iops_sec"));
	ag_policy_rename("bps: cannot be combined with rbps or wbps", out, sizeof(out));
	CHECK(!strcmp(out, "total_bytes_sec: cannot be combined with read_bytes_sec or write_bytes_sec"));
	ag_policy_rename("reserve_iops: exceeds the volume's iops limit", out, sizeof(out));
	CHECK(!strcmp(out, "reservation_iops: exceeds the volume's total_iops_sec limit"));
	ag_policy_rename("latency_us: needs pool", out, sizeof(out));
	CHECK(!strcmp(out, "latency_target_us: needs pool"));
	ag_policy_rename("latency_usx: y", out, sizeof(out));
	CHECK(!strcmp(out, "latency_usx: y"));
	ag_policy_rename("burst_s: needs a _max limit", out, 12);
	CHECK(strlen(out) == 11);
}

/* 0 within, -1 above (its message in why), -2 a bad policy or ceilings */
static char why[400];

static int within_at(const char *policy, const char *ceilings, uint64_t size)
{
	json_t *p = obj(policy), *c = obj(ceilings);
	struct ag_policy pol;
	struct ag_ceilings ceil;
	struct sl_config in_force;
	struct ag_err e = { 0 };
	char err[160];
	int rc = -2;

	if (p && c && !ap_policy_from_json(p, &pol, err, sizeof(err)) &&
	    !ag_ceilings_from_json(&ceil, c, &e) &&
	    !ag_policy_in_force(&pol, size, "p", &in_force, &e))
		rc = ag_policy_within(&in_force, pol.dirty_bytes_max, &ceil, &e);
	snprintf(why, sizeof(why), "%s", e.msg);
	if (rc == -1 && e.code != AG_E_ABOVE_CEILING)
		rc = -3;
	json_decref(p);
	json_decref(c);
	return rc;
}

static int within(const char *policy, const char *ceilings)
{
	return within_at(policy, ceilings, GIB);
}

static void ceilings_bound_rates_and_forbid_unlimited(void)
{
	const char *c = "{\"total_iops_sec\": 1000, \"weight\": 200, \"read_bytes_sec\": 1048576}";

	CHECK(within("{\"total_iops_sec\": 1000, \"total_bytes_sec\": 1048576}", c) == 0);
	CHECK(within("{\"read_iops_sec\": 500, \"write_iops_sec\": 500, \"read_bytes_sec\": 1}", c) == 0);
	/* read + write above the total ceiling */
	CHECK(within("{\"read_iops_sec\": 600, \"write_iops_sec\": 500, \"read_bytes_sec\": 1}", c) == -1);
	/* no IOPS limit at all: unlimited is above 1000 */
	CHECK(within("{\"read_bytes_sec\": 1}", c) == -1 && strstr(why, "unlimited is above"));
	/* read only: writes unlimited */
	CHECK(within("{\"read_iops_sec\": 10, \"read_bytes_sec\": 1}", c) == -1);
	/* weight defaults to 100, within 200; 300 is not */
	CHECK(within("{\"total_iops_sec\": 10, \"read_bytes_sec\": 1}", c) == 0);
	CHECK(within("{\"total_iops_sec\": 10, \"read_bytes_sec\": 1, \"weight\": 300}", c) == -1);
	/* a total bytes limit bounds reads too */
	CHECK(within("{\"total_iops_sec\": 10, \"total_bytes_sec\": 1048576}", c) == 0);
	CHECK(within("{\"total_iops_sec\": 10, \"total_bytes_sec\": 1048577}", c) == -1);
	/* a dirty ceiling: unlimited (absent) is above it */
	CHECK(within("{\"dirty_bytes_max\": 4096}", "{\"dirty_bytes_max\": 4096}") == 0);
	CHECK(within("{\"dirty_bytes_max\": 4097}", "{\"dirty_bytes_max\": 4096}") == -1);
	CHECK(within("{}", "{\"dirty_bytes_max\": 4096}") == -1);
}

/*
 * The attack: a burst rate far above the ceiling of its rate, with a long
 * burst, is in effect no limit. Without a ceiling of its own, a _max is held
 * to its rate's ceiling; with one, a burst above the rate's ceiling lasts at
 * most its length's ceiling (1 s without one).
 */
static void ceilings_bound_bursts_and_their_length(void)
{
	const char *c = "{\"total_iops_sec\": 2000}";
	const char *c_max = "{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5000}";
	const char *c_len = "{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5000,"
			    " \"total_iops_sec_max_length\": 30}";

	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 9007199254740992}", c) == -1);
	CHECK(strstr(why, "total_iops_sec_max: 9007199254740992 is above the tenant's ceiling of 2000"));
	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 2001}", c) == -1);
	/* a burst up to the rate's ceiling may last: it never goes above the ceiling */
	CHECK(within("{\"total_iops_sec\": 1000, \"total_iops_sec_max\": 2000,"
		     " \"total_iops_sec_max_length\": 3600}", c) == 0);
	/* read and write bursts together above the total's ceiling */
	CHECK(within("{\"read_iops_sec\": 1000, \"read_iops_sec_max\": 3000, \"write_iops_sec\": 1000}",
		     c) == -1 && strstr(why, "total_iops_sec_max: 4000"));
	/* an own ceiling on the burst rate; its length then needs one too */
	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5000}", c_max) == 0);
	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5001}", c_max) == -1);
	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5000,"
		     " \"total_iops_sec_max_length\": 2}", c_max) == -1);
	CHECK(strstr(why, "total_iops_sec_max_length: 2 is above the tenant's ceiling of 1"));
	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5000,"
		     " \"total_iops_sec_max_length\": 30}", c_len) == 0);
	CHECK(within("{\"total_iops_sec\": 2000, \"total_iops_sec_max\": 5000,"
		     " \"total_iops_sec_max_length\": 31}", c_len) == -1);
	/* a burst through read and write above the total's ceiling, held the same way */
	CHECK(within("{\"read_iops_sec\": 1000, \"read_iops_sec_max\": 2500, \"write_iops_sec\": 1000,"
		     " \"write_iops_sec_max\": 2500, \"read_iops_sec_max_length\": 60}", c_max) == -1);
	CHECK(strstr(why, "total_iops_sec_max_length"));
}

static void ceilings_bound_every_other_field(void)
{
	/* size_iops_sec: a larger size counts fewer IOs; absent counts every IO as one */
	const char *c = "{\"size_iops_sec\": 8192}";

	CHECK(within("{\"total_iops_sec\": 10, \"size_iops_sec\": 4096}", c) == 0);
	CHECK(within("{\"total_iops_sec\": 10, \"size_iops_sec\": 16384}", c) == -1);
	CHECK(within("{\"total_iops_sec\": 10}", c) == -1);
	CHECK(within("{}", c) == 0);	/* no IOPS limit: the size counts for nothing */
	/* reservations and weight */
	CHECK(within("{\"reservation_iops\": 100}", "{\"reservation_iops\": 100}") == 0);
	CHECK(within("{\"reservation_iops\": 101}", "{\"reservation_iops\": 100}") == -1);
	CHECK(within("{\"reservation_bytes_sec\": 4096}", "{\"reservation_bytes_sec\": 0}") == -1);
	CHECK(within("{\"weight\": 10000}", "{\"weight\": 500}") == -1);
	/* scaled rates are bounded as they are in force, at the size */
	CHECK(within_at("{\"total_iops_sec_per_gb\": 100}", "{\"total_iops_sec\": 1000}", GIB) == 0);
	CHECK(within_at("{\"total_iops_sec_per_gb\": 100}", "{\"total_iops_sec\": 1000}",
			20 * GIB) == -1);
	CHECK(strstr(why, "total_iops_sec: 2000 is above"));
}

/*
 * A latency target is bounded the other way: the ceiling is the tightest
 * target the tenant may set. A tighter (smaller) one is refused naming the
 * field; a looser one, or none, is within.
 */
static void ceilings_bound_the_latency_target_from_below(void)
{
	const char *c = "{\"latency_target_us\": 500}";

	CHECK(within("{\"latency_target_us\": 500}", c) == 0);
	CHECK(within("{\"latency_target_us\": 10000000}", c) == 0);
	CHECK(within("{}", c) == 0);
	CHECK(within("{\"latency_target_us\": 0}", c) == 0);
	CHECK(within("{\"latency_target_us\": 499}", c) == -1);
	CHECK(!strcmp(why, "latency_target_us: 499 is tighter than the tenant's ceiling of 500"
		      " (the tightest it may set)"));
	CHECK(within("{\"latency_target_us\": 1}", c) == -1 && strstr(why, "latency_target_us: 1 "));
	/* a ceiling of 0 bounds nothing; one past the range leaves no target */
	CHECK(within("{\"latency_target_us\": 1}", "{\"latency_target_us\": 0}") == 0);
	CHECK(within("{\"latency_target_us\": 10000000}", "{\"latency_target_us\": 10000001}") == -1);
	CHECK(within("{}", "{\"latency_target_us\": 10000001}") == 0);
	/* no ceiling on it: any target; the other fields' ceilings are not its */
	CHECK(within("{\"latency_target_us\": 1}", "{\"reservation_iops\": 100}") == 0);
	CHECK(within("{\"latency_target_us\": 1, \"reservation_iops\": 101}",
		     "{\"reservation_iops\": 100, \"latency_target_us\": 1}") == -1);
	CHECK(strstr(why, "reservation_iops"));
}

static void ceilings_objects_are_checked(void)
{
	struct ag_ceilings c;
	struct ag_err e;
	json_t *ok = obj("{\"total_iops_sec\": 5, \"total_iops_sec_max_length\": 5,"
			 " \"latency_target_us\": 500}");
	json_t *unk = obj("{\"x\": 1}"), *per = obj("{\"total_iops_sec_per_gb\": 5}");
	json_t *neg = obj("{\"weight\": -1}"), *big = obj("{\"weight\": 9007199254740993}");
	json_t *lneg = obj("{\"latency_target_us\": -1}"), *lstr = obj("{\"latency_target_us\": \"1\"}");
	json_t *back;

	CHECK(ag_ceilings_from_json(&c, ok, &e) == 0);
	back = ag_ceilings_to_json(&c);
	CHECK(back && json_equal(back, ok));
	CHECK(ag_ceilings_from_json(&c, unk, &e) == -1);
	CHECK(ag_ceilings_from_json(&c, per, &e) == -1 && strstr(e.msg, "total_iops_sec_per_gb"));
	CHECK(ag_ceilings_from_json(&c, neg, &e) == -1 && strstr(e.msg, "weight"));
	CHECK(ag_ceilings_from_json(&c, big, &e) == -1 && strstr(e.msg, "weight"));
	CHECK(ag_ceilings_from_json(&c, lneg, &e) == -1 && !strncmp(e.msg, "latency_target_us:", 18));
	CHECK(ag_ceilings_from_json(&c, lstr, &e) == -1 && !strncmp(e.msg, "latency_target_us:", 18));
	json_decref(ok);
	json_decref(back);
	json_decref(unk);
	json_decref(per);
	json_decref(neg);
	json_decref(big);
	json_decref(lneg);
	json_decref(lstr);
}

/* The core's validator holds a typed config to the parser's ranges. */
static void validator_holds_the_ranges(void)
{
	struct sl_config cfg;
	const char *err = NULL;

	sl_config_init(&cfg);
	CHECK(sl_config_validate(&cfg, &err) == 0);
	cfg.weight = 0;
	CHECK(sl_config_validate(&cfg, &err) == -1 && !strncmp(err, "weight:", 7));
	sl_config_init(&cfg);
	cfg.burst_s = SL_BURST_S_MAX + 1;
	CHECK(sl_config_validate(&cfg, &err) == -1 && !strncmp(err, "burst_s:", 8));
	sl_config_init(&cfg);
	cfg.avg[SL_IOPS] = 10;
	cfg.iops_size = 100;
	CHECK(sl_config_validate(&cfg, &err) == -1 && !strncmp(err, "iops_size:", 10));
}

static const struct unit_test tests[] = {
	UNIT_TEST(policy_fields_map_to_target_keys_in_canonical_order),
	UNIT_TEST(policy_rejects_bad_values_naming_the_field),
	UNIT_TEST(policy_round_trips_through_json_and_the_store),
	UNIT_TEST(store_text_is_checked_word_by_word),
	UNIT_TEST(per_gb_fields_scale_with_the_size),
	UNIT_TEST(latency_target_is_checked_naming_the_field),
	UNIT_TEST(policy_merge_sets_and_removes_or_changes_nothing),
	UNIT_TEST(policy_errors_speak_the_api_names),
	UNIT_TEST(ceilings_bound_rates_and_forbid_unlimited),
	UNIT_TEST(ceilings_bound_bursts_and_their_length),
	UNIT_TEST(ceilings_bound_every_other_field),
	UNIT_TEST(ceilings_bound_the_latency_target_from_below),
	UNIT_TEST(ceilings_objects_are_checked),
	UNIT_TEST(validator_holds_the_ranges),
};

UNIT_MAIN("policy", tests)
