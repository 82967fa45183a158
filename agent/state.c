// SPDX-License-Identifier: GPL-2.0
/* The agent's state in memory; see state.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

int ag_state_init(struct ag_state *st)
{
	memset(st, 0, sizeof(*st));
	return pthread_rwlock_init(&st->lock, NULL) ? -1 : 0;
}

void ag_volume_release(struct ag_volume *v)
{
	free(v->runs);
	v->runs = NULL;
	v->nr_runs = 0;
}

void ag_volume_free(struct ag_volume *v)
{
	if (v) {
		ag_volume_release(v);
		free(v);
	}
}

void ag_tenant_free(struct ag_tenant *t)
{
	free(t);
}

int ag_volume_copy(struct ag_volume *dst, const struct ag_volume *src)
{
	*dst = *src;
	dst->runs = malloc((src->nr_runs ? src->nr_runs : 1) * sizeof(*dst->runs));
	if (!dst->runs) {
		dst->nr_runs = 0;
		return -1;
	}
	memcpy(dst->runs, src->runs, src->nr_runs * sizeof(*dst->runs));
	return 0;
}

struct ag_volume *ag_volume_dup(const struct ag_volume *src)
{
	struct ag_volume *v = malloc(sizeof(*v));

	if (v && ag_volume_copy(v, src)) {
		free(v);
		v = NULL;
	}
	return v;
}

static void free_values(struct ag_idmap *m, void (*fn)(void *))
{
	void **all = ag_idmap_values(m);
	size_t i;

	for (i = 0; all && i < m->nr; i++)
		fn(all[i]);
	free(all);
	ag_idmap_destroy(m);
}

static void pool_free(void *p)
{
	ag_extmap_destroy(&((struct ag_pool *)p)->map);
	free(p);
}

static void tenant_free(void *t)
{
	ag_tenant_free(t);
}

static void volume_free(void *v)
{
	ag_volume_free(v);
}

void ag_state_destroy(struct ag_state *st)
{
	ag_idmap_destroy(&st->names);
	ag_idmap_destroy(&st->nqns);
	free_values(&st->exports, free);
	free_values(&st->hosts, free);
	free_values(&st->vols, volume_free);
	free_values(&st->tenants, tenant_free);
	free_values(&st->pools, pool_free);
	pthread_rwlock_destroy(&st->lock);
}

struct ag_pool *ag_state_pool(const struct ag_state *st, const char *name)
{
	return ag_idmap_get(&st->pools, name);
}

struct ag_tenant *ag_state_tenant(const struct ag_state *st, const char *id)
{
	return ag_idmap_get(&st->tenants, id);
}

struct ag_volume *ag_state_volume(const struct ag_state *st, const char *id)
{
	return ag_idmap_get(&st->vols, id);
}

struct ag_volume *ag_state_volume_named(const struct ag_state *st, const char *tenant,
					const char *name)
{
	char key[2 * AG_ID_MAX + 2];

	if (!ag_valid_id(tenant) || !ag_valid_id(name))
		return NULL;
	ag_volume_scoped(key, tenant, name);
	return ag_idmap_get(&st->names, key);
}

/* every object in the maps starts with its id */
static int by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void **ag_state_sorted(const struct ag_idmap *m, size_t *n)
{
	void **all = ag_idmap_values(m);

	*n = all ? m->nr : 0;
	if (all)
		qsort(all, *n, sizeof(*all), by_id);
	return all;
}

uint64_t ag_pool_used(const struct ag_pool *p)
{
	return p->map.nr ? p->map.nr - 1 - p->map.nr_free : 0;
}

int ag_state_add_pool(struct ag_state *st, struct ag_pool *p)
{
	if (!p->map.used && ag_extmap_init(&p->map, p->extents))
		return -ENOMEM;
	if (ag_idmap_put(&st->pools, p->name, p)) {
		ag_extmap_destroy(&p->map);
		return -EEXIST;
	}
	st->generation++;
	return 0;
}

int ag_state_add_tenant(struct ag_state *st, struct ag_tenant *t)
{
	int rc = ag_idmap_put(&st->tenants, t->id, t);

	if (!rc)
		st->generation++;
	return rc;
}

void ag_state_drop_tenant(struct ag_state *st, const char *id)
{
	ag_tenant_free(ag_idmap_del(&st->tenants, id));
	st->generation++;
}

int ag_state_add_volume(struct ag_state *st, struct ag_volume *v)
{
	struct ag_pool *p = ag_state_pool(st, v->pool);
	struct ag_tenant *t;
	int rc;

	if (!p || ag_extmap_mark(&p->map, v->runs, v->nr_runs))
		return -EINVAL;
	rc = ag_idmap_put(&st->vols, v->id, v);
	if (!rc) {
		rc = ag_idmap_put(&st->names, v->scoped, v);
		if (rc)
			ag_idmap_del(&st->vols, v->id);
	}
	if (rc) {
		ag_extmap_release(&p->map, v->runs, v->nr_runs);
		return rc;
	}
	t = ag_state_tenant(st, v->tenant);
	if (t) {
		t->nr_volumes++;
		t->used_bytes += v->size;
		t->reserved_iops += v->policy.limits.reserve_iops;
		t->reserved_bps += v->policy.limits.reserve_bps;
	}
	p->reserved_iops += v->policy.limits.reserve_iops;
	p->reserved_bps += v->policy.limits.reserve_bps;
	v->changed = ++st->generation;
	return 0;
}

void ag_state_drop_volume(struct ag_state *st, const char *id)
{
	struct ag_volume *v = ag_idmap_del(&st->vols, id);
	struct ag_pool *p = v ? ag_state_pool(st, v->pool) : NULL;
	struct ag_tenant *t = v ? ag_state_tenant(st, v->tenant) : NULL;

	if (v)
		ag_idmap_del(&st->names, v->scoped);
	if (p) {
		ag_extmap_release(&p->map, v->runs, v->nr_runs);
		p->reserved_iops -= v->policy.limits.reserve_iops;
		p->reserved_bps -= v->policy.limits.reserve_bps;
	}
	if (t && t->nr_volumes) {
		t->nr_volumes--;
		t->used_bytes -= v->size;
		t->reserved_iops -= v->policy.limits.reserve_iops;
		t->reserved_bps -= v->policy.limits.reserve_bps;
	}
	ag_volume_free(v);
	st->generation++;
}

struct ag_host *ag_state_host(const struct ag_state *st, const char *tenant, const char *name)
{
	char key[2 * AG_ID_MAX + 2];

	if (!ag_valid_id(tenant) || !ag_valid_id(name))
		return NULL;
	snprintf(key, sizeof(key), "%s/%s", tenant, name);
	return ag_idmap_get(&st->hosts, key);
}

size_t ag_tenant_hosts(const struct ag_state *st, const char *tenant)
{
	void **all = ag_idmap_values(&st->hosts);
	size_t i, n = 0;

	for (i = 0; all && i < st->hosts.nr; i++)
		n += !strcmp(((const struct ag_host *)all[i])->tenant, tenant);
	free(all);
	return n;
}

int ag_state_add_host(struct ag_state *st, struct ag_host *h)
{
	int rc;

	h->nr_exports = 0;
	rc = ag_idmap_put(&st->hosts, h->key, h);
	if (!rc) {
		rc = ag_idmap_put(&st->nqns, h->nqn, h);
		if (rc)
			ag_idmap_del(&st->hosts, h->key);
	}
	if (!rc)
		st->generation++;
	return rc;
}

void ag_state_drop_host(struct ag_state *st, const char *key)
{
	struct ag_host *h = ag_idmap_del(&st->hosts, key);

	if (h)
		ag_idmap_del(&st->nqns, h->nqn);
	free(h);
	st->generation++;
}

/* The export's volume and host, or NULLs. */
static void export_ends(const struct ag_state *st, const struct ag_export *x,
			struct ag_volume **v, struct ag_host **h)
{
	*v = ag_state_volume(st, x->volume);
	*h = *v ? ag_state_host(st, (*v)->tenant, x->host) : NULL;
}

int ag_state_add_export(struct ag_state *st, struct ag_export *x)
{
	struct ag_volume *v;
	struct ag_host *h;
	int rc;

	export_ends(st, x, &v, &h);
	if (!v || !h)
		return -EINVAL;
	rc = ag_idmap_put(&st->exports, x->key, x);
	if (rc)
		return rc;
	v->nr_exports++;
	h->nr_exports++;
	st->generation++;
	return 0;
}

void ag_state_drop_export(struct ag_state *st, const char *key)
{
	struct ag_export *x = ag_idmap_del(&st->exports, key);
	struct ag_volume *v;
	struct ag_host *h;

	if (!x)
		return;
	export_ends(st, x, &v, &h);
	if (v && v->nr_exports)
		v->nr_exports--;
	if (h && h->nr_exports)
		h->nr_exports--;
	free(x);
	st->generation++;
}

int ag_state_fill(struct ag_state *st, struct ag_model *m, struct ag_err *e)
{
	size_t i;
	int rc;

	for (i = 0; i < m->nr_pools; i++) {
		struct ag_pool *p = malloc(sizeof(*p));

		if (!p)
			return ag_fail(e, AG_E_INTERNAL, "out of memory");
		*p = m->pools[i];
		p->map = (struct ag_extmap){ 0 };
		p->reserved_iops = p->reserved_bps = 0;
		if (ag_state_add_pool(st, p)) {
			free(p);
			return ag_fail(e, AG_E_INTERNAL, "pool %s: out of memory", m->pools[i].name);
		}
	}
	for (i = 0; i < m->nr_tenants; i++) {
		struct ag_tenant *t = malloc(sizeof(*t));

		if (!t)
			return ag_fail(e, AG_E_INTERNAL, "out of memory");
		*t = m->tenants[i];
		if (ag_state_add_tenant(st, t)) {
			ag_tenant_free(t);
			return ag_fail(e, AG_E_INTERNAL, "tenant %s: out of memory", m->tenants[i].id);
		}
	}
	for (i = 0; i < m->nr_vols; i++) {
		struct ag_volume *v = malloc(sizeof(*v));

		if (!v)
			return ag_fail(e, AG_E_INTERNAL, "out of memory");
		*v = m->vols[i];
		m->vols[i].runs = NULL;
		m->vols[i].nr_runs = 0;
		/* a volume made at the console before its tenant had a record */
		if (!ag_state_tenant(st, v->tenant)) {
			struct ag_tenant *t = calloc(1, sizeof(*t));

			if (t)
				strcpy(t->id, v->tenant);
			if (!t || ag_state_add_tenant(st, t)) {
				ag_tenant_free(t);
				ag_volume_free(v);
				return ag_fail(e, AG_E_INTERNAL, "out of memory");
			}
		}
		rc = ag_state_add_volume(st, v);
		if (rc) {
			ag_volume_free(v);
			return ag_fail(e, rc == -ENOMEM ? AG_E_INTERNAL : AG_E_CORRUPT, "volume %s: %s",
				       m->vols[i].id, rc == -EEXIST ?
				       "its tenant has another volume of its name" : rc == -EINVAL ?
				       "its extents are shared or out of its pool" : "out of memory");
		}
	}
	for (i = 0; i < m->nr_hosts; i++) {
		struct ag_host *h = malloc(sizeof(*h));

		if (!h)
			return ag_fail(e, AG_E_INTERNAL, "out of memory");
		*h = m->hosts[i];
		rc = ag_state_add_host(st, h);
		if (rc) {
			free(h);
			return ag_fail(e, rc == -ENOMEM ? AG_E_INTERNAL : AG_E_CORRUPT, "host %s: %s",
				       m->hosts[i].key, rc == -ENOMEM ? "out of memory" :
				       "its NQN is another host's");
		}
	}
	for (i = 0; i < m->nr_exports; i++) {
		struct ag_export *x = malloc(sizeof(*x));

		if (!x)
			return ag_fail(e, AG_E_INTERNAL, "out of memory");
		*x = m->exports[i];
		rc = ag_state_add_export(st, x);
		if (rc) {
			free(x);
			return ag_fail(e, rc == -ENOMEM ? AG_E_INTERNAL : AG_E_CORRUPT, "export %s: %s",
				       m->exports[i].key, rc == -ENOMEM ? "out of memory" :
				       "its volume or host is not there");
		}
	}
	ag_model_free(m);
	return 0;
}
