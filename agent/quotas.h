/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tenant's quotas: what all its volumes together may hold, and where.
 *
 *   capacity_bytes   the sum of its volumes' sizes (deleting ones count
 *                    until their extents are zeroed and free)
 *   volumes          how many volumes it may have, deleting ones too
 *   pools            the pools it may make volumes in (absent: any)
 *   reservation_iops, reservation_bytes_sec
 *                    the sum of its volumes' reservations, so that one
 *                    tenant cannot take a whole pool's admission
 *   total_bytes_sec, read_bytes_sec, write_bytes_sec,
 *   total_iops_sec, read_iops_sec, write_iops_sec
 *                    the rates of all its volumes together, which the
 *                    kernel enforces: every volume's table names the
 *                    tenant's shared group (group=tenant.<id>) with these
 *                    as its group_* limits (every I/O counts as one)
 *
 * 0 (or absent) is no quota. Bytes, count and pools bind the tenant's own
 * requests (the admin may go past them, as past its ceilings); the rates
 * bind every I/O. As JSON (the API's and the
 * store's): {"capacity_bytes": N, "volumes": N, "pools": ["p0", ...]}.
 */
#ifndef SLUICE_AGENT_QUOTAS_H
#define SLUICE_AGENT_QUOTAS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "../dmtarget/sluice-core.h"

#define AG_QUOTA_POOLS 16

struct ag_quotas {
	uint64_t bytes;
	uint64_t volumes;
	unsigned int nr_pools;		/* 0: every pool */
	char pools[AG_QUOTA_POOLS][49];
	uint64_t rates[SL_NR_BUCKETS];	/* as the group's group_* limits; 0: none */
	uint64_t reserve_iops, reserve_bps;
};

/* From a JSON object (-1 with e naming the field), and back. */
int ag_quotas_from_json(struct ag_quotas *q, json_t *obj, struct ag_err *e);
json_t *ag_quotas_to_json(const struct ag_quotas *q);

/* Whether q bounds the tenant's rates: its volumes then share a group. */
bool ag_quotas_group(const struct ag_quotas *q);

/* Whether q lets a tenant use pool. */
bool ag_quotas_pool(const struct ag_quotas *q, const char *pool);

#endif
