/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's operations on pools and volumes. Each one changes the stored
 * state and the kernel in an order that a crash at any point leaves
 * recoverable by reconcile:
 * - pool add: probe (refuse a signature unless forced), store;
 * - volume create/grow/set: allocate and store first, then converge the
 *   kernel (reconcile creates or completes what a crash left out);
 * - volume delete: store "deleting", remove the devices, zero the extents,
 *   then drop the volume from the store (a crash in between finishes the
 *   delete on the next run, so the next tenant never reads old data).
 * An operation returns 0 only once the state is durable and the kernel has
 * it: that is its acknowledgement. A failure returns -AG_E_<class>, with a
 * message in err; nothing was changed unless the class is AG_E_INTERNAL.
 */
#ifndef SLUICE_AGENT_OPS_H
#define SLUICE_AGENT_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum ag_error_class {
	AG_E_INTERNAL = 1,	/* store, kernel or memory: -1 from the layers below */
	AG_E_INVALID,		/* a bad argument */
	AG_E_NOTFOUND,		/* no such pool or volume */
	AG_E_EXISTS,		/* the name is taken */
	AG_E_NOSPACE,		/* the pool has no room */
	AG_E_REFUSED,		/* a device with a signature, without force */
};

int ag_pool_add(struct ag_store *s, const char *name, const char *device, bool force,
		char *err, size_t errlen);
/*
 * policy: target arguments; apolicy: the words the agent applies itself
 * (model.h: rates that scale with the size, dirty_bytes_max), "" for none. Create and set store the policy with the scaled
 * rates of the volume's size; grow recomputes them for the new size, in the
 * same change (so a grow whose rates the target refuses is refused whole).
 * Grow with a policy (base not NULL) sets it in the same change too.
 */
int ag_volume_create(struct ag_store *s, const char *id, const char *tenant,
		     const char *pool, uint64_t size, const char *policy, const char *apolicy,
		     char *err, size_t errlen);
int ag_volume_grow(struct ag_store *s, const char *id, uint64_t size, const char *base,
		   const char *apolicy, char *err, size_t errlen);
int ag_volume_set(struct ag_store *s, const char *id, const char *policy, const char *apolicy,
		  char *err, size_t errlen);
int ag_volume_delete(struct ag_store *s, const char *id, char *err, size_t errlen);

/* A tenant and its record (token hash, ceilings), stored as given. */
int ag_tenant_create(struct ag_store *s, const char *id, json_t *record, char *err,
		     size_t errlen);
/* Only a tenant without volumes. */
int ag_tenant_delete(struct ag_store *s, const char *id, char *err, size_t errlen);

/* Converge the kernel with the stored state; 0 when nothing is left to do. */
int ag_reconcile(struct ag_store *s, char *err, size_t errlen);

#endif
