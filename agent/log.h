/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logging to stderr, one line each, "sluiced: <level>: <message>"; under
 * systemd (JOURNAL_STREAM set) "<priority>message" instead, which the
 * journal takes as the line's priority (sd-daemon(3)). Levels: error,
 * warning, audit (who changed what, and the outcome: notice), info.
 * SLUICED_LOG=warning drops info, SLUICED_LOG=error all but errors.
 */
#ifndef SLUICE_AGENT_LOG_H
#define SLUICE_AGENT_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void ag_log(const char *level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void ag_log(const char *level, const char *fmt, ...)
{
	const char *min = getenv("SLUICED_LOG");
	va_list ap;

	if (min && !strcmp(level, "info") && (!strcmp(min, "warning") || !strcmp(min, "error")))
		return;
	if (min && (!strcmp(level, "warning") || !strcmp(level, "audit")) && !strcmp(min, "error"))
		return;
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%c>", !strcmp(level, "error") ? '3' :
			!strcmp(level, "warning") ? '4' : !strcmp(level, "audit") ? '5' : '6');
	else
		fprintf(stderr, "sluiced: %s: ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#endif
