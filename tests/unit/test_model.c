// SPDX-License-Identifier: GPL-2.0
/* The agent's model: state checks and the tables built from it. */
#include <string.h>

#include "unit.h"
#include "../../agent/model.h"

static int load(struct ag_model *m, const char *text, char *err, size_t len)
{
	json_error_t jerr;
	json_t *st = json_loads(text, 0, &jerr);
	int rc;

	if (!st)
		return -2;
	rc = ag_model_from_json(m, st, err, len);
	json_decref(st);
	return rc;
}

#define POOL "\"pools\": {\"disk1\": {\"device\": \"/dev/vdb\", \"extents\": 100}}"

static void model_tables_of_a_two_run_volume(void)
{
	struct ag_model m;
	char err[256], data[1024], top[1024];

	CHECK(load(&m, "{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"acme\", \"pool\": \"disk1\","
		  " \"size\": 100663296, \"runs\": [[1, 1], [5, 1]], \"policy\": \"riops=100 weight=300\","
		  " \"state\": \"ready\"}}}", err, sizeof(err)) == 0);
	CHECK_EQ_U64(m.nr_vols, 1);
	CHECK(ag_data_table(&m.vols[0], "254:16", data, sizeof(data)) == 0);
	CHECK(!strcmp(data, "0 131072 linear 254:16 131072\n131072 131072 linear 254:16 655360"));
	CHECK(ag_sluice_table(&m.vols[0], NULL, "253:0", top, sizeof(top)) == 0);
	CHECK(!strcmp(top, "0 196608 sluice 253:0 0 4 riops=100 pool=disk1 weight=300 tenant=acme"));
	ag_model_free(&m);
}

static void model_rejects_bad_states(void)
{
	static const char *const bad[] = {
		"{\"pools\": []}",
		"{\"pools\": {\"Disk\": {\"device\": \"/dev/vdb\", \"extents\": 10}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"nope\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1-data\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 67109376,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 513,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"bps=5 rbps=5\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"pool=x\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[99, 2]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 2]], \"policy\": \"\", \"state\": \"ready\"},"
		" \"v2\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[2, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"gone\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"agent_policy\": \"weight=1:0\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"agent_policy\": 5, \"state\": \"ready\"}}}",
		/* an id that is not its tenant's and name's, or a name it does not say */
		"{" POOL ", \"volumes\": {\"b.v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"a.v1\": {\"tenant\": \"a\", \"name\": \"v2\", \"pool\": \"disk1\","
		" \"size\": 512, \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"name\": \"v2\", \"pool\": \"disk1\","
		" \"size\": 512, \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"a.b.c\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"},"
		" \"a.v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[2, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
		/* hosts and exports: bad keys, bad or shared NQNs, an export to no host of its tenant */
		"{" POOL ", \"hosts\": {\"a\": {\"nqn\": \"nqn.x\"}}}",
		"{" POOL ", \"hosts\": {\"a/h\": {\"nqn\": \"iqn.x\"}}}",
		"{" POOL ", \"hosts\": {\"a/h\": {\"nqn\": \"nqn.x\"}, \"b/h\": {\"nqn\": \"nqn.x\"}}}",
		"{" POOL ", \"volumes\": {\"v1\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}},"
		" \"hosts\": {\"b/h\": {\"nqn\": \"nqn.x\"}}, \"exports\": {\"v1/h\": {}}}",
		"{" POOL ", \"hosts\": {\"a/h\": {\"nqn\": \"nqn.x\"}}, \"exports\": {\"v9/h\": {}}}",
		"{" POOL ", \"volumes\": {\"a.\": {\"tenant\": \"a\", \"pool\": \"disk1\", \"size\": 512,"
		" \"runs\": [[1, 1]], \"policy\": \"\", \"state\": \"ready\"}}}",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ag_model m;
		char err[256] = "";
		int rc = load(&m, bad[i], err, sizeof(err));

		if (rc != -1) {
			char msg[64];

			snprintf(msg, sizeof(msg), "bad state %zu accepted (%d)", i, rc);
			if (!rc)
				ag_model_free(&m);
			unit_fail(__FILE__, __LINE__, msg);
			return;
		}
		CHECK(!strncmp(err, "state: ", 7));
	}
}

/* the policy in force of base and apolicy at size, or "ERR <why>" */
static const char *scaled(const char *base, const char *apolicy, uint64_t size)
{
	static char out[1024];
	char words[256];
	struct ag_policy p;
	struct ag_err e;

	if (ag_policy_parse(&p, base, apolicy, &e) ||
	    ag_policy_format(&p, size, "p", out, sizeof(out), words, sizeof(words), &e))
		snprintf(out, sizeof(out), "ERR %s", e.msg);
	return out;
}

static uint64_t dirty_max(const char *apolicy)
{
	struct ag_policy p;
	struct ag_err e;

	return ag_policy_parse(&p, "", apolicy, &e) ? UINT64_MAX : p.dirty_bytes_max;
}

static void model_scales_rates_with_size_and_floors(void)
{
	const uint64_t gib = 1ULL << 30;

	CHECK(!strcmp(scaled("weight=5", "riops=10:0", 3 * gib), "riops=30 weight=5"));
	/* pro rata, rounded down: 1.5 GiB at 10/GiB */
	CHECK(!strcmp(scaled("", "riops=10:0", gib + gib / 2), "riops=15"));
	/* the floor, and never 0 (that would be no limit) */
	CHECK(!strcmp(scaled("", "riops=10:100", gib), "riops=100"));
	CHECK(!strcmp(scaled("", "riops=10:0", 512), "riops=1"));
	/* a stored value of the scaled rate gives way; others keep their order */
	CHECK(!strcmp(scaled("rbps=7 riops=5 weight=2", "riops=1:0 wbps=2:0", 4 * gib),
		      "rbps=7 wbps=8 riops=4 weight=2"));
	/* huge sizes saturate at 2^53 rather than wrap */
	CHECK(!strcmp(scaled("", "iops=9007199254740992:0", 1ULL << 62), "iops=9007199254740992"));
	/* the target's rules hold for the result: a burst below its rate */
	CHECK(!strncmp(scaled("riops_max=50", "riops=10:0", 10 * gib), "ERR read_iops_sec_max: must",
		       27));
	CHECK(!strcmp(scaled("riops_max=50", "riops=10:0", 5 * gib), "riops=50 riops_max=50"));
	/* dirty_bytes_max is the monitor's, not the target's */
	CHECK(!strcmp(scaled("weight=5", "dirty_bytes_max=1048576 riops=10:0", gib),
		      "riops=10 weight=5 dirty_strict=1"));
	/* and without it, none */
	CHECK(!strcmp(scaled("riops=10 dirty_strict=1", "", gib), "riops=10"));
	CHECK(dirty_max("riops=10:0 dirty_bytes_max=1048576") == 1048576);
	CHECK(dirty_max("riops=10:0") == 0);
	CHECK(!strncmp(scaled("", "dirty_bytes_max=0", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strncmp(scaled("", "dirty_bytes_max=5 dirty_bytes_max=6", gib), "ERR agent_policy: bad", 21));
	CHECK(!strncmp(scaled("", "dirty_bytes_max=+5", gib), "ERR agent_policy: bad", 21));
	/* bad agent_policy words */
	CHECK(!strncmp(scaled("", "riops=0:5", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strncmp(scaled("", "riops=-1:5", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strncmp(scaled("", "riops=1:5 riops=2:0", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strncmp(scaled("", "weight=1:0", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strncmp(scaled("", "riops=1", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strncmp(scaled("", "riops=1:2x", gib), "ERR agent_policy: bad word", 26));
	CHECK(!strcmp(scaled("", "", gib), ""));
}

static void model_ids(void)
{
	CHECK(ag_valid_id("a"));
	CHECK(ag_valid_id("vol-1"));
	CHECK(!ag_valid_id(""));
	CHECK(!ag_valid_id("Vol"));
	CHECK(!ag_valid_id("a/b"));
	CHECK(!ag_valid_id("x-data"));
	CHECK(!ag_valid_id("0123456789012345678901234567890123456789012345678"));
	CHECK(!ag_valid_id("a.b"));
	/* a volume's: an id, or a tenant's and a name joined by '.' */
	CHECK(ag_valid_volume_id("db") && ag_valid_volume_id("acme.db"));
	CHECK(!ag_valid_volume_id("acme.") && !ag_valid_volume_id(".db"));
	CHECK(!ag_valid_volume_id("a.b.c") && !ag_valid_volume_id("a.db-data"));
	CHECK(!ag_valid_volume_id("0123456789012345678901234567890123456789012345678.db"));
	CHECK(ag_valid_volume_id("012345678901234567890123456789012345678901234567."
				 "012345678901234567890123456789012345678901234567"));
}

static const struct unit_test tests[] = {
	UNIT_TEST(model_tables_of_a_two_run_volume),
	UNIT_TEST(model_rejects_bad_states),
	UNIT_TEST(model_scales_rates_with_size_and_floors),
	UNIT_TEST(model_ids),
};

UNIT_MAIN("model", tests)
