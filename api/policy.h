/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A volume's policy as the API spells it (libvirt iotune / Cinder names) and
 * as the target takes it (table arguments). The object holds only what is
 * set; an absent field is no limit (or the default weight).
 *
 *   total_bytes_sec  bps    read_bytes_sec  rbps    write_bytes_sec  wbps
 *   total_iops_sec   iops   read_iops_sec   riops   write_iops_sec   wiops
 *   <each of those>_max             <key>_max (the burst rate)
 *   <each of those>_max_length      burst_s (one burst length per volume:
 *                                   every _max_length given must be equal)
 *   size_iops_sec   iops_size       weight          weight
 *   reservation_iops  reserve_iops  reservation_bytes_sec  reserve_bps
 *
 * Capacity-based rates (Cinder's): <rate>_per_gb for any of the six rates
 * sets it to that much per GiB of the volume's size, at least
 * <rate>_per_gb_min (and at least 1); the rate follows the volume when it
 * grows. A rate and its _per_gb cannot both be given.
 *
 * dirty_bytes_max: the most page cache the volume may hold dirty, enforced
 * by the agent's dirty monitor (not a target argument).
 *
 * Failures return -2 for a request of the wrong shape (not an object, an
 * unknown field) and -1 for a bad value, with a message naming the field.
 *
 * Values are JSON integers from 0 (0 is the same as absent) to 2^53; the
 * combinations are checked by the target's own rules (QEMU's), and the
 * target's messages are given back with the API's names.
 */
#ifndef SLUICE_API_POLICY_H
#define SLUICE_API_POLICY_H

#include <jansson.h>
#include <stddef.h>

/*
 * The target arguments of a policy object, and its agent_policy words (the
 * *_per_gb fields, as model.h keeps them): 0, or -1 with a message naming
 * the field in err ("read_iops_sec: an integer from 0 to 2^53").
 */
int ap_policy_to_args(json_t *policy, char *args, size_t len, char *apolicy, size_t slen,
		      char *err, size_t errlen);

/*
 * The policy object of target arguments and agent_policy words (as stored; apolicy
 * may be NULL): the *_per_gb fields stand in for the rates they set. NULL
 * on a word it does not know.
 */
json_t *ap_policy_from_args(const char *args, const char *apolicy);

/* The policy in force: the rates of args and dirty_bytes_max of apolicy. */
json_t *ap_policy_in_force(const char *args, const char *apolicy);

/*
 * Apply a partial change to a policy object in place: a field set to a
 * number replaces it, to null removes it. -1 with err on a value of
 * another type or an unknown field; policy is then unchanged.
 */
int ap_policy_merge(json_t *policy, json_t *patch, char *err, size_t errlen);

/* A target message ("riops_max: needs riops") in the API's names. */
void ap_policy_rename_error(const char *in, char *out, size_t len);

/*
 * Whether policy stays within a tenant's ceilings (an object of the same
 * fields, each the most the tenant may ask for; a ceiling on a rate also
 * forbids leaving that rate unlimited). 0, or -1 with the field in err.
 */
int ap_policy_within(json_t *policy, json_t *ceilings, char *err, size_t errlen);

/* Check a ceilings object: known fields, integers. */
int ap_ceilings_check(json_t *ceilings, char *err, size_t errlen);

#endif
