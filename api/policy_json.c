// SPDX-License-Identifier: GPL-2.0
/* Policies as JSON objects and as the agent's typed values; see policy_json.h. */
#include <stdio.h>
#include <string.h>

#include "policy_json.h"

static int fail(char *err, size_t errlen, const char *field, const char *why, int rc)
{
	snprintf(err, errlen, "%s: %s", field, why);
	return rc;
}

/* A field's value: a JSON integer in 0..2^53 (not a real, not a string). */
static int value_of(const char *name, json_t *v, uint64_t *out, char *err, size_t errlen)
{
	json_int_t x;

	/* another JSON type is the wrong shape; a fraction, a bad value */
	if (!json_is_number(v))
		return fail(err, errlen, name, "an integer from 0 to 2^53", -2);
	if (!json_is_integer(v) || (x = json_integer_value(v)) < 0 || (uint64_t)x > AG_VALUE_MAX)
		return fail(err, errlen, name, "an integer from 0 to 2^53", -1);
	*out = (uint64_t)x;
	return 0;
}

int ap_policy_from_json(json_t *obj, struct ag_policy *p, char *err, size_t errlen)
{
	const char *name, *length_from = NULL;
	uint64_t v, length = 0;
	struct ag_err e;
	json_t *jv;
	int rc;

	ag_policy_init(p);
	if (!json_is_object(obj))
		return fail(err, errlen, "policy", "an object", -2);
	json_object_foreach(obj, name, jv) {
		const struct ag_field *f = ag_field_find(name);

		if (!f)
			return fail(err, errlen, name, "not a policy field", -2);
		rc = value_of(name, jv, &v, err, errlen);
		if (rc)
			return rc;
		if (f->kind == AG_F_LENGTH) {
			/* one burst length a volume */
			if (!v)
				continue;
			if (length_from && v != length) {
				snprintf(err, errlen, "%s: must equal %s (one burst length a volume)",
					 name, length_from);
				return -1;
			}
			length_from = name;
			length = v;
		}
		if (ag_policy_set(p, f, v, &e)) {
			snprintf(err, errlen, "%s", e.msg);
			return -1;
		}
	}
	return 0;
}

json_t *ap_policy_to_json(const struct ag_policy *p)
{
	json_t *obj = json_object();
	unsigned int i;

	for (i = 0; obj && i < AG_NR_FIELDS; i++) {
		uint64_t v = ag_policy_get(p, &ag_fields[i]);

		if (v)
			json_object_set_new(obj, ag_fields[i].name, json_integer((json_int_t)v));
	}
	return obj;
}

json_t *ap_policy_in_force_json(const struct sl_config *in_force, uint64_t dirty_bytes_max)
{
	struct ag_policy p;

	ag_policy_init(&p);
	p.limits = *in_force;
	p.dirty_bytes_max = dirty_bytes_max;
	return ap_policy_to_json(&p);
}

int ap_policy_merge(json_t *policy, json_t *patch, char *err, size_t errlen)
{
	const char *name;
	json_t *jv;
	uint64_t v;

	if (!json_is_object(patch))
		return fail(err, errlen, "policy", "an object", -2);
	json_object_foreach(patch, name, jv) {
		int rc;

		if (!ag_field_find(name))
			return fail(err, errlen, name, "not a policy field", -2);
		rc = json_is_null(jv) ? 0 : value_of(name, jv, &v, err, errlen);
		if (rc)
			return rc;
	}
	json_object_foreach(patch, name, jv) {
		if (json_is_null(jv))
			json_object_del(policy, name);
		else
			json_object_set(policy, name, jv);
	}
	return 0;
}
