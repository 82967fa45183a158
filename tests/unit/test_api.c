// SPDX-License-Identifier: GPL-2.0
/*
 * The API's request handling on the host, under ASan and UBSan in the
 * sanitizer build: 10,000 mutated requests (fuzz_api.c, host mode: no
 * kernel) must not crash, leak or change the state on a rejected request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include "unit.h"
#include "fuzz_api.h"
#include "../../agent/jobs.h"
#include "../../api/api.h"
#include "../../api/idem.h"
#include "../../api/auth.h"

static void api_survives_10000_mutated_requests(void)
{
	char dir[] = "/tmp/sluice-api-XXXXXX", count[] = "10000", seed[] = "12345";
	char name[] = "test_api", dev[] = "-", cmd[64];
	char *argv[] = { name, dir, dev, count, seed, NULL };
	int rc;

	CHECK(mkdtemp(dir));
	/* a line for each tenant made and dropped, an audit line a request: noise here */
	setenv("SLUICED_LOG", "error", 1);
	rc = fuzz_api_run(5, argv);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	CHECK(rc == 0);
}

/* the contents of dir/name into buf, or "" */
static void slurp(const char *dir, const char *name, char *buf, size_t len)
{
	char path[256];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/*
 * The admin token is made whole or not at all: it appears by a rename of a
 * synced file, and an empty admin.token (what a crash during the old
 * in-place write left, after which the daemon never started again) is made
 * anew. A file that holds something other than a token is still refused.
 */
static void admin_token_survives_a_crash_while_made(void)
{
	char dir[] = "/tmp/sluice-token-XXXXXX", tok[AP_TOKEN_LEN + 1], again[AP_TOKEN_LEN + 1];
	char path[256], text[256], err[256], cmd[64];
	bool made;
	FILE *f;

	CHECK(mkdtemp(dir));
	CHECK(ap_admin_token(dir, tok, &made, err, sizeof(err)) == 0 && made);
	slurp(dir, "admin.token", text, sizeof(text));
	CHECK(strlen(text) == AP_TOKEN_LEN + 1 && !strncmp(text, tok, AP_TOKEN_LEN));
	snprintf(path, sizeof(path), "%s/admin.token.tmp", dir);
	CHECK(access(path, F_OK) != 0);
	CHECK(ap_admin_token(dir, again, &made, err, sizeof(err)) == 0 && !made);
	CHECK(!strcmp(tok, again));
	/* a crash between create and write left it empty */
	snprintf(path, sizeof(path), "%s/admin.token", dir);
	f = fopen(path, "w");
	CHECK(f);
	fclose(f);
	CHECK(ap_admin_token(dir, again, &made, err, sizeof(err)) == 0 && made);
	slurp(dir, "admin.token", text, sizeof(text));
	CHECK(!strncmp(text, again, AP_TOKEN_LEN));
	/* something else is not overwritten */
	f = fopen(path, "w");
	CHECK(f);
	fputs("not a token\n", f);
	fclose(f);
	CHECK(ap_admin_token(dir, again, &made, err, sizeof(err)) != 0);
	CHECK(strstr(err, "not a token"));
	slurp(dir, "admin.token", text, sizeof(text));
	CHECK(!strcmp(text, "not a token\n"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* Requests from several threads at once, through the handlers. */
#define WRITERS 8
#define PER_WRITER 40

static struct ap_ctx cctx;
static char ctok[4][AP_TOKEN_LEN + 1];
static int reader_stop;

static unsigned int call(const char *tok, const char *method, const char *path, const char *body,
			 char **out)
{
	char auth[128];
	struct ap_request r = { .method = method, .path = path, .authorization = auth,
				.q_limit = !strcmp(method, "GET") ? "1000" : NULL,
				.content_type = "application/json", .body = body,
				.body_len = body ? strlen(body) : 0 };
	struct ap_response resp;

	snprintf(auth, sizeof(auth), "Bearer %s", tok);
	ap_handle(&cctx, &r, &resp);
	if (out)
		*out = resp.body;
	else
		free(resp.body);
	return resp.status;
}

struct writer {
	int n;
	int failures;
};

static void *writer(void *arg)
{
	struct writer *w = arg;
	const char *tok = ctok[w->n % 4];
	char path[96], body[256];
	int k;

	for (k = 0; k < PER_WRITER; k++) {
		snprintf(path, sizeof(path), "/v1/tenants/t%d/volumes", w->n % 4);
		snprintf(body, sizeof(body), "{\"name\":\"v%d-%d\",\"pool\":\"p0\",\"size_bytes\":67108864,"
			 "\"policy\":{\"read_iops_sec\":%d}}", w->n, k, 100 + k);
		w->failures += call(tok, "POST", path, body, NULL) != 201;
		snprintf(path, sizeof(path), "/v1/volumes/t%d.v%d-%d", w->n % 4, w->n, k);
		w->failures += call(tok, "PATCH", path, "{\"policy\":{\"write_iops_sec\":50}}", NULL) != 200;
		/* another tenant's volume is not there for it */
		w->failures += call(ctok[(w->n + 1) % 4], "GET", path, NULL, NULL) != 404;
	}
	for (k = 0; k < PER_WRITER; k += 2) {
		snprintf(path, sizeof(path), "/v1/volumes/t%d.v%d-%d", w->n % 4, w->n, k);
		w->failures += call(tok, "DELETE", path, NULL, NULL) != 202;
	}
	return NULL;
}

static void *reader(void *arg)
{
	char *out;
	int *bad = arg;

	while (!__atomic_load_n(&reader_stop, __ATOMIC_ACQUIRE)) {
		unsigned int st = call(ctok[0], "GET", "/v1/volumes", NULL, &out);
		json_t *j = out ? json_loads(out, 0, NULL) : NULL;

		*bad += st != 200 || !json_is_array(json_object_get(j, "items"));
		json_decref(j);
		free(out);
	}
	return NULL;
}

/*
 * 8 writers (creates, changes, deletes of their own volumes, a look at
 * another tenant's) and 2 readers at once: every answer as it would be
 * alone, every volume on extents of its own, and the store afterwards what
 * the state held.
 */
static void api_serves_writers_and_readers_at_once(void)
{
	char dir[] = "/tmp/sluice-conc-XXXXXX", err[256], hash[4][AP_HASH_HEX + 1], cmd[64];
	struct writer w[WRITERS];
	pthread_t wt[WRITERS], rt[2];
	struct ag_agent agent;
	struct ag_model m;
	struct ag_err e;
	int bad[2] = { 0, 0 }, i;
	json_t *doc;

	CHECK(mkdtemp(dir));
	setenv("SLUICED_LOG", "warning", 1);
	for (i = 0; i < 4; i++)
		CHECK(ap_token_new(ctok[i]) == 0 && ap_token_hash(ctok[i], hash[i]) == 0);
	doc = json_pack("{s:{s:{s:s, s:I}}, s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}}}",
			"pools", "p0", "device", "/dev/null", "extents", (json_int_t)1024,
			"tenants", "t0", "token_sha256", hash[0], "t1", "token_sha256", hash[1],
			"t2", "token_sha256", hash[2], "t3", "token_sha256", hash[3]);
	CHECK(doc && ag_model_from_json(&m, doc, err, sizeof(err)) == 0);
	json_decref(doc);
	CHECK(ag_agent_open(&agent, dir, 0, false, &e) == 0);
	CHECK(ag_state_replace(&agent, &m, &e) == 0);
	ag_model_free(&m);
	cctx.agent = &agent;
	/* no admin here: tenants' tokens only */
	memset(cctx.admin_hash, 'x', AP_HASH_HEX);
	reader_stop = 0;
	for (i = 0; i < 2; i++)
		CHECK(pthread_create(&rt[i], NULL, reader, &bad[i]) == 0);
	for (i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ i, 0 };
		CHECK(pthread_create(&wt[i], NULL, writer, &w[i]) == 0);
	}
	for (i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	__atomic_store_n(&reader_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(rt[i], NULL);
	for (i = 0; i < WRITERS; i++)
		CHECK_EQ_U64(w[i].failures, 0);
	CHECK_EQ_U64(bad[0] + bad[1], 0);
	CHECK_EQ_U64(agent.st.vols.nr, WRITERS * PER_WRITER);
	CHECK(ag_jobs_run_deletes(&agent, &e) == 0);
	CHECK_EQ_U64(agent.st.vols.nr, WRITERS * PER_WRITER / 2);
	/* one extent each, none shared: the map and the count agree */
	CHECK_EQ_U64(ag_pool_used(ag_state_pool(&agent.st, "p0")), WRITERS * PER_WRITER / 2);
	ag_agent_close(&agent);
	/* the store holds what the state held */
	CHECK(ag_agent_open(&agent, dir, 0, false, &e) == 0);
	CHECK_EQ_U64(agent.st.vols.nr, WRITERS * PER_WRITER / 2);
	CHECK(ag_state_volume(&agent.st, "t3.v3-1")->policy.limits.avg[SL_RIOPS] == 101);
	CHECK(ag_state_volume(&agent.st, "t3.v3-1")->policy.limits.avg[SL_WIOPS] == 50);
	ag_agent_close(&agent);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

static unsigned int post_keyed(const char *tok, const char *path, const char *key,
			       const char *body, struct ap_response *resp)
{
	char auth[128];
	struct ap_request r = { .method = "POST", .path = path, .authorization = auth,
				.content_type = "application/json", .idempotency_key = key,
				.body = body, .body_len = strlen(body) };

	snprintf(auth, sizeof(auth), "Bearer %s", tok);
	ap_handle(&cctx, &r, resp);
	return resp->status;
}

/*
 * An agent without a kernel in a new directory (dir, a mkdtemp template),
 * with pool p0 (16 extents) and tenants t0 and t1, whose tokens are
 * ctok[0] and ctok[1]; the API's context on it.
 */
static void two_tenants(char *dir, struct ag_agent *agent)
{
	char err[256], hash[2][AP_HASH_HEX + 1];
	struct ag_model m;
	struct ag_err e;
	json_t *doc;
	int i;

	CHECK(mkdtemp(dir));
	for (i = 0; i < 2; i++)
		CHECK(ap_token_new(ctok[i]) == 0 && ap_token_hash(ctok[i], hash[i]) == 0);
	doc = json_pack("{s:{s:{s:s, s:I}}, s:{s:{s:s}, s:{s:s}}}", "pools", "p0", "device",
			"/dev/null", "extents", (json_int_t)16, "tenants", "t0", "token_sha256",
			hash[0], "t1", "token_sha256", hash[1]);
	CHECK(doc && ag_model_from_json(&m, doc, err, sizeof(err)) == 0);
	json_decref(doc);
	CHECK(ag_agent_open(agent, dir, 0, false, &e) == 0);
	CHECK(ag_state_replace(agent, &m, &e) == 0);
	ag_model_free(&m);
	cctx.agent = agent;
}

/*
 * A create retried with its Idempotency-Key gets the first answer again and
 * makes nothing more; the key with another body is refused; keys are each
 * caller's own.
 */
static void api_idempotency_key_replays_a_create(void)
{
	char dir[] = "/tmp/sluice-idem-XXXXXX", cmd[64];
	const char *body = "{\"name\":\"k1\",\"pool\":\"p0\",\"size_bytes\":67108864}";
	struct ap_response r1, r2, r3;
	struct ag_agent agent;
	char *first;
	int i;

	two_tenants(dir, &agent);
	cctx.idem = ap_idem_new();
	memset(cctx.admin_hash, 'x', AP_HASH_HEX);
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", "retry-1", body, &r1) == 201);
	CHECK(!r1.replayed);
	first = r1.body;
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", "retry-1", body, &r2) == 201);
	CHECK(r2.replayed && !strcmp(r2.body, first) && !strcmp(r2.location, r1.location));
	free(r2.body);
	CHECK_EQ_U64(agent.st.vols.nr, 1);
	/* without the key, the same body is a second create: 409 */
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", NULL, body, &r2) == 409);
	free(r2.body);
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", "retry-1",
			 "{\"name\":\"k2\",\"pool\":\"p0\",\"size_bytes\":67108864}", &r3) == 422);
	free(r3.body);
	/* another caller's key of the same name is its own */
	CHECK(post_keyed(ctok[1], "/v1/tenants/t1/volumes", "retry-1",
			 "{\"name\":\"k3\",\"pool\":\"p0\",\"size_bytes\":67108864}", &r3) == 201);
	CHECK(!r3.replayed);
	free(r3.body);
	CHECK(post_keyed(ctok[1], "/v1/tenants/t1/volumes", "bad key", body, &r3) == 400);
	free(r3.body);
	/* another caller's flood of keys does not push out this one's */
	for (i = 0; i < 2 * AP_IDEM_PER_CALLER; i++) {
		char key[24];

		snprintf(key, sizeof(key), "flood-%d", i);
		CHECK(post_keyed(ctok[1], "/v1/tenants", key, "{\"id\":\"x\"}", &r3) == 403);
		free(r3.body);
	}
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", "retry-1", body, &r2) == 201);
	CHECK(r2.replayed);
	free(r2.body);
	CHECK_EQ_U64(agent.st.vols.nr, 2);
	free(first);
	ap_idem_free(cctx.idem);
	cctx.idem = NULL;
	ag_agent_close(&agent);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/*
 * A volume's name is its tenant's: two tenants each make "db" (201 both:
 * the second learns nothing of the first), each sees and changes its own
 * only, and the other's id answers as an id that does not exist.
 */
static void api_names_are_the_tenants(void)
{
	char dir[] = "/tmp/sluice-names-XXXXXX", cmd[64];
	const char *body = "{\"name\":\"db\",\"pool\":\"p0\",\"size_bytes\":67108864}";
	struct ap_response r;
	struct ag_agent agent;
	char *out, *nowhere;
	json_t *j;

	setenv("SLUICED_LOG", "warning", 1);
	two_tenants(dir, &agent);
	memset(cctx.admin_hash, 'x', AP_HASH_HEX);
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", NULL, body, &r) == 201);
	CHECK(!strcmp(r.location, "/v1/volumes/t0.db"));
	j = json_loads(r.body, 0, NULL);
	CHECK(!strcmp(json_string_value(json_object_get(j, "id")), "t0.db"));
	CHECK(!strcmp(json_string_value(json_object_get(j, "name")), "db"));
	CHECK(!strcmp(json_string_value(json_object_get(j, "device")), "/dev/mapper/sluice-t0.db"));
	json_decref(j);
	free(r.body);
	CHECK(post_keyed(ctok[1], "/v1/tenants/t1/volumes", NULL, body, &r) == 201);
	CHECK(!strcmp(r.location, "/v1/volumes/t1.db"));
	free(r.body);
	CHECK(post_keyed(ctok[1], "/v1/tenants/t1/volumes", NULL, body, &r) == 409);
	free(r.body);
	CHECK_EQ_U64(agent.st.vols.nr, 2);
	/* t1 reaching t0's: the same answer as for an id nobody has */
	CHECK(call(ctok[1], "GET", "/v1/volumes/t0.db", NULL, &out) == 404);
	CHECK(call(ctok[1], "GET", "/v1/volumes/t0.nothing", NULL, &nowhere) == 404);
	CHECK(strstr(out, "no volume t0.db\"") && strstr(nowhere, "no volume t0.nothing\""));
	free(out);
	free(nowhere);
	CHECK(call(ctok[1], "PATCH", "/v1/volumes/t0.db", "{\"policy\":{\"riops\":1}}", NULL) == 404);
	CHECK(call(ctok[1], "DELETE", "/v1/volumes/t0.db", NULL, NULL) == 404);
	CHECK(call(ctok[1], "GET", "/v1/tenants/t0/volumes", NULL, NULL) == 404);
	/* its list is its own */
	CHECK(call(ctok[1], "GET", "/v1/volumes", NULL, &out) == 200);
	CHECK(strstr(out, "t1.db") && !strstr(out, "t0"));
	free(out);
	CHECK(call(ctok[1], "PATCH", "/v1/volumes/t1.db", "{\"policy\":{\"read_iops_sec\":7}}",
		   NULL) == 200);
	CHECK(ag_state_volume(&agent.st, "t1.db")->policy.limits.avg[SL_RIOPS] == 7);
	CHECK(ag_state_volume(&agent.st, "t0.db")->policy.limits.avg[SL_RIOPS] == 0);
	ag_agent_close(&agent);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/*
 * A host's DH-HMAC-CHAP secret: "generate" answers with a new secret once,
 * and it is never shown again (not in the host, not in the list, not in an
 * export's connect line); a supplied one is taken and not echoed; a bad or
 * mistyped one is refused naming the field and stores nothing.
 */
static void api_host_secrets_are_shown_once(void)
{
	char dir[] = "/tmp/sluice-dhchap-XXXXXX", cmd[64], secret[AG_DHCHAP_MAX + 1];
	const char *mine = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
	struct ap_response r;
	struct ag_agent agent;
	char *out;
	json_t *j;

	setenv("SLUICED_LOG", "warning", 1);
	two_tenants(dir, &agent);
	memset(cctx.admin_hash, 'x', AP_HASH_HEX);
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/hosts", NULL, "{\"name\":\"gen\",\"nqn\":"
			 "\"nqn.2014-08.example:gen\",\"dhchap_secret\":\"generate\"}", &r) == 201);
	j = json_loads(r.body, 0, NULL);
	CHECK(json_string_value(json_object_get(j, "dhchap_secret")));
	snprintf(secret, sizeof(secret), "%s", json_string_value(json_object_get(j, "dhchap_secret")));
	CHECK(ag_dhchap_valid(secret));
	CHECK(!strcmp(json_string_value(json_object_get(j, "authentication")), "dh-hmac-chap"));
	json_decref(j);
	free(r.body);
	CHECK(!strcmp(ag_state_host(&agent.st, "t0", "gen")->dhchap, secret));
	/* a retry with an Idempotency-Key does not show it again: it is a new request */
	cctx.idem = ap_idem_new();
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/hosts", "k-gen", "{\"name\":\"gen2\",\"nqn\":"
			 "\"nqn.2014-08.example:gen2\",\"dhchap_secret\":\"generate\"}", &r) == 201);
	CHECK(strstr(r.body, "DHHC-1") && r.secret);
	free(r.body);
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/hosts", "k-gen", "{\"name\":\"gen2\",\"nqn\":"
			 "\"nqn.2014-08.example:gen2\",\"dhchap_secret\":\"generate\"}", &r) == 409);
	CHECK(!r.replayed && !strstr(r.body, "DHHC-1"));
	free(r.body);
	ap_idem_free(cctx.idem);
	cctx.idem = NULL;
	/* the appliance's own prefix is no host's */
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/hosts", "{\"name\":\"own2\",\"nqn\":"
		   "\"nqn.2026-12.io.sluice:x:auth-probe\"}", &out) == 422);
	CHECK(strstr(out, "\"nqn\""));
	free(out);
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/hosts", NULL, "{\"name\":\"own\",\"nqn\":"
			 "\"nqn.2014-08.example:own\",\"dhchap_secret\":\"DHHC-1:00:AAECAwQFBgcICQoLDA0O"
			 "DxAREhMUFRYXGBkaGxwdHh+KfiaR:\"}", &r) == 201);
	CHECK(!strstr(r.body, "DHHC-1"));
	free(r.body);
	CHECK(!strcmp(ag_state_host(&agent.st, "t0", "own")->dhchap, mine));
	CHECK(call(ctok[0], "GET", "/v1/tenants/t0/hosts", NULL, &out) == 200);
	CHECK(!strstr(out, "DHHC-1") && strstr(out, "\"authentication\":\"dh-hmac-chap\""));
	free(out);
	/* refused, naming the field; nothing stored */
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/hosts", "{\"name\":\"bad\",\"nqn\":"
		   "\"nqn.2014-08.example:bad\",\"dhchap_secret\":\"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAR"
		   "EhMUFRYXGBkaGxwdHh+KfiaS:\"}", &out) == 422);
	CHECK(strstr(out, "dhchap_secret"));
	free(out);
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/hosts", "{\"name\":\"bad\",\"nqn\":"
		   "\"nqn.2014-08.example:bad\",\"dhchap_secret\":7}", &out) == 400);
	CHECK(strstr(out, "dhchap_secret"));
	free(out);
	CHECK(!ag_state_host(&agent.st, "t0", "bad"));
	/* the connect line asks for the secret, and does not give it */
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", NULL,
			 "{\"name\":\"db\",\"pool\":\"p0\",\"size_bytes\":67108864}", &r) == 201);
	free(r.body);
	agent.nvme_port.id = 1;
	CHECK(call(ctok[0], "PUT", "/v1/volumes/t0.db/exports/gen", NULL, &out) == 200);
	CHECK(strstr(out, "--dhchap-secret <the host's secret>") && !strstr(out, "DHHC-1"));
	free(out);
	ag_agent_close(&agent);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* The store's rows in dir, and whether they are what they were (freed either way). */
static bool store_unchanged(const char *dir, char *before, size_t before_len)
{
	size_t len;
	char *now = fuzz_api_state(dir, &len);
	bool same = now && before && len == before_len && !memcmp(now, before, len);

	free(now);
	free(before);
	return same;
}

/*
 * A request refused with status and a problem+json whose errors name field
 * (a dotted path); the store in dir is as it was.
 */
static bool refused(const char *dir, const char *tok, const char *method, const char *path,
		    const char *body, unsigned int status, const char *field)
{
	char auth[128], want[160];
	struct ap_request r = { .method = method, .path = path, .authorization = auth,
				.content_type = "application/json", .body = body,
				.body_len = strlen(body) };
	struct ap_response resp;
	size_t before_len;
	char *before = fuzz_api_state(dir, &before_len);
	bool ok;

	snprintf(auth, sizeof(auth), "Bearer %s", tok);
	snprintf(want, sizeof(want), "\"field\":\"%s\"", field);
	ap_handle(&cctx, &r, &resp);
	ok = resp.status == status && resp.body && strstr(resp.body, want) &&
	     !strcmp(resp.content_type, "application/problem+json");
	if (!ok)
		fprintf(stderr, "%s %s %s: %u %s\n", method, path, body, resp.status,
			resp.body ? resp.body : "");
	free(resp.body);
	return store_unchanged(dir, before, before_len) && ok;
}

/*
 * latency_target_us through the API: taken on create and change, shown in
 * the policy and the policy in force, stored as the target's latency_us;
 * a tenant's ceiling is the tightest target it may set (the admin may go
 * past it, and none is always allowed); every hostile value, and another
 * tenant's volume, refused naming the field with nothing changed.
 */
static void api_latency_target_is_a_policy_field_with_a_ceiling(void)
{
	char dir[] = "/tmp/sluice-lat-XXXXXX", cmd[64], atok[AP_TOKEN_LEN + 1], *out;
	const char *vol = "{\"name\":\"db\",\"pool\":\"p0\",\"size_bytes\":67108864,"
			  "\"policy\":{\"latency_target_us\":%s}}";
	static const struct { const char *value; unsigned int status; } hostile[] = {
		{ "\"2000\"", 400 }, { "true", 400 }, { "[2000]", 400 }, { "{}", 400 },
		{ "-1", 422 }, { "1.5", 422 }, { "10000001", 422 }, { "9007199254740992", 422 },
		{ "9007199254740993", 422 }, { "1e3", 422 },
	};
	struct ag_agent agent;
	char body[256];
	size_t i;

	setenv("SLUICED_LOG", "warning", 1);
	two_tenants(dir, &agent);
	CHECK(ap_token_new(atok) == 0 && ap_token_hash(atok, cctx.admin_hash) == 0);
	CHECK(call(atok, "PATCH", "/v1/tenants/t0", "{\"ceilings\":{\"latency_target_us\":1000}}",
		   NULL) == 200);
	/* hostile values, on create: nothing made */
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		snprintf(body, sizeof(body), vol, hostile[i].value);
		CHECK(refused(dir, ctok[0], "POST", "/v1/tenants/t0/volumes", body, hostile[i].status,
			      "policy.latency_target_us"));
	}
	/* tighter than the ceiling */
	snprintf(body, sizeof(body), vol, "999");
	CHECK(refused(dir, ctok[0], "POST", "/v1/tenants/t0/volumes", body, 403,
		      "policy.latency_target_us"));
	CHECK_EQ_U64(agent.st.vols.nr, 0);
	snprintf(body, sizeof(body), vol, "2000");
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/volumes", body, &out) == 201);
	CHECK(strstr(out, "\"policy\":{\"latency_target_us\":2000}"));
	CHECK(strstr(out, "\"effective_policy\":{\"latency_target_us\":2000}"));
	free(out);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t0.db")->policy.limits.latency_us, 2000);
	/* no kernel, so no status line: the latency figures are null, not an error */
	CHECK(call(ctok[0], "GET", "/v1/volumes/t0.db/stats", NULL, &out) == 200);
	CHECK(strstr(out, "\"completion_latency_histogram\":null,"
		      "\"completion_latency_sum_seconds\":null,\"pool\":null"));
	free(out);
	/* on change: hostile values, tighter than the ceiling, another tenant's volume */
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		snprintf(body, sizeof(body), "{\"policy\":{\"latency_target_us\":%s}}", hostile[i].value);
		CHECK(refused(dir, ctok[0], "PATCH", "/v1/volumes/t0.db", body, hostile[i].status,
			      "policy.latency_target_us"));
	}
	CHECK(refused(dir, ctok[0], "PATCH", "/v1/volumes/t0.db",
		      "{\"policy\":{\"latency_target_us\":999}}", 403, "policy.latency_target_us"));
	CHECK(refused(dir, ctok[0], "PUT", "/v1/volumes/t0.db",
		      "{\"policy\":{\"latency_target_us\":1}}", 403, "policy.latency_target_us"));
	CHECK(refused(dir, ctok[0], "PATCH", "/v1/volumes/t0.db",
		      "{\"policy\":{\"latency_us\":5000}}", 400, "policy.latency_us"));
	CHECK(call(ctok[1], "PATCH", "/v1/volumes/t0.db", "{\"policy\":{\"latency_target_us\":5000}}",
		   NULL) == 404);
	CHECK(call(ctok[1], "PATCH", "/v1/tenants/t1", "{\"ceilings\":{\"latency_target_us\":1}}",
		   NULL) == 403);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t0.db")->policy.limits.latency_us, 2000);
	/* within: looser, exactly the ceiling, none */
	CHECK(call(ctok[0], "PATCH", "/v1/volumes/t0.db", "{\"policy\":{\"latency_target_us\":1000}}",
		   NULL) == 200);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t0.db")->policy.limits.latency_us, 1000);
	CHECK(call(ctok[0], "PATCH", "/v1/volumes/t0.db", "{\"policy\":{\"latency_target_us\":null}}",
		   &out) == 200);
	CHECK(strstr(out, "\"policy\":{}"));
	free(out);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t0.db")->policy.limits.latency_us, 0);
	/* the admin is not held to the ceiling; a tenant without one is not either */
	CHECK(call(atok, "PATCH", "/v1/volumes/t0.db", "{\"policy\":{\"latency_target_us\":100}}",
		   NULL) == 200);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t0.db")->policy.limits.latency_us, 100);
	snprintf(body, sizeof(body), vol, "1");
	CHECK(call(ctok[1], "POST", "/v1/tenants/t1/volumes", body, NULL) == 201);
	/* a bad ceiling is refused naming it */
	CHECK(refused(dir, atok, "PATCH", "/v1/tenants/t0", "{\"ceilings\":{\"latency_target_us\":-1}}",
		      422, "ceilings.latency_target_us"));
	CHECK(refused(dir, atok, "PATCH", "/v1/tenants/t0",
		      "{\"ceilings\":{\"latency_target_us\":\"1\"}}", 422, "ceilings.latency_target_us"));
	/* the store keeps it: the same after a restart */
	ag_agent_close(&agent);
	CHECK(ag_agent_open(&agent, dir, 0, false, &(struct ag_err){ 0 }) == 0);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t0.db")->policy.limits.latency_us, 100);
	CHECK_EQ_U64(ag_state_volume(&agent.st, "t1.db")->policy.limits.latency_us, 1);
	CHECK(ag_state_tenant(&agent.st, "t0")->ceilings.set != 0);
	cctx.admin_hash[0] = '\0';
	ag_agent_close(&agent);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

/* a controller cntlid of subsystem nqn in the fake debugfs, held by host */
static int put_ctrl(const char *dbg, const char *nqn, int cntlid, const char *host)
{
	char rel[400];

	snprintf(rel, sizeof(rel), "nvmet/%s/ctrl%d", nqn, cntlid);
	if (unit_put_dir(dbg, rel))
		return -1;
	snprintf(rel, sizeof(rel), "nvmet/%s/ctrl%d/hostnqn", nqn, cntlid);
	return unit_put_file(dbg, rel, host);
}

/*
 * A volume's exports in its stats and in /metrics: without nvmet's view,
 * the hosts it is exported to and nulls (no series); with it (a fake
 * debugfs tree), its controllers and the hosts they are of, named by the
 * tenant's names when the volume is exported to them, and any other (a host
 * of another tenant, of this tenant but not exported to, of nobody) counted
 * and not named.
 */
static void api_stats_show_the_exports_connections(void)
{
	char dir[] = "/tmp/sluice-conn-XXXXXX", dbg[64], cmd[160], nqn[AG_NQN_MAX + 1];
	char mtok[AP_TOKEN_LEN + 1], rel[400];
	const char *ha = "nqn.2014-08.example:web", *hb = "nqn.2014-08.example:spare";
	const char *ho = "nqn.2014-08.example:other", *hg = "nqn.2014-08.example:globex";
	struct ap_response r;
	struct ag_agent agent;
	json_t *j, *x;
	char *out;

	setenv("SLUICED_LOG", "warning", 1);
	two_tenants(dir, &agent);
	memset(cctx.admin_hash, 'x', AP_HASH_HEX);
	CHECK(ap_token_new(mtok) == 0 && ap_token_hash(mtok, cctx.monitor_hash) == 0);
	agent.nvme_port.id = 1;
	CHECK(post_keyed(ctok[0], "/v1/tenants/t0/volumes", NULL,
			 "{\"name\":\"db\",\"pool\":\"p0\",\"size_bytes\":67108864}", &r) == 201);
	free(r.body);
	CHECK(post_keyed(ctok[1], "/v1/tenants/t1/volumes", NULL,
			 "{\"name\":\"db\",\"pool\":\"p0\",\"size_bytes\":67108864}", &r) == 201);
	free(r.body);
	snprintf(cmd, sizeof(cmd), "{\"name\":\"web\",\"nqn\":\"%s\"}", ha);
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/hosts", cmd, NULL) == 201);
	snprintf(cmd, sizeof(cmd), "{\"name\":\"spare\",\"nqn\":\"%s\"}", hb);
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/hosts", cmd, NULL) == 201);
	snprintf(cmd, sizeof(cmd), "{\"name\":\"other\",\"nqn\":\"%s\"}", ho);
	CHECK(call(ctok[0], "POST", "/v1/tenants/t0/hosts", cmd, NULL) == 201);
	snprintf(cmd, sizeof(cmd), "{\"name\":\"app\",\"nqn\":\"%s\"}", hg);
	CHECK(call(ctok[1], "POST", "/v1/tenants/t1/hosts", cmd, NULL) == 201);
	CHECK(call(ctok[0], "PUT", "/v1/volumes/t0.db/exports/web", NULL, NULL) == 200);
	CHECK(call(ctok[0], "PUT", "/v1/volumes/t0.db/exports/spare", NULL, NULL) == 200);

	/* no view: the exports counted, the rest unknown */
	cctx.debugfs[0] = '\0';
	CHECK(call(ctok[0], "GET", "/v1/volumes/t0.db/stats", NULL, &out) == 200);
	j = json_loads(out, 0, NULL);
	free(out);
	x = json_object_get(j, "exports");
	CHECK(json_integer_value(json_object_get(x, "hosts")) == 2);
	CHECK(json_is_null(json_object_get(x, "controllers")));
	CHECK(json_is_null(json_object_get(x, "connected")));
	CHECK(json_is_null(json_object_get(x, "connected_hosts")));
	json_decref(j);
	CHECK(call(mtok, "GET", "/metrics", NULL, &out) == 200);
	CHECK(strstr(out, "sluice_volume_export_hosts{volume=\"t0.db\",tenant=\"t0\",pool=\"p0\"} 2\n"));
	CHECK(strstr(out, "sluice_volume_export_hosts{volume=\"t1.db\",tenant=\"t1\",pool=\"p0\"} 0\n"));
	CHECK(strstr(out, "# TYPE sluice_volume_export_controllers gauge\n"));
	CHECK(!strstr(out, "sluice_volume_export_controllers{"));
	CHECK(!strstr(out, "sluice_volume_export_hosts_connected{"));
	free(out);

	/* the view: web on two paths, and hosts the volume is not exported to */
	snprintf(dbg, sizeof(dbg), "%s/debug", dir);
	CHECK(mkdir(dbg, 0755) == 0 && unit_put_dir(dbg, "nvmet") == 0);
	snprintf(cctx.debugfs, sizeof(cctx.debugfs), "%s", dbg);
	CHECK(call(ctok[0], "GET", "/v1/volumes/t0.db/stats", NULL, &out) == 200);
	CHECK(strstr(out, "\"exports\":{\"hosts\":2,\"controllers\":0,\"connected\":0,"
		      "\"connected_hosts\":[]}"));
	free(out);
	ag_subsys_nqn(&agent, "t0.db", nqn);
	snprintf(rel, sizeof(rel), "nvmet/%s", nqn);
	CHECK(unit_put_dir(dbg, rel) == 0);
	CHECK(put_ctrl(dbg, nqn, 1, ha) == 0 && put_ctrl(dbg, nqn, 2, ha) == 0);
	CHECK(put_ctrl(dbg, nqn, 3, ho) == 0 && put_ctrl(dbg, nqn, 4, hg) == 0);
	CHECK(put_ctrl(dbg, nqn, 5, "nqn.2014-08.example:nobody") == 0);
	CHECK(call(ctok[0], "GET", "/v1/volumes/t0.db/stats", NULL, &out) == 200);
	CHECK(strstr(out, "\"exports\":{\"hosts\":2,\"controllers\":5,\"connected\":4,"
		      "\"connected_hosts\":[\"web\"]}"));
	CHECK(!strstr(out, "other") && !strstr(out, "app") && !strstr(out, "globex"));
	free(out);
	CHECK(put_ctrl(dbg, nqn, 6, hb) == 0);
	CHECK(call(ctok[0], "GET", "/v1/volumes/t0.db/stats", NULL, &out) == 200);
	CHECK(strstr(out, "\"connected_hosts\":[\"spare\",\"web\"]"));
	free(out);
	/* another tenant's volume: as no volume */
	CHECK(call(ctok[1], "GET", "/v1/volumes/t0.db/stats", NULL, NULL) == 404);
	CHECK(call(ctok[1], "GET", "/v1/volumes/t1.db/stats", NULL, &out) == 200);
	CHECK(strstr(out, "\"exports\":{\"hosts\":0,\"controllers\":0,\"connected\":0,"
		      "\"connected_hosts\":[]}"));
	free(out);
	CHECK(call(mtok, "GET", "/metrics", NULL, &out) == 200);
	CHECK(strstr(out, "sluice_volume_export_controllers{volume=\"t0.db\",tenant=\"t0\",pool=\"p0\"} 6\n"));
	CHECK(strstr(out, "sluice_volume_export_hosts_connected{volume=\"t0.db\",tenant=\"t0\",pool=\"p0\"} 5\n"));
	CHECK(strstr(out, "sluice_volume_export_controllers{volume=\"t1.db\",tenant=\"t1\",pool=\"p0\"} 0\n"));
	CHECK(strstr(out, "sluice_volume_export_hosts_connected{volume=\"t1.db\",tenant=\"t1\",pool=\"p0\"} 0\n"));
	CHECK(!strstr(out, "nqn."));
	free(out);
	cctx.debugfs[0] = '\0';
	cctx.monitor_hash[0] = '\0';
	ag_agent_close(&agent);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
}

static const struct unit_test tests[] = {
	UNIT_TEST(api_stats_show_the_exports_connections),
	UNIT_TEST(api_host_secrets_are_shown_once),
	UNIT_TEST(api_latency_target_is_a_policy_field_with_a_ceiling),
	UNIT_TEST(api_names_are_the_tenants),
	UNIT_TEST(api_survives_10000_mutated_requests),
	UNIT_TEST(api_idempotency_key_replays_a_create),
	UNIT_TEST(api_serves_writers_and_readers_at_once),
	UNIT_TEST(admin_token_survives_a_crash_while_made),
};

UNIT_MAIN("api", tests)
