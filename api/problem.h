/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RFC 9457 problem details. Each kind of error has a stable type,
 * "/problems/<slug>" (a relative reference; api/openapi.yaml lists them), a
 * title, and its HTTP status; the detail says what was wrong with this
 * request, naming the field.
 */
#ifndef SLUICE_API_PROBLEM_H
#define SLUICE_API_PROBLEM_H

#include "api.h"

enum ap_problem {
	AP_P_MALFORMED_JSON,		/* 400 */
	AP_P_INVALID_REQUEST,		/* 400: wrong type, unknown field, bad query */
	AP_P_UNAUTHORIZED,		/* 401 */
	AP_P_FORBIDDEN,			/* 403: admin only */
	AP_P_ABOVE_CEILING,		/* 403: beyond the tenant's ceilings */
	AP_P_OVER_QUOTA,		/* 403: past the tenant's quotas */
	AP_P_NOT_FOUND,			/* 404 */
	AP_P_METHOD_NOT_ALLOWED,	/* 405 */
	AP_P_CONFLICT,			/* 409: the name is taken, or still in use */
	AP_P_NO_SPACE,			/* 409: the pool has no room */
	AP_P_DEVICE_REFUSED,		/* 409: a signature on the device */
	AP_P_OVERCOMMITTED,		/* 409: past what the pool admits of reservations */
	AP_P_PRECONDITION_FAILED,	/* 412: If-Match did not match */
	AP_P_TOO_LARGE,			/* 413 */
	AP_P_UNSUPPORTED_MEDIA_TYPE,	/* 415 */
	AP_P_INVALID_VALUE,		/* 422: well-formed, but not a valid value */
	AP_P_INTERNAL,			/* 500 */
	AP_P_NR
};

void ap_problem(struct ap_response *resp, enum ap_problem p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
