// SPDX-License-Identifier: GPL-2.0
/*
 * Randomly mutated API requests against the daemon's own handlers, its real
 * store and (in the guest) the real kernel, in-process:
 *
 *   sluice-fuzz-api <state dir> <pool device> <count> <seed>
 *
 * With "-" for the device (host tests, under ASan and UBSan, no kernel) the
 * state is made directly with a pool and two volumes, and requests that
 * reach the kernel fail there: a 5xx is then only counted, and the run is
 * for memory safety of the request handling.
 *
 * Valid requests for every endpoint are mutated (bytes of the body flipped,
 * inserted or cut, numbers swapped for hostile ones, methods, paths, tokens,
 * content types and If-Match changed). Every answer must be below 500, and
 * after every rejected one (4xx) the store's rows must be what they were.
 * Deletes are finished between requests. The first violation is printed and
 * the exit status is 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdevmapper.h>
#include <sqlite3.h>

#include "../../agent/dmctl.h"
#include "../../agent/jobs.h"
#include "../../agent/ops.h"
#include "../../api/api.h"
#include "fuzz_api.h"

/* without a kernel, libdevmapper's complaints are expected */
static void quiet_dm_log(int level, const char *file, int line, int dm_errno, const char *f, ...)
{
	(void)level, (void)file, (void)line, (void)dm_errno, (void)f;
}

static char admin[AP_TOKEN_LEN + 1], tok1[AP_TOKEN_LEN + 1], tok2[AP_TOKEN_LEN + 1];
static struct ap_ctx ctx;
static struct ag_agent agent;
static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(rng >> 33) % n;
}

struct seed {
	const char *method;
	const char *path;
	const char *body;
};

static const struct seed seeds[] = {
	{ "GET", "/v1/health", NULL },
	{ "GET", "/v1/pools", NULL },
	{ "GET", "/v1/pools/p0", NULL },
	{ "POST", "/v1/pools", "{\"name\":\"p1\",\"device\":\"/dev/ram0\",\"force\":true}" },
	{ "GET", "/v1/tenants", NULL },
	{ "POST", "/v1/tenants", "{\"id\":\"t3\",\"ceilings\":{\"total_iops_sec\":100}}" },
	{ "GET", "/v1/tenants/t1", NULL },
	{ "DELETE", "/v1/tenants/t3", NULL },
	{ "GET", "/v1/tenants/t1/volumes", NULL },
	{ "POST", "/v1/tenants/t1/volumes",
	  "{\"name\":\"v3\",\"pool\":\"p0\",\"size_bytes\":67108864,"
	  "\"policy\":{\"total_iops_sec\":500,\"weight\":100}}" },
	{ "GET", "/v1/volumes", NULL },
	{ "GET", "/v1/volumes/v1", NULL },
	{ "PATCH", "/v1/volumes/v1",
	  "{\"policy\":{\"read_iops_sec\":300,\"read_iops_sec_max\":600,"
	  "\"read_iops_sec_max_length\":2,\"write_bytes_sec\":1048576}}" },
	{ "PATCH", "/v1/volumes/v2", "{\"policy\":{\"weight\":50,\"reservation_iops\":10,"
	  "\"total_iops_sec\":200,\"size_iops_sec\":8192}}" },
	{ "PATCH", "/v1/volumes/v1", "{\"policy\":{\"latency_target_us\":2000,\"weight\":300}}" },
	{ "PATCH", "/v1/volumes/v1", "{\"size_bytes\":134217728}" },
	{ "PATCH", "/v1/volumes/v2", "{\"size_bytes\":201326592,\"policy\":"
	  "{\"write_iops_sec_per_gb\":1000,\"write_iops_sec_per_gb_min\":50,\"weight\":5}}" },
	{ "POST", "/v1/tenants/t1/volumes",
	  "{\"name\":\"v4\",\"pool\":\"p0\",\"size_bytes\":67108864,"
	  "\"policy\":{\"total_bytes_sec_per_gb\":1048576,\"read_iops_sec_max\":9}}" },
	{ "PUT", "/v1/volumes/v2", "{\"policy\":{\"total_bytes_sec\":2097152}}" },
	{ "DELETE", "/v1/volumes/t1.v3", NULL },
	{ "GET", "/v1/volumes/v1/stats", NULL },
	{ "GET", "/metrics", NULL },
};

static const char *const hostile[] = {
	"-1", "0", "1.5", "1e400", "99999999999999999999", "9007199254740993", "\"7\"", "null",
	"true", "[]", "{}", "-0", "4294967296", "18446744073709551615", "\"\"", "1e2",
};

static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "" };

static void mutate_body(char *b, size_t *len, size_t cap)
{
	size_t at = *len ? rnd(*len) : 0;
	const char *h;
	char *num;

	switch (rnd(5)) {
	case 0:		/* flip a byte */
		if (*len)
			b[at] ^= (char)(1 << rnd(8));
		break;
	case 1:		/* insert a structural byte */
		if (*len + 1 < cap) {
			memmove(b + at + 1, b + at, *len - at);
			b[at] = "{}[]\",:0-.e\\ \x01"[rnd(14)];
			(*len)++;
		}
		break;
	case 2:		/* cut the rest */
		*len = at;
		break;
	default:	/* a number becomes a hostile value */
		b[*len] = '\0';
		num = strpbrk(b + at, "0123456789");
		if (!num)
			num = strpbrk(b, "0123456789");
		h = hostile[rnd(sizeof(hostile) / sizeof(hostile[0]))];
		if (num && *len + strlen(h) < cap) {
			size_t n = strspn(num, "0123456789"), off = num - b;

			memmove(num + strlen(h), num + n, *len - off - n);
			memcpy(num, h, strlen(h));
			*len = *len - n + strlen(h);
		}
		break;
	}
	b[*len] = '\0';
}

char *fuzz_api_state(const char *dir, size_t *len)
{
	static const char *const tables[] = { "pools", "tenants", "volumes" };
	char path[512], sql[64], *buf = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	FILE *f = open_memstream(&buf, len);
	size_t t;
	int i;

	snprintf(path, sizeof(path), "%s/state.db", dir);
	if (!f || sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		if (f)
			fclose(f);
		sqlite3_close(db);
		return buf;
	}
	for (t = 0; t < 3; t++) {
		snprintf(sql, sizeof(sql), "SELECT * FROM %s ORDER BY 1", tables[t]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			for (i = 0; i < sqlite3_column_count(st); i++)
				fprintf(f, "%s|", (const char *)sqlite3_column_text(st, i));
			fputc('\n', f);
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	fclose(f);
	return buf;
}

static unsigned int send_req(const char *tok, const char *method, const char *path,
			     const char *ct, const char *im, const char *body, size_t len,
			     char **out)
{
	char auth[128];
	struct ap_request r = { .method = method, .path = path, .content_type = ct,
				.if_match = im, .body = body, .body_len = len };
	struct ap_response resp;

	if (tok) {
		snprintf(auth, sizeof(auth), "Bearer %s", tok);
		r.authorization = auth;
	}
	ap_handle(&ctx, &r, &resp);
	if (out)
		*out = resp.body;
	else
		free(resp.body);
	return resp.status;
}

static void token_of(const char *body, char *tok)
{
	const char *t = body ? strstr(body, "\"token\":\"") : NULL;

	tok[0] = '\0';
	if (t && strlen(t + 9) >= AP_TOKEN_LEN) {
		memcpy(tok, t + 9, AP_TOKEN_LEN);
		tok[AP_TOKEN_LEN] = '\0';
	}
}

/* the tenants and volumes the seeds name, made again when a request removed them */
static void populate(void)
{
	char *out;

	if (send_req(admin, "POST", "/v1/tenants", "application/json", NULL,
		     "{\"id\":\"t1\",\"ceilings\":{\"total_iops_sec\":1000}}", 49, &out) == 201)
		token_of(out, tok1);
	free(out);
	if (send_req(admin, "POST", "/v1/tenants", "application/json", NULL, "{\"id\":\"t2\"}", 11,
		     &out) == 201)
		token_of(out, tok2);
	free(out);
	send_req(admin, "POST", "/v1/tenants/t1/volumes", "application/json", NULL,
		 "{\"id\":\"v1\",\"pool\":\"p0\",\"size_bytes\":67108864,\"policy\":{\"total_iops_sec\":800}}",
		 84, NULL);
	send_req(admin, "POST", "/v1/tenants/t2/volumes", "application/json", NULL,
		 "{\"id\":\"v2\",\"pool\":\"p0\",\"size_bytes\":67108864}", 50, NULL);
}

int fuzz_api_run(int argc, char **argv)
{
	unsigned long count, i, by_class[6] = { 0 };
	char err[512], body[4096], path[256], method[16];
	struct ag_model m;
	struct ag_err e;
	bool host;
	int rc = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s <state dir> <pool device> <count> <seed>\n", argv[0]);
		return 2;
	}
	count = strtoul(argv[3], NULL, 10);
	rng = strtoull(argv[4], NULL, 10);
	host = !strcmp(argv[2], "-");
	if (host)
		dm_log_with_errno_init(quiet_dm_log);
	if (ag_agent_open(&agent, argv[1], 0, !host, &e)) {
		fprintf(stderr, "store: %s\n", e.msg);
		return 2;
	}
	ctx.agent = &agent;
	if (ap_token_new(admin) || ap_token_hash(admin, ctx.admin_hash))
		return 2;
	if (host) {
		char h1[AP_HASH_HEX + 1], h2[AP_HASH_HEX + 1];
		json_t *st;

		if (ap_token_new(tok1) || ap_token_hash(tok1, h1) || ap_token_new(tok2) ||
		    ap_token_hash(tok2, h2))
			return 2;
		st = json_pack("{s:{s:{s:s, s:I}}, s:{s:{s:s, s:{s:i, s:i}}, s:{s:s}},"
			       " s:{s:{s:s, s:s, s:I, s:[[I, I]], s:s, s:s},"
			       " s:{s:s, s:s, s:I, s:[[I, I]], s:s, s:s}}}",
			       "pools", "p0", "device", "/dev/null", "extents", (json_int_t)8,
			       "tenants", "t1", "token_sha256", h1, "ceilings", "total_iops_sec", 1000,
			       "latency_target_us", 1000,
			       "t2", "token_sha256", h2,
			       "volumes",
			       "v1", "tenant", "t1", "pool", "p0", "size", (json_int_t)67108864,
			       "runs", (json_int_t)1, (json_int_t)1, "policy", "iops=800",
			       "state", "ready",
			       "v2", "tenant", "t2", "pool", "p0", "size", (json_int_t)67108864,
			       "runs", (json_int_t)2, (json_int_t)1, "policy", "", "state", "ready");
		rc = !st || ag_model_from_json(&m, st, err, sizeof(err)) ? 1 : 0;
		json_decref(st);
		if (rc) {
			fprintf(stderr, "state: %s\n", err);
			return 2;
		}
		rc = ag_state_replace(&agent, &m, &e);
		ag_model_free(&m);
		if (rc) {
			fprintf(stderr, "state: %s\n", e.msg);
			return 2;
		}
	} else if (ag_pool_add(&agent, "p0", argv[2], false, 0, 0, &e)) {
		fprintf(stderr, "pool: %s\n", e.msg);
		return 2;
	}
	populate();
	for (i = 0; i < count && !rc; i++) {
		const struct seed *s = &seeds[rnd(sizeof(seeds) / sizeof(seeds[0]))];
		const char *tok = s->path[3] == 'p' || s->path[1] == 'm' ? admin : tok1;
		const char *ct = "application/json", *im = NULL;
		size_t len = s->body ? strlen(s->body) : 0, before_len, after_len;
		char *before, *after, *out = NULL;
		unsigned int st, m, n = 1 + rnd(3);

		memcpy(body, s->body ? s->body : "", len + 1);
		snprintf(path, sizeof(path), "%s", s->path);
		snprintf(method, sizeof(method), "%s", s->method);
		if (rnd(4) == 0)
			tok = admin;
		for (m = 0; m < n; m++) {
			switch (rnd(10)) {
			case 0:
				snprintf(method, sizeof(method), "%s", methods[rnd(8)]);
				break;
			case 1: {
				size_t at = rnd(strlen(path) + 1);

				path[at] = "/aZ%.*?-1\x7f"[rnd(10)];
				break;
			}
			case 2:
				tok = (const char *[]){ admin, tok1, tok2, NULL, "zz" }[rnd(5)];
				break;
			case 3:
				ct = (const char *[]){ "text/plain", NULL, "application/jsonx",
						       "APPLICATION/JSON; charset=utf-8" }[rnd(4)];
				break;
			case 4:
				im = (const char *[]){ "\"00000000\"", "*", "", "\"" }[rnd(4)];
				break;
			default:
				mutate_body(body, &len, sizeof(body) - 1);
				break;
			}
		}
		ag_jobs_run_deletes(&agent, &e);
		before = fuzz_api_state(argv[1], &before_len);
		st = send_req(tok && !strcmp(tok, "zz") ? "zz" : tok, method, path, ct, im, body, len,
			      &out);
		after = fuzz_api_state(argv[1], &after_len);
		by_class[st / 100 < 6 ? st / 100 : 0]++;
		if (host && st >= 500 && !(s->method[0] == 'G' && !strcmp(method, "GET"))) {
			;	/* the kernel was asked, and there is none */
		} else if (st >= 500 || st < 200) {
			printf("FAIL: %s %s [%s] -> %u %s\n", method, path, body, st, out ? out : "");
			rc = 1;
		} else if (st >= 400 && (before_len != after_len || memcmp(before, after, before_len))) {
			printf("FAIL: %s %s [%s] -> %u changed the state\n", method, path, body, st);
			rc = 1;
		}
		free(out);
		free(before);
		free(after);
		if (i % 250 == 249)
			populate();
	}
	printf("%lu requests: %lu 2xx, %lu 4xx, %lu 5xx\n", i, by_class[2], by_class[4], by_class[5]);
	ag_agent_close(&agent);
	return rc;
}
