/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent: its store, its state in memory, and the operations on pools,
 * tenants and volumes. Each operation checks the change against the state,
 * commits it to the store (one transaction over its own rows), applies it
 * to the state, then converges the kernel for the one volume it touched.
 * A crash at any point leaves what reconcile completes:
 * - pool add: probe (refuse a signature unless forced), store;
 * - volume create/change: allocate and store first, then the kernel;
 * - volume delete: store "deleting" and return; the delete job (jobs.h)
 *   removes the devices, zeroes the extents, then drops the volume, so its
 *   name and space are taken again only once nobody can read old data.
 * An operation returns 0 once its change is durable and, for a create or a
 * change, in the kernel: that is its acknowledgement. A failure returns -1
 * with the error in e (err.h); nothing was changed unless the code is
 * AG_E_INTERNAL (the kernel lags: reconcile retries) or AG_E_UNKNOWN.
 *
 * Concurrency: operations on one volume are serialised by the volume's lock,
 * which the caller takes around its read, check and operation
 * (ag_volume_lock); operations on different volumes run together, taking
 * the state's lock only to commit.
 */
#ifndef SLUICE_AGENT_OPS_H
#define SLUICE_AGENT_OPS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "err.h"
#include "nvmet.h"
#include "state.h"

#define AG_VOL_LOCKS 64
#define AG_RESERVATION_PCT 90	/* the default reservation_pct */

struct ag_jobs;

struct ag_agent {
	char dir[256];
	struct ag_db *db;
	struct ag_state st;
	pthread_mutex_t vol_locks[AG_VOL_LOCKS];	/* by the id's hash */
	bool with_kernel;	/* off in host tests: no dm, no wipes */
	/* of a pool's declared capacity, the percentage reservations may take */
	unsigned int reservation_pct;
	struct ag_jobs *jobs;	/* the background work, once started */
	/* NVMe/TCP exports: nvmet's configfs, and the port (id 0: exports off) */
	char nvmet_root[128];
	struct ag_nvmet_port nvme_port;	/* written under st.lock */
	/* tenants' own ports (nvme_tenant_listen), written under st.lock */
	struct ag_tenant_port tenant_ports[AG_TENANT_PORTS_MAX];
	unsigned int nr_tenant_ports;
	/*
	 * Held from reading the exports to the end of the configfs changes, by
	 * a volume's converge and the full one alike: one never applies a copy
	 * older than what another has made.
	 */
	pthread_mutex_t nvmet_lock;
	bool nvmet_auth;	/* nvmet was seen to take hosts' secrets (under nvmet_lock) */
};

/*
 * Open the store in dir (waiting up to lock_wait_s for its lock) and load
 * the state. AG_E_CORRUPT: the store is left as it is and must not be used.
 */
int ag_agent_open(struct ag_agent *a, const char *dir, unsigned int lock_wait_s, bool with_kernel,
		  struct ag_err *e);
void ag_agent_close(struct ag_agent *a);

void ag_volume_lock(struct ag_agent *a, const char *id);
void ag_volume_unlock(struct ag_agent *a, const char *id);

/*
 * Register a disk as a pool (pools.c): its path made canonical, refused when
 * it shares blocks with a pool or carries a pool's label, however it is
 * named, or carries a signature or another sluice label without force. A
 * label with a new UUID is written on it, then the pool is stored.
 */
int ag_pool_add(struct ag_agent *a, const char *name, const char *device, bool force,
		uint64_t capacity_iops, uint64_t capacity_bps, struct ag_err *e);
/*
 * A pool's declared capacity (IO/s, bytes/s; 0: not declared), which
 * bounds the sum of its volumes' reservations: refused (AG_E_OVERCOMMIT)
 * below what is reserved already.
 */
int ag_pool_set_capacity(struct ag_agent *a, const char *name, uint64_t capacity_iops,
			 uint64_t capacity_bps, struct ag_err *e);
/*
 * Find each pool's disk by its label (at its last path first, else on any
 * block device), store where it moved, and label a pool made before labels
 * at its path. A pool not found is marked missing: its volumes are left
 * down, nothing is created, changed or wiped on it. -1 with the first if
 * any is missing; the others are resolved all the same.
 */
int ag_pools_resolve(struct ag_agent *a, struct ag_err *e);

struct ag_volume_spec {
	const char *name, *tenant, *pool;	/* its id is "<tenant>.<name>" (model.h) */
	uint64_t size;
	struct ag_policy policy;
	bool make_tenant;	/* a tenant not yet known is made, bare (the console) */
	bool by_tenant;		/* asked by its tenant: held to the tenant's ceilings */
};

/*
 * The policy is checked whole, in force at the volume's size, under the
 * state's lock: within its tenant's ceilings as they are then.
 */
int ag_volume_create(struct ag_agent *a, const struct ag_volume_spec *s, struct ag_err *e);
/*
 * A larger size (0: the same) and a new policy (NULL: the same), in one
 * change: the scaled rates are computed at the size that results, so a grow
 * whose rates the target refuses is refused whole.
 */
int ag_volume_change(struct ag_agent *a, const char *id, uint64_t size,
		     const struct ag_policy *policy, bool by_tenant, struct ag_err *e);
/* Mark it deleting and hand it to the delete job (started, or run by the caller). */
int ag_volume_delete(struct ag_agent *a, const char *id, struct ag_err *e);

/* A tenant with its token hash, ceilings and quotas (NULL: none). */
int ag_tenant_create(struct ag_agent *a, const char *id, const char *token_sha256,
		     const struct ag_ceilings *ceilings, const struct ag_quotas *quotas,
		     struct ag_err *e);
/*
 * New ceilings or quotas (NULL: the same), in force for the tenant's next
 * create or change; its volumes as they are stay.
 */
int ag_tenant_change(struct ag_agent *a, const char *id, const struct ag_ceilings *ceilings,
		     const struct ag_quotas *quotas, struct ag_err *e);
/* A tenant's token (its hash): the old one stops working at once. */
int ag_tenant_set_token(struct ag_agent *a, const char *id, const char *token_sha256,
			struct ag_err *e);
/* Only a tenant without volumes. */
int ag_tenant_delete(struct ag_agent *a, const char *id, struct ag_err *e);

/*
 * Converge the kernel with the state: every volume whose devices differ is
 * converged on its own, under its lock, so one that fails does not stop the
 * others. -1 if any failed (each one logged), e the first failure.
 */
int ag_reconcile(struct ag_agent *a, struct ag_err *e);
/* One volume's devices (removed when it is deleting). The caller holds its lock. */
int ag_converge_volume(struct ag_agent *a, const char *id, struct ag_err *e);

/*
 * The ports exports are made on: the default, and tenants' own (taken at
 * the next converge or reconcile). ag_export_port: the port of tenant's
 * exports, its own or the default (id 0: exports off); the caller holds
 * st.lock.
 */
void ag_set_export_ports(struct ag_agent *a, const struct ag_nvmet_port *dflt,
			 const struct ag_tenant_port *tenants, unsigned int n);
const struct ag_nvmet_port *ag_export_port(const struct ag_agent *a, const char *tenant);

/*
 * Hosts and exports (exports.c). A host is a tenant's, by a name of its own
 * and an NQN no other host on the appliance has (nvmet admits by NQN). A
 * volume is exported to hosts of its own tenant only; one exported is not
 * deleted (AG_E_BUSY), nor a host with exports, nor a tenant with hosts.
 * Each change is stored, then made in nvmet (with_kernel). The caller of
 * an export change holds the volume's lock. A host's dhchap is its
 * DH-HMAC-CHAP secret (dhchap.h), or NULL for none; one is refused
 * (AG_E_INVALID) where the kernel cannot check it.
 */
int ag_host_add(struct ag_agent *a, const char *tenant, const char *name, const char *nqn,
		const char *dhchap, struct ag_err *e);
int ag_host_delete(struct ag_agent *a, const char *tenant, const char *name, struct ag_err *e);
/* An export that is there already is 0, and converged again. */
int ag_export_add(struct ag_agent *a, const char *volume, const char *host, struct ag_err *e);
int ag_export_delete(struct ag_agent *a, const char *volume, const char *host, struct ag_err *e);
/* The subsystem NQN of a volume: AG_NQN_PREFIX, the appliance's id, the volume's. */
void ag_subsys_nqn(const struct ag_agent *a, const char *volume, char *out);
/* nvmet made as the state says: for one volume, or all (strays of ours removed). */
int ag_converge_exports(struct ag_agent *a, const char *volume, struct ag_err *e);
int ag_reconcile_exports(struct ag_agent *a, struct ag_err *e);

/* Replace the whole state with a model's (an import); m stays the caller's. */
int ag_state_replace(struct ag_agent *a, struct ag_model *m, struct ag_err *e);

#endif
