/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's one error convention: a function that can fail returns 0, or
 * -1 with a struct ag_err filled in: a code (what kind of failure, which the
 * API maps to a status) and a message for a person, naming the field or
 * object at fault. The error is reported once, by whoever gave up on it: the
 * API as a problem, a console command on stderr.
 */
#ifndef SLUICE_AGENT_ERR_H
#define SLUICE_AGENT_ERR_H

#include <stdarg.h>
#include <stdio.h>

enum ag_code {
	AG_OK = 0,
	AG_E_INTERNAL,		/* the store, the kernel, memory */
	AG_E_INVALID,		/* a bad argument */
	AG_E_NOTFOUND,		/* no such pool, tenant or volume */
	AG_E_EXISTS,		/* the name is taken */
	AG_E_NOSPACE,		/* the pool has no room */
	AG_E_REFUSED,		/* a device with a signature, without force */
	AG_E_ABOVE_CEILING,	/* more than the tenant may ask for */
	AG_E_OVERCOMMIT,	/* more reserved than the pool's declared capacity admits */
	AG_E_QUOTA,		/* past the tenant's quotas */
	AG_E_BUSY,		/* in use: a tenant with volumes, a device held open */
	AG_E_CORRUPT,		/* the store cannot be read: nothing is written */
	AG_E_UNKNOWN,		/* the store failed mid-commit: the outcome is not known */
};

struct ag_err {
	enum ag_code code;
	char msg[400];
};

static inline int ag_fail(struct ag_err *e, enum ag_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline int ag_fail(struct ag_err *e, enum ag_code code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

#endif
