// SPDX-License-Identifier: GPL-2.0
/* The agent's durable state store: round trips, torn and corrupt files. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "../../agent/store.h"

static char dir[64];

static void fresh_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/sluice-store-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

static void cleanup(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/state.json", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/state.json.tmp", dir);
	unlink(p);
	rmdir(dir);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	fwrite(buf, 1, len, f);
	fclose(f);
}

static void store_crc32c_known_value(void)
{
	CHECK_EQ_U64(ag_crc32c(0, "123456789", 9), 0xe3069283u);
}

static void store_empty_then_round_trip(void)
{
	struct ag_store s;
	json_t *st, *back;
	char err[256];

	fresh_dir();
	CHECK(ag_store_open(&s, dir) == 0);
	CHECK(ag_store_load(&s, &st, err, sizeof(err)) == 0);
	CHECK(json_is_object(st) && json_object_size(st) == 0);
	CHECK_EQ_U64(s.generation, 0);
	json_object_set_new(st, "volumes", json_pack("[{s:s, s:I}]", "id", "v1", "size", 1LL << 40));
	CHECK(ag_store_save(&s, st, err, sizeof(err)) == 0);
	CHECK(ag_store_save(&s, st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(s.generation, 2);
	ag_store_close(&s);

	CHECK(ag_store_open(&s, dir) == 0);
	CHECK(ag_store_load(&s, &back, err, sizeof(err)) == 0);
	CHECK_EQ_U64(s.generation, 2);
	CHECK(json_equal(st, back));
	json_decref(st);
	json_decref(back);
	ag_store_close(&s);
	cleanup();
}

/*
 * Every truncation of a saved document (a torn write without the rename
 * protocol) and every single-byte change fails to load, and then the store
 * refuses to write over the file.
 */
static void store_torn_and_corrupt_documents_refused(void)
{
	struct ag_store s;
	json_t *st;
	char err[256], path[128];
	char *good, *bad, *last;
	size_t len, cut, i, refused = 0, tried = 0;

	fresh_dir();
	snprintf(path, sizeof(path), "%s/state.json", dir);
	CHECK(ag_store_open(&s, dir) == 0);
	CHECK(ag_store_load(&s, &st, err, sizeof(err)) == 0);
	json_object_set_new(st, "tenants", json_pack("[{s:s},{s:s}]", "id", "acme", "id", "zeta"));
	CHECK(ag_store_save(&s, st, err, sizeof(err)) == 0);
	json_decref(st);
	ag_store_close(&s);
	good = slurp(path, &len);
	CHECK(good && len > 50);

	for (cut = 0; cut + 1 < len; cut++) {	/* the last byte is the newline */
		spit(path, good, cut);
		CHECK(ag_store_open(&s, dir) == 0);
		tried++;
		if (ag_store_load(&s, &st, err, sizeof(err))) {
			refused++;
			CHECK(s.poisoned);
			st = json_object();
			CHECK(ag_store_save(&s, st, err, sizeof(err)) != 0);
			CHECK(strstr(err, "not written"));
		}
		json_decref(st);
		ag_store_close(&s);
	}
	CHECK_EQ_U64(refused, tried);

	bad = malloc(len);
	last = malloc(len);
	for (i = 0; i < len; i++) {
		char orig = good[i];
		int accepted;

		memcpy(bad, good, len);
		bad[i] = orig == 'x' ? 'y' : orig == ' ' || orig == '\n' ? orig : 'x';
		if (bad[i] == orig)
			continue;	/* whitespace: the same document */
		spit(path, bad, len);
		memcpy(last, bad, len);
		CHECK(ag_store_open(&s, dir) == 0);
		accepted = ag_store_load(&s, &st, err, sizeof(err)) == 0;
		if (accepted) {
			char msg[96];

			snprintf(msg, sizeof(msg), "changed byte %zu accepted", i);
			json_decref(st);
			ag_store_close(&s);
			unit_fail(__FILE__, __LINE__, msg);
			free(bad);
			free(last);
			free(good);
			cleanup();
			return;
		}
		ag_store_close(&s);
	}
	/* and the file is exactly what was put there: nothing wrote over it */
	{
		size_t l2;
		char *now = slurp(path, &l2);

		bool same = l2 == len && !memcmp(now, last, len);

		free(now);
		CHECK(same);
	}
	free(bad);
	free(last);
	free(good);
	cleanup();
}

/* A temporary file left by a crash before the rename is ignored. */
static void store_leftover_tmp_ignored(void)
{
	struct ag_store s;
	json_t *st;
	char err[256], tmp[128];

	fresh_dir();
	CHECK(ag_store_open(&s, dir) == 0);
	CHECK(ag_store_load(&s, &st, err, sizeof(err)) == 0);
	json_object_set_new(st, "k", json_string("v"));
	CHECK(ag_store_save(&s, st, err, sizeof(err)) == 0);
	json_decref(st);
	ag_store_close(&s);
	snprintf(tmp, sizeof(tmp), "%s/state.json.tmp", dir);
	spit(tmp, "{\"format\": \"sluice-st", 21);
	CHECK(ag_store_open(&s, dir) == 0);
	CHECK(ag_store_load(&s, &st, err, sizeof(err)) == 0);
	CHECK(!strcmp(json_string_value(json_object_get(st, "k")), "v"));
	CHECK_EQ_U64(s.generation, 1);
	json_decref(st);
	ag_store_close(&s);
	cleanup();
}

static void store_other_format_refused(void)
{
	struct ag_store s;
	json_t *st;
	char err[256], path[128];
	static const char *docs[] = {
		"[]",
		"{\"format\": \"other\", \"version\": 1, \"generation\": 1, \"checksum\": \"0\", \"state\": {}}",
		"{\"format\": \"sluice-state\", \"version\": 2, \"generation\": 1, \"checksum\": \"0\", \"state\": {}}",
		"{\"format\": \"sluice-state\", \"version\": 1, \"generation\": 1, \"checksum\": \"0\", \"state\": []}",
		"{\"format\": \"sluice-state\", \"format\": \"sluice-state\", \"version\": 1}",
	};
	size_t i;

	fresh_dir();
	snprintf(path, sizeof(path), "%s/state.json", dir);
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		spit(path, docs[i], strlen(docs[i]));
		CHECK(ag_store_open(&s, dir) == 0);
		CHECK(ag_store_load(&s, &st, err, sizeof(err)) != 0);
		CHECK(strstr(err, path));
		ag_store_close(&s);
	}
	cleanup();
}

static const struct unit_test tests[] = {
	UNIT_TEST(store_crc32c_known_value),
	UNIT_TEST(store_empty_then_round_trip),
	UNIT_TEST(store_torn_and_corrupt_documents_refused),
	UNIT_TEST(store_leftover_tmp_ignored),
	UNIT_TEST(store_other_format_refused),
};

UNIT_MAIN("store", tests)
