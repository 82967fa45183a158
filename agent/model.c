// SPDX-License-Identifier: GPL-2.0
/* The agent's model; see model.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "model.h"
#include "../dmtarget/sluice-core.h"

bool ag_valid_id(const char *id)
{
	size_t n = strlen(id), i;

	if (!n || n > AG_ID_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') ||
		      id[i] == '-'))
			return false;
	return !(n >= 5 && !strcmp(id + n - 5, "-data"));
}

bool ag_valid_volume_id(const char *id)
{
	const char *dot = strchr(id, '.');
	char tenant[AG_ID_MAX + 1];

	if (!dot)
		return ag_valid_id(id);
	if (dot == id || (size_t)(dot - id) > AG_ID_MAX)
		return false;
	memcpy(tenant, id, (size_t)(dot - id));
	tenant[dot - id] = '\0';
	return ag_valid_id(tenant) && ag_valid_id(dot + 1);
}

void ag_volume_id_of(char *id, const char *tenant, const char *name)
{
	snprintf(id, AG_VOLUME_ID_MAX + 1, "%s.%s", tenant, name);
}

void ag_volume_scoped(char *key, const char *tenant, const char *name)
{
	snprintf(key, 2 * AG_ID_MAX + 2, "%s/%s", tenant, name);
}

static int bad(char *err, size_t errlen, const char *what, const char *id)
{
	snprintf(err, errlen, "state: %s%s%s", what, id ? ": " : "", id ? id : "");
	return -1;
}

static int load_pools(struct ag_model *m, json_t *pools, char *err, size_t errlen)
{
	const char *name;
	json_t *p;

	if (!pools)
		return 0;
	if (!json_is_object(pools))
		return bad(err, errlen, "pools is not an object", NULL);
	m->pools = calloc(json_object_size(pools) + 1, sizeof(*m->pools));
	if (!m->pools)
		return bad(err, errlen, "out of memory", NULL);
	json_object_foreach(pools, name, p) {
		struct ag_pool *pool = &m->pools[m->nr_pools];
		const char *dev, *uuid = "";
		json_int_t ext, cap_iops = 0, cap_bps = 0;

		if (!ag_valid_id(name))
			return bad(err, errlen, "bad pool name", name);
		if (json_unpack(p, "{s:s, s:I, s?s, s?I, s?I}", "device", &dev, "extents", &ext, "uuid",
				&uuid, "capacity_iops", &cap_iops, "capacity_bps", &cap_bps) ||
		    ext < 1 || strlen(dev) >= sizeof(pool->device) || strncmp(dev, "/dev/", 5) ||
		    (uuid[0] && !ag_uuid_valid(uuid)) || cap_iops < 0 || cap_bps < 0 ||
		    (uint64_t)cap_iops > AG_VALUE_MAX || (uint64_t)cap_bps > AG_VALUE_MAX)
			return bad(err, errlen, "bad pool", name);
		pool->capacity_iops = (uint64_t)cap_iops;
		pool->capacity_bps = (uint64_t)cap_bps;
		strcpy(pool->name, name);
		strcpy(pool->device, dev);
		strcpy(pool->uuid, uuid);
		pool->extents = (uint64_t)ext;
		m->nr_pools++;
	}
	return 0;
}

/* A tenant's record: an optional token hash and an optional ceilings object. */
static int load_tenants(struct ag_model *m, json_t *tenants, char *err, size_t errlen)
{
	const char *id, *hash;
	json_t *t, *ceil, *quotas;
	struct ag_err e;

	if (!tenants)
		return 0;
	if (!json_is_object(tenants))
		return bad(err, errlen, "tenants is not an object", NULL);
	m->tenants = calloc(json_object_size(tenants) + 1, sizeof(*m->tenants));
	if (!m->tenants)
		return bad(err, errlen, "out of memory", NULL);
	json_object_foreach(tenants, id, t) {
		struct ag_tenant *ten = &m->tenants[m->nr_tenants];

		hash = NULL;
		ceil = NULL;
		if (!ag_valid_id(id))
			return bad(err, errlen, "bad tenant id", id);
		quotas = NULL;
		if (json_unpack(t, "{s?s, s?o, s?o}", "token_sha256", &hash, "ceilings", &ceil, "quotas",
				&quotas) ||
		    (hash && hash[0] && strlen(hash) != AG_HASH_HEX) || (ceil && !json_is_object(ceil)))
			return bad(err, errlen, "bad tenant", id);
		strcpy(ten->id, id);
		strcpy(ten->token_sha256, hash ? hash : "");
		if ((ceil && ag_ceilings_from_json(&ten->ceilings, ceil, &e)) ||
		    (quotas && ag_quotas_from_json(&ten->quotas, quotas, &e))) {
			snprintf(err, errlen, "state: tenant %s: %s", id, e.msg);
			return -1;
		}
		m->nr_tenants++;
	}
	return 0;
}

static int load_runs(struct ag_volume *v, json_t *runs)
{
	size_t i;
	json_t *r;

	if (!json_is_array(runs) || !json_array_size(runs))
		return -1;
	v->runs = calloc(json_array_size(runs), sizeof(*v->runs));
	if (!v->runs)
		return -1;
	json_array_foreach(runs, i, r) {
		json_int_t s, c;

		if (json_unpack(r, "[I, I]", &s, &c) || s < 1 || c < 1)
			return -1;
		v->runs[i] = (struct ag_run){ (uint64_t)s, (uint64_t)c };
	}
	v->nr_runs = json_array_size(runs);
	return 0;
}

static int load_volume(struct ag_model *m, const char *id, json_t *j, char *err,
		       size_t errlen)
{
	struct ag_volume *v = &m->vols[m->nr_vols];
	const char *tenant, *pool, *policy, *state, *apolicy = "", *name = "", *dot;
	char made_id[AG_VOLUME_ID_MAX + 1];
	json_t *runs;
	json_int_t size, wiped = 0, since = 0;
	uint64_t ext = 0;
	struct sl_config in_force;
	struct ag_err e;
	size_t i;

	if (!ag_valid_volume_id(id))
		return bad(err, errlen, "bad volume id", id);
	if (json_unpack(j, "{s:s, s:s, s:I, s:o, s:s, s:s, s?s}", "tenant", &tenant, "pool", &pool,
			"size", &size, "runs", &runs, "policy", &policy, "state", &state,
			"name", &name))
		return bad(err, errlen, "volume lacks a field", id);
	m->nr_vols++;	/* so that ag_model_free() frees its runs */
	strcpy(v->id, id);
	if (!ag_valid_id(tenant) || !ag_valid_id(pool))
		return bad(err, errlen, "bad tenant or pool of volume", id);
	/* the name is what the id says: "<tenant>.<name>", or the id of a volume of before */
	dot = strchr(id, '.');
	if (dot) {
		ag_volume_id_of(made_id, tenant, dot + 1);
		if (strcmp(made_id, id))
			return bad(err, errlen, "id is not <tenant>.<name> of volume", id);
	}
	if (name[0] && strcmp(name, dot ? dot + 1 : id))
		return bad(err, errlen, "name is not the one its id says, volume", id);
	name = dot ? dot + 1 : id;
	strcpy(v->name, name);
	ag_volume_scoped(v->scoped, tenant, name);
	strcpy(v->tenant, tenant);
	strcpy(v->pool, pool);
	if (!ag_model_pool(m, pool))
		return bad(err, errlen, "volume in an unknown pool", id);
	if (load_runs(v, runs))
		return bad(err, errlen, "bad runs of volume", id);
	for (i = 0; i < v->nr_runs; i++)
		ext += v->runs[i].count;
	if (size < 512 || size % 512 || (uint64_t)size > ext * AG_EXTENT_BYTES)
		return bad(err, errlen, "size does not fit the runs of volume", id);
	v->size = (uint64_t)size;
	if (json_unpack(j, "{s?s}", "agent_policy", &apolicy))
		return bad(err, errlen, "bad agent_policy of volume", id);
	/* each word, and the whole as it is in force at the volume's size */
	if (ag_policy_parse(&v->policy, policy, apolicy, &e) ||
	    ag_policy_in_force(&v->policy, v->size, v->pool, &in_force, &e)) {
		snprintf(err, errlen, "state: volume %s: %s", id, e.msg);
		return -1;
	}
	if (json_unpack(j, "{s?I, s?I}", "wiped", &wiped, "deleting_since", &since) || wiped < 0 ||
	    (uint64_t)wiped > ext * AG_EXTENT_BYTES)
		return bad(err, errlen, "bad delete progress of volume", id);
	v->wiped = (uint64_t)wiped;
	v->deleting_since = since;
	if (!strcmp(state, "deleting"))
		v->deleting = true;
	else if (strcmp(state, "ready"))
		return bad(err, errlen, "bad state of volume", id);
	return 0;
}

/* No two volumes share an extent, and every run is on its pool's disk. */
static int check_extents(const struct ag_model *m, char *err, size_t errlen)
{
	size_t p, i;

	for (p = 0; p < m->nr_pools; p++) {
		struct ag_extmap map;

		if (ag_extmap_init(&map, m->pools[p].extents))
			return bad(err, errlen, "out of memory", NULL);
		for (i = 0; i < m->nr_vols; i++) {
			const struct ag_volume *v = &m->vols[i];

			if (strcmp(v->pool, m->pools[p].name))
				continue;
			if (ag_extmap_mark(&map, v->runs, v->nr_runs)) {
				ag_extmap_destroy(&map);
				return bad(err, errlen, "extents out of the pool or shared, volume", v->id);
			}
		}
		ag_extmap_destroy(&map);
	}
	return 0;
}

/* No tenant has two volumes of one name ("v1" of before and "<tenant>.v1"). */
static int check_names(const struct ag_model *m, char *err, size_t errlen)
{
	struct ag_idmap names = { 0 };
	size_t i;
	int rc = 0;

	for (i = 0; i < m->nr_vols && !rc; i++) {
		switch (ag_idmap_put(&names, m->vols[i].scoped, &m->vols[i])) {
		case 0:
			break;
		case -EEXIST:
			rc = bad(err, errlen, "its tenant has another volume of its name, volume",
				 m->vols[i].id);
			break;
		default:
			rc = bad(err, errlen, "out of memory", NULL);
		}
	}
	ag_idmap_destroy(&names);
	return rc;
}

/* "<a>/<b>" into a and b, each at most alen and blen - 1 long. */
static bool split_key(const char *key, char *a, size_t alen, char *b, size_t blen)
{
	const char *slash = strchr(key, '/');

	if (!slash || (size_t)(slash - key) >= alen || strlen(slash + 1) >= blen)
		return false;
	memcpy(a, key, (size_t)(slash - key));
	a[slash - key] = '\0';
	strcpy(b, slash + 1);
	return true;
}

/* Hosts: valid keys, NQNs valid and each of one host. */
static int load_hosts(struct ag_model *m, json_t *hosts, char *err, size_t errlen)
{
	struct ag_idmap nqns = { 0 };
	const char *key, *nqn, *dhchap;
	size_t i;
	json_t *j;
	int rc = 0;

	if (!hosts)
		return 0;
	if (!json_is_object(hosts))
		return bad(err, errlen, "hosts is not an object", NULL);
	m->hosts = calloc(json_object_size(hosts) + 1, sizeof(*m->hosts));
	if (!m->hosts)
		return bad(err, errlen, "out of memory", NULL);
	json_object_foreach(hosts, key, j) {
		struct ag_host *h = &m->hosts[m->nr_hosts];

		dhchap = NULL;
		if (!split_key(key, h->tenant, sizeof(h->tenant), h->name, sizeof(h->name)) ||
		    !ag_valid_id(h->tenant) || !ag_valid_id(h->name) ||
		    json_unpack(j, "{s:s, s?s}", "nqn", &nqn, "dhchap", &dhchap) ||
		    !ag_nqn_valid(nqn) || (dhchap && dhchap[0] && !ag_dhchap_valid(dhchap))) {
			rc = bad(err, errlen, "bad host", key);
			break;
		}
		for (i = 0; i < m->nr_tenants && strcmp(m->tenants[i].id, h->tenant); i++)
			;
		if (i == m->nr_tenants) {
			rc = bad(err, errlen, "a host of no tenant", key);
			break;
		}
		strcpy(h->key, key);
		strcpy(h->nqn, nqn);
		/* the store has "" for none */
		if (dhchap)
			strcpy(h->dhchap, dhchap);
		m->nr_hosts++;
		if (ag_idmap_put(&nqns, h->nqn, h)) {
			rc = bad(err, errlen, "an NQN of two hosts, host", key);
			break;
		}
	}
	ag_idmap_destroy(&nqns);
	return rc;
}

/* Exports: of a volume that is there, to a host of its tenant. */
static int load_exports(struct ag_model *m, json_t *exports, char *err, size_t errlen)
{
	struct ag_idmap vols = { 0 }, hosts = { 0 };
	const char *key;
	size_t i;
	json_t *j;
	int rc = 0;

	if (!exports)
		return 0;
	if (!json_is_object(exports))
		return bad(err, errlen, "exports is not an object", NULL);
	m->exports = calloc(json_object_size(exports) + 1, sizeof(*m->exports));
	if (!m->exports)
		return bad(err, errlen, "out of memory", NULL);
	for (i = 0; i < m->nr_vols && !rc; i++)
		rc = ag_idmap_put(&vols, m->vols[i].id, &m->vols[i]);
	for (i = 0; i < m->nr_hosts && !rc; i++)
		rc = ag_idmap_put(&hosts, m->hosts[i].key, &m->hosts[i]);
	if (rc)
		rc = bad(err, errlen, "out of memory", NULL);
	json_object_foreach(exports, key, j) {
		struct ag_export *x = &m->exports[m->nr_exports];
		const struct ag_volume *v;
		char host_key[2 * AG_ID_MAX + 2];

		if (rc)
			break;
		/* a volume exported is never deleted: one being deleted has no export */
		if (!split_key(key, x->volume, sizeof(x->volume), x->host, sizeof(x->host)) ||
		    !(v = ag_idmap_get(&vols, x->volume)) || v->deleting || !json_is_object(j)) {
			rc = bad(err, errlen, "bad export", key);
			break;
		}
		snprintf(host_key, sizeof(host_key), "%s/%s", v->tenant, x->host);
		if (!ag_idmap_get(&hosts, host_key)) {
			rc = bad(err, errlen, "export to a host its volume's tenant does not have", key);
			break;
		}
		strcpy(x->key, key);
		m->nr_exports++;
	}
	ag_idmap_destroy(&vols);
	ag_idmap_destroy(&hosts);
	return rc;
}

int ag_model_from_json(struct ag_model *m, json_t *state, char *err, size_t errlen)
{
	json_t *vols = json_object_get(state, "volumes"), *j;
	const char *id;

	memset(m, 0, sizeof(*m));
	if (load_pools(m, json_object_get(state, "pools"), err, errlen) ||
	    load_tenants(m, json_object_get(state, "tenants"), err, errlen))
		goto fail;
	if (vols && !json_is_object(vols)) {
		bad(err, errlen, "volumes is not an object", NULL);
		goto fail;
	}
	m->vols = calloc(json_object_size(vols) + 1, sizeof(*m->vols));
	if (!m->vols) {
		bad(err, errlen, "out of memory", NULL);
		goto fail;
	}
	json_object_foreach(vols, id, j)
		if (load_volume(m, id, j, err, errlen))
			goto fail;
	if (check_extents(m, err, errlen) || check_names(m, err, errlen) ||
	    load_hosts(m, json_object_get(state, "hosts"), err, errlen) ||
	    load_exports(m, json_object_get(state, "exports"), err, errlen))
		goto fail;
	return 0;
fail:
	ag_model_free(m);
	return -1;
}

void ag_model_free(struct ag_model *m)
{
	size_t i;

	for (i = 0; i < m->nr_vols; i++)
		free(m->vols[i].runs);
	free(m->vols);
	free(m->hosts);
	free(m->exports);
	free(m->pools);
	free(m->tenants);
	memset(m, 0, sizeof(*m));
}

const struct ag_pool *ag_model_pool(const struct ag_model *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nr_pools; i++)
		if (!strcmp(m->pools[i].name, name))
			return &m->pools[i];
	return NULL;
}

int ag_data_table(const struct ag_volume *v, const char *pool_devno, char *buf,
		  size_t len)
{
	size_t i, off = 0;
	uint64_t at = 0;

	buf[0] = '\0';
	for (i = 0; i < v->nr_runs; i++) {
		uint64_t sectors = v->runs[i].count * AG_EXTENT_SECTORS;
		int n = snprintf(buf + off, len - off, "%s%" PRIu64 " %" PRIu64 " linear %s %" PRIu64,
				 i ? "\n" : "", at, sectors, pool_devno,
				 v->runs[i].start * AG_EXTENT_SECTORS);

		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += (size_t)n;
		at += sectors;
	}
	return 0;
}

int ag_sluice_table(const struct ag_volume *v, const uint64_t *group_rates, const char *data_dev,
		    char *buf, size_t len)
{
	const char *why = NULL;
	char canon[SL_FORMAT_MAX];
	struct sl_config cfg;
	struct ag_err e;
	int nw;

	if (ag_policy_in_force(&v->policy, v->size, v->pool, &cfg, &e))
		return -1;
	snprintf(cfg.tenant, sizeof(cfg.tenant), "%s", v->tenant);
	if (group_rates && memcmp(group_rates, (uint64_t[SL_NR_BUCKETS]){ 0 }, sizeof(cfg.group_avg))) {
		snprintf(cfg.group, sizeof(cfg.group), AG_GROUP_PREFIX "%s", v->tenant);
		memcpy(cfg.group_avg, group_rates, sizeof(cfg.group_avg));
		if (sl_config_validate(&cfg, &why))
			return -1;
	}
	nw = sl_config_format(&cfg, canon, sizeof(canon));
	if (nw < 0)
		return -1;
	nw = snprintf(buf, len, "0 %" PRIu64 " sluice %s 0 %d %s", v->size / 512, data_dev, nw, canon);
	return nw < 0 || (size_t)nw >= len ? -1 : 0;
}
