// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "unit.h"

int unit_failed_flag;
static char unit_reason[512];

void unit_fail(const char *file, int line, const char *what)
{
	const char *base = strrchr(file, '/');

	unit_failed_flag = 1;
	snprintf(unit_reason, sizeof(unit_reason), "%s:%d: %s",
		 base ? base + 1 : file, line, what);
}

int unit_run(const char *suite, const struct unit_test *tests, size_t n)
{
	int failed = 0;

	for (size_t i = 0; i < n; i++) {
		unit_failed_flag = 0;
		tests[i].fn();
		if (unit_failed_flag) {
			printf("not ok %s/%s # %s\n", suite, tests[i].name, unit_reason);
			failed++;
		} else {
			printf("ok %s/%s\n", suite, tests[i].name);
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
