/* SPDX-License-Identifier: GPL-2.0 */
/* Logging to stderr, one line each, "sluiced: <level>: <message>". */
#ifndef SLUICE_AGENT_LOG_H
#define SLUICE_AGENT_LOG_H

#include <stdarg.h>
#include <stdio.h>

static inline void ag_log(const char *level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void ag_log(const char *level, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluiced: %s: ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#endif
