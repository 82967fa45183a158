// SPDX-License-Identifier: GPL-2.0
/* RFC 9457 problem details; see problem.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "problem.h"

static const struct {
	const char *slug;
	const char *title;
	unsigned int status;
} problems[AP_P_NR] = {
	[AP_P_MALFORMED_JSON] = { "malformed-json", "The body is not JSON", 400 },
	[AP_P_INVALID_REQUEST] = { "invalid-request", "The request is not of the expected shape", 400 },
	[AP_P_UNAUTHORIZED] = { "unauthorized", "No valid bearer token", 401 },
	[AP_P_FORBIDDEN] = { "forbidden", "Only the admin may do this", 403 },
	[AP_P_ABOVE_CEILING] = { "above-ceiling", "Beyond the tenant's ceilings", 403 },
	[AP_P_OVER_QUOTA] = { "over-quota", "Past the tenant's quotas", 403 },
	[AP_P_NOT_FOUND] = { "not-found", "No such resource", 404 },
	[AP_P_METHOD_NOT_ALLOWED] = { "method-not-allowed", "Method not allowed here", 405 },
	[AP_P_CONFLICT] = { "conflict", "In conflict with the current state", 409 },
	[AP_P_NO_SPACE] = { "no-space", "The pool has no room", 409 },
	[AP_P_DEVICE_REFUSED] = { "device-refused", "The device is not taken", 409 },
	[AP_P_OVERCOMMITTED] = { "overcommitted", "The pool cannot admit more reservations", 409 },
	[AP_P_PRECONDITION_FAILED] = { "precondition-failed", "The resource has changed", 412 },
	[AP_P_TOO_LARGE] = { "too-large", "The body is too large", 413 },
	[AP_P_UNSUPPORTED_MEDIA_TYPE] = { "unsupported-media-type", "The body must be application/json", 415 },
	[AP_P_INVALID_VALUE] = { "invalid-value", "A value is not valid", 422 },
	[AP_P_INTERNAL] = { "internal", "The appliance failed to do it", 500 },
};

/* The length of a field's name at s ([a-z_] and digits), 0 if none. */
static size_t name_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || s[n] == '_' || (n && s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

/*
 * The fields a detail names, by the API's convention "<field>: <what>"
 * ("policy: read_iops_sec: ..." is the field policy.read_iops_sec; "id and
 * pool: ..." names both): an "errors" array of {field, detail}, or NULL.
 */
static json_t *errors_of(const char *detail)
{
	char path[160] = "", first[64] = "";
	const char *s = detail, *what;
	size_t n, used = 0;
	json_t *errors;

	n = name_len(s);
	if (n && n < sizeof(first) && !strncmp(s + n, " and ", 5) && name_len(s + n + 5) &&
	    !strncmp(s + n + 5 + name_len(s + n + 5), ": ", 2)) {
		/* "a and b: what" */
		memcpy(first, s, n);
		first[n] = '\0';
		s += n + 5;
		n = name_len(s);
	}
	while (n && !strncmp(s + n, ": ", 2) && used + n + 2 < sizeof(path)) {
		used += (size_t)snprintf(path + used, sizeof(path) - used, "%s%.*s", used ? "." : "",
					 (int)n, s);
		s += n + 2;
		n = name_len(s);
	}
	if (!used)
		return NULL;
	what = s;
	errors = json_array();
	if (first[0])
		json_array_append_new(errors, json_pack("{s:s, s:s}", "field", first, "detail", what));
	json_array_append_new(errors, json_pack("{s:s, s:s}", "field", path, "detail", what));
	return errors;
}

void ap_problem(struct ap_response *resp, enum ap_problem p, const char *fmt, ...)
{
	char detail[768], type[64];
	va_list ap;
	json_t *j;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(type, sizeof(type), "/problems/%s", problems[p].slug);
	j = json_pack("{s:s, s:s, s:I, s:s}", "type", type, "title", problems[p].title, "status",
		      (json_int_t)problems[p].status, "detail", detail);
	/* a request's field at fault, named for a program as well as in the detail */
	if (j && (problems[p].status == 400 || problems[p].status == 409 ||
		  problems[p].status == 422 || p == AP_P_ABOVE_CEILING || p == AP_P_OVER_QUOTA)) {
		json_t *errors = errors_of(detail);

		if (errors)
			json_object_set_new(j, "errors", errors);
	}
	free(resp->body);
	resp->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	resp->status = problems[p].status;
	resp->content_type = "application/problem+json";
	resp->etag[0] = '\0';
	resp->www_authenticate = p == AP_P_UNAUTHORIZED;
}
