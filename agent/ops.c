// SPDX-License-Identifier: GPL-2.0
/* The agent's operations on pools, tenants and volumes; see ops.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <blkid/blkid.h>

#include "dmctl.h"
#include "jobs.h"
#include "log.h"
#include "ops.h"
#include "plan.h"

int ag_agent_open(struct ag_agent *a, const char *dir, unsigned int lock_wait_s, bool with_kernel,
		  struct ag_err *e)
{
	struct ag_model m;
	struct ag_err one;
	int i;

	memset(a, 0, sizeof(*a));
	snprintf(a->dir, sizeof(a->dir), "%s", dir);
	a->with_kernel = with_kernel;
	a->reservation_pct = AG_RESERVATION_PCT;
	snprintf(a->nvmet_root, sizeof(a->nvmet_root), "%s", AG_NVMET_ROOT);
	a->nvme_port = (struct ag_nvmet_port){ .id = 1, .addr = "0.0.0.0", .port = 4420 };
	for (i = 0; i < AG_VOL_LOCKS; i++)
		pthread_mutex_init(&a->vol_locks[i], NULL);
	pthread_mutex_init(&a->nvmet_lock, NULL);
	if (ag_state_init(&a->st))
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	if (ag_db_open(&a->db, dir, lock_wait_s, e) || ag_db_load(a->db, &m, e))
		goto fail;
	if (ag_state_fill(&a->st, &m, e)) {
		ag_model_free(&m);
		goto fail;
	}
	if (with_kernel) {
		ag_dm_init();
		/* a pool not found is logged and left down; the others go on */
		ag_pools_resolve(a, &one);
	}
	return 0;
fail:
	ag_db_close(a->db);
	a->db = NULL;
	ag_state_destroy(&a->st);
	return -1;
}

void ag_agent_close(struct ag_agent *a)
{
	int i;

	ag_jobs_stop(a);
	ag_db_close(a->db);
	ag_state_destroy(&a->st);
	for (i = 0; i < AG_VOL_LOCKS; i++)
		pthread_mutex_destroy(&a->vol_locks[i]);
	pthread_mutex_destroy(&a->nvmet_lock);
	memset(a, 0, sizeof(*a));
}

static pthread_mutex_t *lock_of(struct ag_agent *a, const char *id)
{
	unsigned int h = 5381;

	while (*id)
		h = h * 33 + (unsigned char)*id++;
	return &a->vol_locks[h % AG_VOL_LOCKS];
}

void ag_volume_lock(struct ag_agent *a, const char *id)
{
	pthread_mutex_lock(lock_of(a, id));
}

void ag_volume_unlock(struct ag_agent *a, const char *id)
{
	pthread_mutex_unlock(lock_of(a, id));
}

/* Commit what the caller put in the open transaction; the state is written only after. */
static int commit(struct ag_agent *a, struct ag_err *e)
{
	if (ag_db_commit(a->db, e)) {
		if (e->code == AG_E_UNKNOWN)
			ag_log("error", "%s", e->msg);
		return -1;
	}
	return 0;
}

static uint64_t extents_for(uint64_t size)
{
	return (size + AG_EXTENT_BYTES - 1) / AG_EXTENT_BYTES;
}

/*
 * Whether a policy may be had by a volume of size bytes in pool: in force by
 * the target's rules and, when its tenant asks, within the tenant's
 * ceilings (t NULL: none). The caller holds the state's lock.
 */
static int policy_ok(const struct ag_policy *policy, uint64_t size, const char *pool,
		     const struct ag_tenant *t, bool by_tenant, struct ag_err *e)
{
	struct sl_config in_force;
	char msg[sizeof(e->msg) + 8];

	if (!ag_policy_in_force(policy, size, pool, &in_force, e) &&
	    (!by_tenant || !t || !ag_policy_within(&in_force, policy->dirty_bytes_max, &t->ceilings, e)))
		return 0;
	/* "policy: <field>: <what>", the field's path in a request */
	snprintf(msg, sizeof(msg), "policy: %s", e->msg);
	return ag_fail(e, e->code, "%.399s", msg);
}

/*
 * Whether a pool admits a volume's reservation of one kind going from had
 * to want: the pool's reservations stay within reservation_pct of its
 * declared capacity. Lowering one is always admitted.
 */
static int admit_one(const struct ag_agent *a, const struct ag_pool *p, const char *field,
		     const char *unit, uint64_t capacity, uint64_t reserved, uint64_t had,
		     uint64_t want, struct ag_err *e)
{
	uint64_t limit = capacity * a->reservation_pct / 100;

	if (want <= had)
		return 0;
	if (!capacity)
		return ag_fail(e, AG_E_OVERCOMMIT, "policy: %s: pool %s has no declared capacity, so "
			       "it admits no reservation", field, p->name);
	if (reserved - had + want > limit)
		return ag_fail(e, AG_E_OVERCOMMIT, "policy: %s: pool %s admits %" PRIu64 " %s of "
			       "reservations (%u%% of its capacity, %" PRIu64 "), and %" PRIu64
			       " are taken", field, p->name, limit, unit, a->reservation_pct,
			       capacity, reserved - had);
	return 0;
}

static int admits(const struct ag_agent *a, const struct ag_pool *p, const struct sl_config *had,
		  const struct ag_policy *want, struct ag_err *e)
{
	return admit_one(a, p, "reservation_iops", "IO/s", p->capacity_iops, p->reserved_iops,
			 had ? had->reserve_iops : 0, want->limits.reserve_iops, e) ||
	       admit_one(a, p, "reservation_bytes_sec", "bytes/s", p->capacity_bps, p->reserved_bps,
			 had ? had->reserve_bps : 0, want->limits.reserve_bps, e) ? -1 : 0;
}

/*
 * Whether a tenant's quotas let it hold a volume more (new_volume), grown
 * by more_bytes, in pool. The caller holds the state's lock.
 */
static int within_quotas(const struct ag_tenant *t, bool new_volume, uint64_t more_bytes,
			 const char *pool, const struct sl_config *had, const struct ag_policy *want,
			 struct ag_err *e)
{
	const struct ag_quotas *q = &t->quotas;
	uint64_t had_iops = had ? had->reserve_iops : 0, had_bps = had ? had->reserve_bps : 0;
	uint64_t iops = want->limits.reserve_iops, bps = want->limits.reserve_bps;

	/* reservations: what all its volumes reserve together, where one is raised */
	if (q->reserve_iops && iops > had_iops && t->reserved_iops - had_iops + iops > q->reserve_iops)
		return ag_fail(e, AG_E_QUOTA, "policy: reservation_iops: tenant %s may reserve %" PRIu64
			       " IO/s in all, and reserves %" PRIu64 " elsewhere", t->id,
			       q->reserve_iops, t->reserved_iops - had_iops);
	if (q->reserve_bps && bps > had_bps && t->reserved_bps - had_bps + bps > q->reserve_bps)
		return ag_fail(e, AG_E_QUOTA, "policy: reservation_bytes_sec: tenant %s may reserve %"
			       PRIu64 " bytes/s in all, and reserves %" PRIu64 " elsewhere", t->id,
			       q->reserve_bps, t->reserved_bps - had_bps);

	/* what it holds stays: only a new volume or more bytes are held to them */
	if ((new_volume || more_bytes) && !ag_quotas_pool(q, pool))
		return ag_fail(e, AG_E_QUOTA, "pool: tenant %s may not use pool %.64s", t->id, pool);
	if (new_volume && q->volumes && t->nr_volumes + 1 > q->volumes)
		return ag_fail(e, AG_E_QUOTA, "name: tenant %s may have %" PRIu64 " volumes, and has %zu",
			       t->id, q->volumes, t->nr_volumes);
	if (q->bytes && more_bytes && t->used_bytes + more_bytes > q->bytes)
		return ag_fail(e, AG_E_QUOTA, "size_bytes: tenant %s may hold %" PRIu64 " bytes, holds %"
			       PRIu64 ", and %" PRIu64 " more is past that", t->id, q->bytes,
			       t->used_bytes, more_bytes);
	return 0;
}

/* A tenant record that none has made yet: a volume made at the console names it. */
static struct ag_tenant *bare_tenant(const char *id)
{
	struct ag_tenant *t = calloc(1, sizeof(*t));

	if (t)
		strcpy(t->id, id);
	return t;
}

int ag_volume_create(struct ag_agent *a, const struct ag_volume_spec *s, struct ag_err *e)
{
	char id[AG_VOLUME_ID_MAX + 1];
	struct ag_volume *v = NULL;
	struct ag_tenant *t = NULL;
	struct ag_pool *p;
	int rc = -1;

	if (!ag_valid_id(s->name))
		return ag_fail(e, AG_E_INVALID, "name: 1 to %d of a-z 0-9 -, not ending in -data", AG_ID_MAX);
	if (!ag_valid_id(s->tenant))
		return ag_fail(e, AG_E_INVALID, "tenant: 1 to %d of a-z 0-9 -", AG_ID_MAX);
	if (!s->size || s->size % AG_SIZE_ALIGN || s->size > AG_SIZE_MAX)
		return ag_fail(e, AG_E_INVALID, "size: a positive multiple of 4096, at most 2^56");
	v = calloc(1, sizeof(*v));
	if (!v)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	ag_volume_id_of(id, s->tenant, s->name);
	ag_volume_id_of(v->id, s->tenant, s->name);
	strcpy(v->name, s->name);
	ag_volume_scoped(v->scoped, s->tenant, s->name);
	strcpy(v->tenant, s->tenant);
	snprintf(v->pool, sizeof(v->pool), "%s", s->pool);
	v->policy = s->policy;
	v->size = s->size;
	pthread_rwlock_wrlock(&a->st.lock);
	p = ag_state_pool(&a->st, s->pool);
	if (!p) {
		ag_fail(e, AG_E_NOTFOUND, "pool: no pool %.64s", s->pool);
		goto out;
	}
	if (p->missing) {
		ag_fail(e, AG_E_BUSY, "pool: %s: its disk is missing", p->name);
		goto out;
	}
	if (policy_ok(&s->policy, s->size, p->name, ag_state_tenant(&a->st, s->tenant), s->by_tenant,
		      e) || admits(a, p, NULL, &s->policy, e))
		goto out;
	if (s->by_tenant && ag_state_tenant(&a->st, s->tenant) &&
	    within_quotas(ag_state_tenant(&a->st, s->tenant), true, s->size, p->name, NULL,
			  &s->policy, e))
		goto out;
	/* its name is its tenant's: another tenant's volume of the name is no matter here */
	if (ag_state_volume_named(&a->st, s->tenant, s->name) || ag_state_volume(&a->st, v->id)) {
		ag_fail(e, AG_E_EXISTS, "volume %s exists", s->name);
		goto out;
	}
	switch (ag_extmap_alloc(&p->map, extents_for(s->size), &v->runs, &v->nr_runs)) {
	case 0:
		break;
	case -ENOSPC:
		ag_fail(e, AG_E_NOSPACE, "pool %s: no room for %" PRIu64 " bytes (%" PRIu64 " extents free)",
			p->name, s->size, p->map.nr_free);
		goto out;
	default:
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		goto out;
	}
	/* the extents are the volume's from here; the state takes them again below */
	ag_extmap_release(&p->map, v->runs, v->nr_runs);
	/* the API's tenant may have been deleted since it looked: it is not made again */
	if (!ag_state_tenant(&a->st, s->tenant)) {
		if (!s->make_tenant) {
			ag_fail(e, AG_E_NOTFOUND, "no tenant %s", s->tenant);
			goto out;
		}
		t = bare_tenant(s->tenant);
		if (!t) {
			ag_fail(e, AG_E_INTERNAL, "out of memory");
			goto out;
		}
	}
	if (ag_db_begin(a->db, e))
		goto out;
	if ((t && ag_db_put_tenant(a->db, t, e)) || ag_db_put_volume(a->db, v, e)) {
		ag_db_rollback(a->db);
		goto out;
	}
	if (commit(a, e))
		goto out;
	if (t && ag_state_add_tenant(&a->st, t)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory (the volume is stored: restart to see it)");
		goto out;
	}
	t = NULL;
	if (ag_state_add_volume(&a->st, v)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory (the volume is stored: restart to see it)");
		goto out;
	}
	v = NULL;
	rc = 0;
out:
	pthread_rwlock_unlock(&a->st.lock);
	ag_tenant_free(t);
	ag_volume_free(v);
	if (!rc && a->with_kernel)
		rc = ag_converge_volume(a, id, e);
	return rc;
}

int ag_volume_change(struct ag_agent *a, const char *id, uint64_t size,
		     const struct ag_policy *policy, bool by_tenant, struct ag_err *e)
{
	bool tell_hosts = false;
	struct ag_volume next, *v;
	struct ag_tenant *t;
	struct ag_pool *p;
	int rc = -1;

	memset(&next, 0, sizeof(next));
	pthread_rwlock_wrlock(&a->st.lock);
	v = ag_state_volume(&a->st, id);
	if (!v || v->deleting) {
		ag_fail(e, AG_E_NOTFOUND, "no volume %s", id);
		goto out;
	}
	/* a volume stored before sizes were of 4096 keeps its size until it grows */
	if (!size)
		size = v->size;
	if (size != v->size && (size % AG_SIZE_ALIGN || size < v->size || size > AG_SIZE_MAX)) {
		ag_fail(e, AG_E_INVALID, "size: a multiple of 4096, at least the current %" PRIu64
			", at most 2^56", v->size);
		goto out;
	}
	if (ag_state_pool(&a->st, v->pool)->missing) {
		ag_fail(e, AG_E_BUSY, "volume %s: its pool's disk is missing", id);
		goto out;
	}
	if (!policy)
		policy = &v->policy;
	p = ag_state_pool(&a->st, v->pool);
	t = ag_state_tenant(&a->st, v->tenant);
	if (policy_ok(policy, size, v->pool, t, by_tenant, e) ||
	    admits(a, p, &v->policy.limits, policy, e) ||
	    (by_tenant && t && within_quotas(t, false, size - v->size, v->pool, &v->policy.limits,
					       policy, e)))
		goto out;
	if (ag_volume_copy(&next, v)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		goto out;
	}
	next.policy = *policy;
	if (extents_for(size) > extents_for(v->size)) {
		switch (ag_extmap_alloc(&p->map, extents_for(size) - extents_for(v->size), &next.runs,
					&next.nr_runs)) {
		case 0:
			break;
		case -ENOSPC:
			ag_fail(e, AG_E_NOSPACE, "pool %s: no room to grow %s", v->pool, id);
			goto out;
		default:
			ag_fail(e, AG_E_INTERNAL, "out of memory");
			goto out;
		}
	}
	next.size = size;
	if (ag_db_begin(a->db, e))
		goto undo;
	if (ag_db_put_volume(a->db, &next, e)) {
		ag_db_rollback(a->db);
		goto undo;
	}
	if (commit(a, e))
		goto undo;
	/* the new runs stay marked in the map; the volume takes the new record */
	if (t) {
		t->used_bytes += next.size - v->size;
		t->reserved_iops += next.policy.limits.reserve_iops - v->policy.limits.reserve_iops;
		t->reserved_bps += next.policy.limits.reserve_bps - v->policy.limits.reserve_bps;
	}
	p->reserved_iops += next.policy.limits.reserve_iops - v->policy.limits.reserve_iops;
	p->reserved_bps += next.policy.limits.reserve_bps - v->policy.limits.reserve_bps;
	/* a grown volume's hosts are told its new size (nvmet's revalidate), after the kernel has it */
	tell_hosts = next.size > v->size && v->nr_exports;
	ag_volume_release(v);
	*v = next;
	next.runs = NULL;
	v->changed = ++a->st.generation;
	rc = 0;
	goto out;
undo:
	/* the allocation may have lengthened the last run: give back all, keep the old */
	ag_extmap_release(&p->map, next.runs, next.nr_runs);
	ag_extmap_mark(&p->map, v->runs, v->nr_runs);
out:
	pthread_rwlock_unlock(&a->st.lock);
	ag_volume_release(&next);
	if (!rc && a->with_kernel)
		rc = ag_converge_volume(a, id, e);
	if (!rc && a->with_kernel && tell_hosts)
		rc = ag_converge_exports(a, id, e);
	return rc;
}

int ag_volume_delete(struct ag_agent *a, const char *id, struct ag_err *e)
{
	struct ag_volume *v;
	int64_t was;
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	v = ag_state_volume(&a->st, id);
	if (!v) {
		ag_fail(e, AG_E_NOTFOUND, "no volume %s", id);
		goto out;
	}
	if (v->deleting) {
		/* asked again: it is under way */
		rc = 0;
		goto out;
	}
	/* a host could still be reading it: it is unexported first */
	if (v->nr_exports) {
		ag_fail(e, AG_E_BUSY, "volume %s is exported to %zu hosts: unexport it first", id,
			v->nr_exports);
		goto out;
	}
	was = v->deleting_since;
	v->deleting = true;
	v->deleting_since = (int64_t)time(NULL);
	if (ag_db_begin(a->db, e) || ag_db_put_volume(a->db, v, e) || commit(a, e)) {
		ag_db_rollback(a->db);
		v->deleting = false;
		v->deleting_since = was;
		goto out;
	}
	a->st.generation++;
	rc = 0;
	ag_log("info", "volume %s: deleting", id);
out:
	pthread_rwlock_unlock(&a->st.lock);
	if (!rc)
		ag_jobs_kick(a);
	return rc;
}

int ag_tenant_create(struct ag_agent *a, const char *id, const char *token_sha256,
		     const struct ag_ceilings *ceilings, const struct ag_quotas *quotas,
		     struct ag_err *e)
{
	struct ag_tenant *t;
	int rc = -1;

	if (!ag_valid_id(id))
		return ag_fail(e, AG_E_INVALID, "id: 1 to %d of a-z 0-9 -, not ending in -data", AG_ID_MAX);
	t = bare_tenant(id);
	if (!t)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	snprintf(t->token_sha256, sizeof(t->token_sha256), "%s", token_sha256);
	if (ceilings)
		t->ceilings = *ceilings;
	if (quotas)
		t->quotas = *quotas;
	pthread_rwlock_wrlock(&a->st.lock);
	if (ag_state_tenant(&a->st, id)) {
		ag_fail(e, AG_E_EXISTS, "tenant %s exists", id);
	} else if (!ag_db_begin(a->db, e)) {
		if (ag_db_put_tenant(a->db, t, e))
			ag_db_rollback(a->db);
		else if (!commit(a, e)) {
			if (ag_state_add_tenant(&a->st, t)) {
				ag_fail(e, AG_E_INTERNAL, "out of memory (the tenant is stored: restart to see it)");
			} else {
				t = NULL;
				rc = 0;
			}
		}
	}
	pthread_rwlock_unlock(&a->st.lock);
	ag_tenant_free(t);
	if (!rc)
		ag_log("info", "tenant %s created", id);
	return rc;
}

/* Converge each of a tenant's volumes, each under its lock; the first failure in e. */
static int converge_tenant(struct ag_agent *a, const char *tenant, struct ag_err *e)
{
	char (*ids)[AG_VOLUME_ID_MAX + 1];
	struct ag_err one;
	void **all;
	size_t i, n = 0, total;
	int rc = 0;

	pthread_rwlock_rdlock(&a->st.lock);
	total = a->st.vols.nr;
	all = ag_idmap_values(&a->st.vols);
	ids = malloc((total + 1) * sizeof(*ids));
	for (i = 0; all && ids && i < total; i++) {
		const struct ag_volume *v = all[i];

		/* a volume of a missing pool is down: it takes the group when it is back */
		if (!strcmp(v->tenant, tenant) && !v->deleting &&
		    !ag_state_pool(&a->st, v->pool)->missing)
			strcpy(ids[n++], v->id);
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(all);
	if (!ids)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	for (i = 0; i < n; i++) {
		ag_volume_lock(a, ids[i]);
		if (ag_converge_volume(a, ids[i], &one) && !rc++)
			*e = one;
		ag_volume_unlock(a, ids[i]);
	}
	free(ids);
	return rc ? -1 : 0;
}

int ag_tenant_change(struct ag_agent *a, const char *id, const struct ag_ceilings *ceilings,
		     const struct ag_quotas *quotas, struct ag_err *e)
{
	struct ag_tenant *t, next;
	bool regroup = false;
	struct ag_err one;
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	t = ag_state_tenant(&a->st, id);
	if (!t) {
		ag_fail(e, AG_E_NOTFOUND, "no tenant %s", id);
		goto out;
	}
	next = *t;
	if (ceilings)
		next.ceilings = *ceilings;
	if (quotas)
		next.quotas = *quotas;
	if (ag_db_store_tenant(a->db, &next, e))
		goto out;
	/* the next create or change is held to them; what exists stays */
	regroup = memcmp(t->quotas.rates, next.quotas.rates, sizeof(t->quotas.rates));
	t->ceilings = next.ceilings;
	t->quotas = next.quotas;
	a->st.generation++;
	rc = 0;
	ag_log("info", "tenant %s: ceilings and quotas changed", id);
out:
	pthread_rwlock_unlock(&a->st.lock);
	/*
	 * new rate quotas: every volume's table names the group with them. The
	 * change is made; a volume the kernel did not take yet is logged and
	 * left to the reconcile, as a create's would be.
	 */
	if (!rc && regroup && a->with_kernel && converge_tenant(a, id, &one))
		ag_log("warning", "tenant %s: %s (the reconcile retries)", id, one.msg);
	return rc;
}

int ag_tenant_set_token(struct ag_agent *a, const char *id, const char *token_sha256,
			struct ag_err *e)
{
	struct ag_tenant *t, next;
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	t = ag_state_tenant(&a->st, id);
	if (!t) {
		ag_fail(e, AG_E_NOTFOUND, "no tenant %s", id);
		goto out;
	}
	next = *t;
	snprintf(next.token_sha256, sizeof(next.token_sha256), "%s", token_sha256);
	if (ag_db_store_tenant(a->db, &next, e))
		goto out;
	/* the old token stops with the next request: it is compared under this lock */
	strcpy(t->token_sha256, next.token_sha256);
	rc = 0;
	ag_log("info", "tenant %s: token replaced", id);
out:
	pthread_rwlock_unlock(&a->st.lock);
	return rc;
}

int ag_tenant_delete(struct ag_agent *a, const char *id, struct ag_err *e)
{
	const struct ag_tenant *t;
	size_t hosts;
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	t = ag_state_tenant(&a->st, id);
	if (!t) {
		ag_fail(e, AG_E_NOTFOUND, "no tenant %s", id);
		goto out;
	}
	/* a tenant's volumes, deleting ones included, hold its name */
	if (t->nr_volumes) {
		ag_fail(e, AG_E_BUSY, "tenant %s has %zu volumes", id, t->nr_volumes);
		goto out;
	}
	hosts = ag_tenant_hosts(&a->st, id);
	if (hosts) {
		ag_fail(e, AG_E_BUSY, "tenant %s has %zu hosts", id, hosts);
		goto out;
	}
	if (ag_db_begin(a->db, e))
		goto out;
	if (ag_db_del_tenant(a->db, id, e)) {
		ag_db_rollback(a->db);
		goto out;
	}
	if (commit(a, e))
		goto out;
	ag_state_drop_tenant(&a->st, id);
	rc = 0;
	ag_log("info", "tenant %s deleted", id);
out:
	pthread_rwlock_unlock(&a->st.lock);
	return rc;
}

int ag_state_replace(struct ag_agent *a, struct ag_model *m, struct ag_err *e)
{
	struct ag_state fresh;
	struct ag_model copy;
	struct ag_idmap t;
	int rc = -1;

	if (ag_state_init(&fresh))
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	pthread_rwlock_wrlock(&a->st.lock);
	if (ag_db_begin(a->db, e))
		goto out;
	if (ag_db_clear(a->db, e) || ag_db_put_model(a->db, m, e)) {
		ag_db_rollback(a->db);
		goto out;
	}
	if (commit(a, e))
		goto out;
	/* the state as the store now has it, in place of the old (which fresh takes to free) */
	if (ag_db_load(a->db, &copy, e))
		goto out;
	if (ag_state_fill(&fresh, &copy, e)) {
		ag_model_free(&copy);
		goto out;
	}
	t = a->st.pools, a->st.pools = fresh.pools, fresh.pools = t;
	t = a->st.tenants, a->st.tenants = fresh.tenants, fresh.tenants = t;
	t = a->st.vols, a->st.vols = fresh.vols, fresh.vols = t;
	t = a->st.names, a->st.names = fresh.names, fresh.names = t;
	t = a->st.hosts, a->st.hosts = fresh.hosts, fresh.hosts = t;
	t = a->st.nqns, a->st.nqns = fresh.nqns, fresh.nqns = t;
	t = a->st.exports, a->st.exports = fresh.exports, fresh.exports = t;
	a->st.generation++;
	rc = 0;
out:
	pthread_rwlock_unlock(&a->st.lock);
	ag_state_destroy(&fresh);
	return rc;
}

/* What a volume's devices should be: its record, and its pool's device. */
struct want_vol {
	struct ag_volume v;
	dev_t pool_devno;	/* the disk its pool's label is on */
	uint64_t group_rates[SL_NR_BUCKETS];	/* its tenant's rate quotas */
};

/* Copies of the volumes (all, or the one named), for planning outside the lock. */
static struct want_vol *snapshot(struct ag_agent *a, const char *only, size_t *n, struct ag_err *e)
{
	const struct ag_tenant *t;
	struct want_vol *w;
	void **all = NULL;
	size_t i, k = 0, total;

	pthread_rwlock_rdlock(&a->st.lock);
	total = only ? 1 : a->st.vols.nr;
	w = calloc(total + 1, sizeof(*w));
	if (!only)
		all = ag_idmap_values(&a->st.vols);
	if (!w || (!only && total && !all)) {
		pthread_rwlock_unlock(&a->st.lock);
		free(w);
		free(all);
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		return NULL;
	}
	for (i = 0; i < total; i++) {
		const struct ag_volume *v = only ? ag_state_volume(&a->st, only) : all[i];
		const struct ag_pool *p = v ? ag_state_pool(&a->st, v->pool) : NULL;

		/*
		 * a volume of a missing pool is left out: its devices, if any,
		 * are reported and left alone, never made over another disk
		 */
		if (!v || p->missing)
			continue;
		if (ag_volume_copy(&w[k].v, v))
			break;
		w[k].pool_devno = p->devno;
		t = ag_state_tenant(&a->st, v->tenant);
		if (t)
			memcpy(w[k].group_rates, t->quotas.rates, sizeof(w[k].group_rates));
		k++;
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(all);
	if (i < total) {
		while (k--)
			ag_volume_release(&w[k].v);
		free(w);
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		return NULL;
	}
	*n = k;
	return w;
}

static void snapshot_free(struct want_vol *w, size_t n)
{
	while (w && n--)
		ag_volume_release(&w[n].v);
	free(w);
}

/*
 * The wanted tables of the volumes, from their records and the live
 * devices, each a malloc'd string (wants_free).
 */
static int wants(const struct want_vol *vols, size_t n, struct ag_want *w,
		 const struct ag_have *const *have, size_t nhave, struct ag_err *e)
{
	const struct ag_have *hd;
	char table[8192];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct ag_volume *v = &vols[i].v;
		char pool_devno[32], data_devno[160], data[128];

		w[i] = (struct ag_want){ v->id, NULL, NULL, v->deleting };
		if (v->deleting)
			continue;
		if (!vols[i].pool_devno)
			return ag_fail(e, AG_E_INTERNAL, "pool %s: not found on a disk yet", v->pool);
		snprintf(pool_devno, sizeof(pool_devno), "%u:%u", major(vols[i].pool_devno),
			 minor(vols[i].pool_devno));
		if (ag_data_table(v, pool_devno, table, sizeof(table)))
			return ag_fail(e, AG_E_INTERNAL, "volume %s: table too long", v->id);
		w[i].data_table = strdup(table);
		/* the kernel prints the device below as maj:min once it exists */
		snprintf(data, sizeof(data), AG_DM_PREFIX "%s-data", v->id);
		hd = ag_have_find(have, nhave, data);
		if (hd)
			snprintf(data_devno, sizeof(data_devno), "%u:%u", hd->major, hd->minor);
		else
			snprintf(data_devno, sizeof(data_devno), "/dev/mapper/%s", data);
		if (ag_sluice_table(v, vols[i].group_rates, data_devno, table, sizeof(table)))
			return ag_fail(e, AG_E_INTERNAL, "volume %s: bad policy", v->id);
		w[i].sluice_table = strdup(table);
		if (!w[i].data_table || !w[i].sluice_table)
			return ag_fail(e, AG_E_INTERNAL, "out of memory");
	}
	return 0;
}

static int apply(const struct ag_action *a)
{
	switch (a->kind) {
	case AG_CREATE:
		return ag_dm_create(a->name, a->arg);
	case AG_RELOAD:
		return ag_dm_reload(a->name, a->arg);
	case AG_MESSAGE:
		return ag_dm_message(a->name, a->arg);
	case AG_REMOVE:
		return ag_dm_remove(a->name);
	case AG_REPORT:
		ag_log("warning", "%s: %s", a->name, a->arg);
		return 0;
	}
	return -1;
}

/*
 * The actions that would make the kernel what vols say (the devices of the
 * one volume only, or all sluice devices), into *acts.
 */
static int plan_for(const struct want_vol *vols, size_t n, const char *only, struct ag_action **acts,
		    size_t *na, struct ag_err *e)
{
	struct ag_want *w = calloc(n + 1, sizeof(*w));

	struct ag_have *have = NULL;
	const struct ag_have **index = NULL;
	size_t nh = 0;
	int rc = -1;

	if (!w) {
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		goto out;
	}
	if (only ? ag_dm_list_volume(only, &have, &nh) : ag_dm_list(AG_DM_PREFIX, &have, &nh)) {
		ag_fail(e, AG_E_INTERNAL, "cannot list dm devices");
		goto out;
	}
	if (ag_have_index(have, nh, &index)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		goto out;
	}
	if (wants(vols, n, w, index, nh, e))
		goto out;
	if (ag_plan(w, n, have, nh, acts, na)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(index);
	ag_dm_list_free(have, nh);
	for (size_t i = 0; w && i < n; i++) {
		free((char *)w[i].data_table);
		free((char *)w[i].sluice_table);
	}
	free(w);
	return rc;
}

int ag_converge_volume(struct ag_agent *a, const char *id, struct ag_err *e)
{
	struct want_vol *vols;
	const struct ag_volume *v;
	size_t n = 0, pass;
	bool down;
	int rc = -1;

	pthread_rwlock_rdlock(&a->st.lock);
	v = ag_state_volume(&a->st, id);
	down = v && ag_state_pool(&a->st, v->pool)->missing;
	pthread_rwlock_unlock(&a->st.lock);
	if (down)
		return ag_fail(e, AG_E_BUSY, "volume %s: its pool's disk is missing", id);
	/* three passes at most: a data device once made changes how the table over it reads */
	for (pass = 0; pass < 3; pass++) {
		struct ag_action *acts = NULL;
		size_t na = 0, i, changes = 0, failed = 0;

		vols = snapshot(a, id, &n, e);
		if (!vols)
			return -1;
		if (plan_for(vols, n, id, &acts, &na, e)) {
			snapshot_free(vols, n);
			return -1;
		}
		snapshot_free(vols, n);
		for (i = 0; i < na; i++) {
			if (acts[i].kind == AG_REPORT)
				continue;
			changes++;
			ag_log("info", "%s %s%s%s", ag_action_name(acts[i].kind), acts[i].name,
			       acts[i].arg ? ": " : "", acts[i].arg ? acts[i].arg : "");
			if (apply(&acts[i])) {
				ag_log("error", "%s %s failed", ag_action_name(acts[i].kind), acts[i].name);
				if (!failed++)
					ag_fail(e, AG_E_INTERNAL, "volume %s: %s %s failed", id,
						ag_action_name(acts[i].kind), acts[i].name);
				if (acts[i].kind == AG_REMOVE)
					e->code = AG_E_BUSY;
			}
		}
		ag_plan_free(acts, na);
		if (failed)
			return -1;
		if (!changes) {
			rc = 0;
			break;
		}
	}
	if (rc)
		ag_fail(e, AG_E_INTERNAL, "volume %s: not converged after 3 passes", id);
	return rc;
}

/* The volume id of one of its devices' names, into id. */
static bool volume_of(const char *name, char *id)
{
	size_t n;

	if (strncmp(name, AG_DM_PREFIX, strlen(AG_DM_PREFIX)))
		return false;
	name += strlen(AG_DM_PREFIX);
	n = strlen(name);
	if (n >= 5 && !strcmp(name + n - 5, "-data"))
		n -= 5;
	if (!n || n > AG_VOLUME_ID_MAX)
		return false;
	memcpy(id, name, n);
	id[n] = '\0';
	return true;
}

int ag_reconcile(struct ag_agent *a, struct ag_err *e)
{
	struct want_vol *vols;
	struct ag_action *acts = NULL;
	struct ag_err one;
	char id[AG_VOLUME_ID_MAX + 1], last[AG_VOLUME_ID_MAX + 1] = "";
	size_t n = 0, na = 0, i, failed = 0, fixed = 0;

	/* each pool found by its label first: a pool not found has its volumes left down */
	if (a->with_kernel && ag_pools_resolve(a, &one)) {
		*e = one;
		failed++;
	}
	vols = snapshot(a, NULL, &n, e);
	if (!vols)
		return -1;
	if (plan_for(vols, n, NULL, &acts, &na, e)) {
		snapshot_free(vols, n);
		return -1;
	}
	snapshot_free(vols, n);
	/*
	 * One list and one plan find what differs; each volume that does is
	 * converged again on its own, under its lock, from its record as it is
	 * then (an operation may have changed it meanwhile).
	 */
	for (i = 0; i < na; i++) {
		if (acts[i].kind == AG_REPORT) {
			apply(&acts[i]);
			continue;
		}
		if (!volume_of(acts[i].name, id) || !strcmp(id, last))
			continue;
		strcpy(last, id);
		ag_volume_lock(a, id);
		if (ag_converge_volume(a, id, &one)) {
			ag_log("error", "reconcile: %s", one.msg);
			if (!failed++)
				*e = one;
		} else {
			fixed++;
		}
		ag_volume_unlock(a, id);
	}
	ag_plan_free(acts, na);
	/* the exports after the devices: a namespace's device is there first */
	if (a->with_kernel && ag_reconcile_exports(a, &one)) {
		ag_log("error", "reconcile: %s", one.msg);
		if (!failed++)
			*e = one;
	}
	ag_log("info", "reconciled: %zu volumes, %zu converged, %zu failed, %lu dm calls", n, fixed,
	       failed, ag_dm_calls);
	return failed ? -1 : 0;
}
