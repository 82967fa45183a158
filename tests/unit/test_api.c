// SPDX-License-Identifier: GPL-2.0
/*
 * The API's request handling on the host, under ASan and UBSan in the
 * sanitizer build: 10,000 mutated requests (fuzz_api.c, host mode: no
 * kernel) must not crash, leak or change the state on a rejected request.
 */
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"
#include "fuzz_api.h"

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

static const struct unit_test tests[] = {
	UNIT_TEST(api_survives_10000_mutated_requests),
};

UNIT_MAIN("api", tests)
