/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A volume's policy and a tenant's ceilings, typed.
 *
 * A policy is what its owner asked for: the target's limits (struct
 * sl_config, without labels), rates that scale with the volume's size, and
 * the most dirty page cache the volume may hold. It is parsed once at an
 * edge (the API's JSON, the store's text, a console line) and checked by the
 * target's own validator. The limits the target enforces, the policy "in
 * force", follow from it and the volume's size by one function,
 * ag_policy_in_force().
 *
 * Fields have the API's names (libvirt iotune and Cinder's):
 *
 *   total_bytes_sec  bps    read_bytes_sec  rbps    write_bytes_sec  wbps
 *   total_iops_sec   iops   read_iops_sec   riops   write_iops_sec   wiops
 *   <rate>_max               <key>_max: the burst rate
 *   <rate>_max_length        burst_s: one burst length a volume, so every
 *                            _max_length given must be equal
 *   size_iops_sec   iops_size       weight          weight
 *   reservation_iops  reserve_iops  reservation_bytes_sec  reserve_bps
 *   latency_target_us  latency_us
 *                            the p90 completion latency the volume asks its
 *                            pool for, in microseconds (1 to 10^7)
 *   <rate>_per_gb, <rate>_per_gb_min
 *                            the rate is per_gb for each GiB of the size,
 *                            at least per_gb_min and at least 1
 *   dirty_bytes_max          the dirty monitor's bound (monitor.h), with
 *                            the target's dirty_strict=1
 *
 * A value of 0 is the same as none. Values are at most 2^53 (what any JSON
 * client can send exactly).
 *
 * Ceilings are the most a tenant may ask for, field by field, compared with
 * the policy in force: a rate left out is unlimited, so it is above any
 * ceiling on it. A _max without a ceiling of its own is bounded by its
 * rate's ceiling; a burst longer than 1 s above the rate's ceiling needs a
 * ceiling on its _max_length.
 *
 * latency_target_us is bounded the other way: a smaller target asks more of
 * the pool (a shallower queue for every volume in it), so its ceiling is the
 * tightest target the tenant may set, and a non-zero target below it is
 * above the ceiling. No target (0) is always within; a ceiling of 0 bounds
 * nothing, and one above 10^7 leaves the tenant no target at all.
 */
#ifndef SLUICE_AGENT_POLICY_H
#define SLUICE_AGENT_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "../dmtarget/sluice-core.h"

#define AG_VALUE_MAX ((uint64_t)1 << 53)

struct ag_scaled {
	uint64_t per_gib;	/* 0: the rate does not scale */
	uint64_t floor;
};

struct ag_policy {
	struct sl_config limits;	/* a scaled rate's avg is 0 here; no labels */
	struct ag_scaled scaled[SL_NR_BUCKETS];
	uint64_t dirty_bytes_max;	/* 0: none */
};

enum ag_field_kind {
	AG_F_AVG, AG_F_MAX, AG_F_LENGTH, AG_F_IOPS_SIZE, AG_F_WEIGHT,
	AG_F_RESERVE_IOPS, AG_F_RESERVE_BPS, AG_F_LATENCY, AG_F_PER_GB, AG_F_PER_GB_MIN,
	AG_F_DIRTY,
};

struct ag_field {
	const char *name;
	enum ag_field_kind kind;
	enum sl_bucket_id bucket;	/* for the rates' kinds */
};

#define AG_NR_FIELDS 36
extern const struct ag_field ag_fields[AG_NR_FIELDS];

const struct ag_field *ag_field_find(const char *name);

void ag_policy_init(struct ag_policy *p);
/* A field's value as asked (0: none). */
uint64_t ag_policy_get(const struct ag_policy *p, const struct ag_field *f);
/* Set a field (0: none); -1 with e naming it for a value out of its range. */
int ag_policy_set(struct ag_policy *p, const struct ag_field *f, uint64_t v, struct ag_err *e);
bool ag_policy_equal(const struct ag_policy *a, const struct ag_policy *b);

/*
 * The target's limits in force for a volume of size bytes in pool: each
 * scaled rate at that size, dirty_strict with dirty_bytes_max, checked by
 * the target's validator. 0, or -1 with e (AG_E_INVALID) naming the field.
 */
int ag_policy_in_force(const struct ag_policy *p, uint64_t size, const char *pool,
		       struct sl_config *out, struct ag_err *e);

/*
 * The store's text: the target arguments in force (without labels) and the
 * agent's words ("<key>=<per GiB>:<floor>" for each scaled rate,
 * "dirty_bytes_max=<n>"). Parsing checks each word, not the combination.
 */
int ag_policy_parse(struct ag_policy *p, const char *args, const char *words, struct ag_err *e);
int ag_policy_format(const struct ag_policy *p, uint64_t size, const char *pool, char *args,
		     size_t args_len, char *words, size_t words_len, struct ag_err *e);

/* A message of the target's ("riops_max: needs riops") in the fields' names. */
void ag_policy_rename(const char *in, char *out, size_t len);

struct ag_ceilings {
	uint64_t value[AG_NR_FIELDS];	/* by index into ag_fields */
	uint64_t set;		/* bit i: field i has a ceiling */
};

/* Whether a field may carry a ceiling (not the scaling ones: their results do). */
bool ag_ceiling_field(const struct ag_field *f);

/*
 * Whether the limits in force (with dirty_bytes_max) are within ceilings.
 * 0, or -1 with e (AG_E_ABOVE_CEILING) naming the field.
 */
int ag_policy_within(const struct sl_config *in_force, uint64_t dirty_bytes_max,
		     const struct ag_ceilings *c, struct ag_err *e);

/* Ceilings from an object of fields (-1 with e naming a bad one), and back. */
int ag_ceilings_from_json(struct ag_ceilings *c, json_t *obj, struct ag_err *e);
json_t *ag_ceilings_to_json(const struct ag_ceilings *c);

#endif
