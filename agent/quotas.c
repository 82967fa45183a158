// SPDX-License-Identifier: GPL-2.0
/* A tenant's quotas; see quotas.h. */
#include <string.h>

#include "model.h"
#include "quotas.h"

static int count_of(json_t *obj, const char *name, uint64_t *out, struct ag_err *e)
{
	json_t *v = json_object_get(obj, name);
	json_int_t x;

	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || (x = json_integer_value(v)) < 0 || (uint64_t)x > AG_VALUE_MAX)
		return ag_fail(e, AG_E_INVALID, "%s: an integer from 0 to 2^53", name);
	*out = (uint64_t)x;
	return 0;
}

int ag_quotas_from_json(struct ag_quotas *q, json_t *obj, struct ag_err *e)
{
	const char *name;
	json_t *v, *pools;
	size_t i;

	memset(q, 0, sizeof(*q));
	if (!json_is_object(obj))
		return ag_fail(e, AG_E_INVALID, "quotas: an object");
	json_object_foreach(obj, name, v) {
		const struct ag_field *f = ag_field_find(name);

		if (f && f->kind == AG_F_AVG) {
			if (count_of(obj, name, &q->rates[f->bucket], e))
				return -1;
		} else if (strcmp(name, "capacity_bytes") && strcmp(name, "volumes") &&
			   strcmp(name, "pools") && strcmp(name, "reservation_iops") &&
			   strcmp(name, "reservation_bytes_sec")) {
			return ag_fail(e, AG_E_INVALID, "%.64s: not a quota", name);
		}
	}
	/* the target's rule for a group: a total, or read and write */
	if (q->rates[SL_BPS] && (q->rates[SL_RBPS] || q->rates[SL_WBPS]))
		return ag_fail(e, AG_E_INVALID, "total_bytes_sec: cannot be combined with "
			       "read_bytes_sec or write_bytes_sec");
	if (q->rates[SL_IOPS] && (q->rates[SL_RIOPS] || q->rates[SL_WIOPS]))
		return ag_fail(e, AG_E_INVALID, "total_iops_sec: cannot be combined with "
			       "read_iops_sec or write_iops_sec");
	if (count_of(obj, "capacity_bytes", &q->bytes, e) || count_of(obj, "volumes", &q->volumes, e) ||
	    count_of(obj, "reservation_iops", &q->reserve_iops, e) ||
	    count_of(obj, "reservation_bytes_sec", &q->reserve_bps, e))
		return -1;
	pools = json_object_get(obj, "pools");
	if (!pools || json_is_null(pools))
		return 0;
	/* an empty list would read as "any pool": leaving it out says that */
	if (!json_is_array(pools) || !json_array_size(pools) ||
	    json_array_size(pools) > AG_QUOTA_POOLS)
		return ag_fail(e, AG_E_INVALID, "pools: a list of 1 to %d pool names (leave it out "
			       "for any)", AG_QUOTA_POOLS);
	json_array_foreach(pools, i, v) {
		const char *p = json_string_value(v);

		if (!p || !ag_valid_id(p))
			return ag_fail(e, AG_E_INVALID, "pools: a list of pool names");
		if (!ag_quotas_pool(q, p) || !q->nr_pools)
			strcpy(q->pools[q->nr_pools++], p);
	}
	return 0;
}

json_t *ag_quotas_to_json(const struct ag_quotas *q)
{
	json_t *obj = json_object(), *pools;
	unsigned int i;

	if (!obj)
		return NULL;
	if (q->bytes)
		json_object_set_new(obj, "capacity_bytes", json_integer((json_int_t)q->bytes));
	if (q->volumes)
		json_object_set_new(obj, "volumes", json_integer((json_int_t)q->volumes));
	if (q->reserve_iops)
		json_object_set_new(obj, "reservation_iops", json_integer((json_int_t)q->reserve_iops));
	if (q->reserve_bps)
		json_object_set_new(obj, "reservation_bytes_sec",
				    json_integer((json_int_t)q->reserve_bps));
	for (i = 0; i < AG_NR_FIELDS; i++)
		if (ag_fields[i].kind == AG_F_AVG && q->rates[ag_fields[i].bucket])
			json_object_set_new(obj, ag_fields[i].name,
					    json_integer((json_int_t)q->rates[ag_fields[i].bucket]));
	if (q->nr_pools) {
		pools = json_array();
		for (i = 0; i < q->nr_pools; i++)
			json_array_append_new(pools, json_string(q->pools[i]));
		json_object_set_new(obj, "pools", pools);
	}
	return obj;
}

bool ag_quotas_group(const struct ag_quotas *q)
{
	unsigned int b;

	for (b = 0; b < SL_NR_BUCKETS; b++)
		if (q->rates[b])
			return true;
	return false;
}

bool ag_quotas_pool(const struct ag_quotas *q, const char *pool)
{
	unsigned int i;

	for (i = 0; i < q->nr_pools; i++)
		if (!strcmp(q->pools[i], pool))
			return true;
	return !q->nr_pools;
}
