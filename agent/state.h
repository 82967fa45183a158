/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's state in memory, typed: the pools (each with its extent map),
 * tenants and volumes of the store, each object allocated on its own and
 * found by id in constant time. It is what the API and the monitor read; an
 * operation changes it only after the store has committed the same change,
 * so it is always what the store holds.
 *
 * lock: readers hold it shared while they look and copy, writers exclusive
 * while they check a change, commit it and apply it here (a few
 * milliseconds: the commit's fsync). Nothing slow (the kernel, a wipe) ever
 * runs under it, so a read never waits behind a long operation.
 */
#ifndef SLUICE_AGENT_STATE_H
#define SLUICE_AGENT_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "err.h"
#include "idmap.h"
#include "model.h"

struct ag_state {
	pthread_rwlock_t lock;
	struct ag_idmap pools, tenants, vols;
	struct ag_idmap names;	/* volumes by "<tenant>/<name>" */
	struct ag_idmap hosts;	/* by "<tenant>/<name>" */
	struct ag_idmap nqns;	/* hosts by their NQN */
	struct ag_idmap exports;	/* by "<volume id>/<host name>" */
	uint64_t generation;	/* bumped by every change */
};

int ag_state_init(struct ag_state *st);
void ag_state_destroy(struct ag_state *st);

/*
 * Take the objects of a checked model (ag_model_from_json rules); m is left
 * empty. Every pool's extent map is built from its volumes' runs.
 */
int ag_state_fill(struct ag_state *st, struct ag_model *m, struct ag_err *e);

/* Lookups; the caller holds the lock. */
struct ag_pool *ag_state_pool(const struct ag_state *st, const char *name);
struct ag_tenant *ag_state_tenant(const struct ag_state *st, const char *id);
struct ag_volume *ag_state_volume(const struct ag_state *st, const char *id);
/* A volume by its tenant and its name in the tenant; NULL for none (or invalid ones). */
struct ag_volume *ag_state_volume_named(const struct ag_state *st, const char *tenant,
					const char *name);

/*
 * The objects of a map sorted by id, as a malloc'd array of *n pointers
 * (NULL when there are none or memory is short: check *n); the caller holds
 * the lock while it uses them.
 */
void **ag_state_sorted(const struct ag_idmap *m, size_t *n);

/* Extents of a pool in use (its label's excluded). */
uint64_t ag_pool_used(const struct ag_pool *p);

/* Changes, after the store has them; the caller holds the lock exclusive. */
int ag_state_add_pool(struct ag_state *st, struct ag_pool *p);	/* takes p (malloc'd) */
int ag_state_add_tenant(struct ag_state *st, struct ag_tenant *t);	/* takes t */
void ag_state_drop_tenant(struct ag_state *st, const char *id);
/*
 * Takes v and marks its runs: 0, or -EINVAL (runs taken or out of its
 * pool), -EEXIST (its id, or its name in its tenant, is taken), -ENOMEM.
 */
int ag_state_add_volume(struct ag_state *st, struct ag_volume *v);
/* Drop a volume, its extents given back to its pool. */
void ag_state_drop_volume(struct ag_state *st, const char *id);

/*
 * Hosts and exports, after the store has them; the caller holds the lock
 * exclusive. Adding takes h or x (malloc'd): 0, -EEXIST (its key, or a
 * host's NQN, is taken) or -ENOMEM. An export counts on its volume and
 * its host.
 */
int ag_state_add_host(struct ag_state *st, struct ag_host *h);
void ag_state_drop_host(struct ag_state *st, const char *key);
int ag_state_add_export(struct ag_state *st, struct ag_export *x);
void ag_state_drop_export(struct ag_state *st, const char *key);
/* How many hosts a tenant has. */
size_t ag_tenant_hosts(const struct ag_state *st, const char *tenant);
/* The host of a volume's tenant by name; NULL for none. */
struct ag_host *ag_state_host(const struct ag_state *st, const char *tenant, const char *name);

/* A deep copy of a volume (its runs too), and what frees one. */
int ag_volume_copy(struct ag_volume *dst, const struct ag_volume *src);
void ag_volume_release(struct ag_volume *v);
struct ag_volume *ag_volume_dup(const struct ag_volume *src);
void ag_volume_free(struct ag_volume *v);
void ag_tenant_free(struct ag_tenant *t);

#endif
