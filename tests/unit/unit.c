// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <sys/stat.h>

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

int unit_put_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int unit_put_dir(const char *dir, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return mkdir(path, 0755);
}
