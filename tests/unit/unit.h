/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A very small unit test runner. A test is a function; CHECK() failures are
 * reported with file and line and end that test. Output is one line a test:
 *   ok <suite>/<name>
 *   not ok <suite>/<name> # <file>:<line>: <what>
 * and the exit status is non-zero when any test failed.
 */
#ifndef SLUICE_UNIT_H
#define SLUICE_UNIT_H

#include <stdint.h>
#include <stdio.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

extern int unit_failed_flag;
void unit_fail(const char *file, int line, const char *what);
int unit_run(const char *suite, const struct unit_test *tests, size_t n);

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond)) {                                          \
			unit_fail(__FILE__, __LINE__, #cond);           \
			return;                                         \
		}                                                       \
	} while (0)

#define CHECK_EQ_U64(a, b)                                              \
	do {                                                            \
		unsigned long long a_ = (a), b_ = (b);                  \
		if (a_ != b_) {                                         \
			char m_[160];                                   \
			snprintf(m_, sizeof(m_), "%s == %s (%llu != %llu)", \
				 #a, #b, a_, b_);                       \
			unit_fail(__FILE__, __LINE__, m_);              \
			return;                                         \
		}                                                       \
	} while (0)

/* A file of text, or a directory, at dir/rel (fixture trees); 0 or -1. */
int unit_put_file(const char *dir, const char *rel, const char *text);
int unit_put_dir(const char *dir, const char *rel);

#define UNIT_TEST(fn) { #fn, fn }
#define UNIT_MAIN(suite, table)                                         \
	int main(void)                                                  \
	{                                                               \
		return unit_run(suite, table, sizeof(table) / sizeof(table[0])); \
	}

#endif
