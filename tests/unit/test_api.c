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

#include "unit.h"
#include "fuzz_api.h"
#include "../../api/auth.h"

static void api_survives_10000_mutated_requests(void)
{
	char dir[] = "/tmp/sluice-api-XXXXXX", count[] = "10000", seed[] = "12345";
	char name[] = "test_api", dev[] = "-", cmd[64];
	char *argv[] = { name, dir, dev, count, seed, NULL };
	int rc;

	CHECK(mkdtemp(dir));
	/* a line for each tenant made and dropped is noise here */
	setenv("SLUICED_LOG", "warning", 1);
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

static const struct unit_test tests[] = {
	UNIT_TEST(api_survives_10000_mutated_requests),
	UNIT_TEST(admin_token_survives_a_crash_while_made),
};

UNIT_MAIN("api", tests)
