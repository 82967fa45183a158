/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A volume's policy as the API's JSON spells it: an object of the fields of
 * agent/policy.h, each a JSON integer from 0 to 2^53 (0 is the same as
 * absent). The object holds only what is set.
 *
 * Failures return -2 for a request of the wrong shape (not an object, an
 * unknown field, a value that is not a number) and -1 for a bad value, with
 * a message naming the field.
 */
#ifndef SLUICE_API_POLICY_JSON_H
#define SLUICE_API_POLICY_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "../agent/policy.h"

/* A policy object into p ("read_iops_sec: an integer from 0 to 2^53"). */
int ap_policy_from_json(json_t *obj, struct ag_policy *p, char *err, size_t errlen);

/* The object of a policy as asked: scaled rates as their *_per_gb fields. */
json_t *ap_policy_to_json(const struct ag_policy *p);

/* The object of the limits in force, with dirty_bytes_max. */
json_t *ap_policy_in_force_json(const struct sl_config *in_force, uint64_t dirty_bytes_max);

/*
 * Apply a partial change to a policy object in place: a field set to a
 * number replaces it, to null removes it. -2 or -1 with err on a value of
 * another type or an unknown field; policy is then unchanged.
 */
int ap_policy_merge(json_t *policy, json_t *patch, char *err, size_t errlen);

#endif
