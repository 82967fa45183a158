// SPDX-License-Identifier: GPL-2.0
/* The agent's model; see model.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int bad(char *err, size_t errlen, const char *what, const char *id)
{
	snprintf(err, errlen, "state: %s%s%s", what, id ? ": " : "", id ? id : "");
	return -1;
}

/* The policy words, parsed by the target's own parser. */
static int check_policy(const char *policy, char *why, size_t len)
{
	char buf[1024], *argv[64], *save = NULL, *w;
	unsigned int n = 0;
	struct sl_config cfg;
	const char *err = NULL, *badarg = NULL;

	if (strlen(policy) >= sizeof(buf))
		return snprintf(why, len, "policy too long"), -1;
	strcpy(buf, policy);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n == 64 || !strncmp(w, "pool=", 5) || !strncmp(w, "tenant=", 7))
			return snprintf(why, len, "bad policy word '%s'", w), -1;
		argv[n++] = w;
	}
	sl_config_init(&cfg);
	/* with a pool, as the table will have one */
	strcpy(cfg.pool, "p");
	if (sl_config_parse(&cfg, SL_PARSE_SET, n, argv, &err, &badarg))
		return snprintf(why, len, "policy: %s", err), -1;
	return 0;
}

int ag_policy_check(const char *policy, char *why, size_t len)
{
	return check_policy(policy, why, len);
}

static const char *const scaled_rates[] = { "bps", "rbps", "wbps", "iops", "riops", "wiops" };

#define SCALE_VALUE_MAX (1ULL << 53)
#define NR_SCALED (sizeof(scaled_rates) / sizeof(scaled_rates[0]))

#define DIRTY_WORD ((int)NR_SCALED)	/* the index of dirty_bytes_max */

/*
 * One agent_policy word: a scaled rate's index, with its rate per GiB and
 * floor; DIRTY_WORD with the bytes in *a; -1 for a bad word.
 */
static int apolicy_word(const char *w, uint64_t *a, uint64_t *b)
{
	char rate[8], tail;
	unsigned long long x, y;
	size_t i;

	if (strchr(w, '-') || strchr(w, '+'))
		return -1;
	if (sscanf(w, "dirty_bytes_max=%llu%c", &x, &tail) == 1) {
		if (x < 1 || x > SCALE_VALUE_MAX)
			return -1;
		*a = x;
		*b = 0;
		return DIRTY_WORD;
	}
	if (sscanf(w, "%7[a-z]=%llu:%llu%c", rate, &x, &y, &tail) != 3 ||
	    x < 1 || x > SCALE_VALUE_MAX || y > SCALE_VALUE_MAX)
		return -1;
	for (i = 0; i < NR_SCALED; i++)
		if (!strcmp(rate, scaled_rates[i])) {
			*a = x;
			*b = y;
			return (int)i;
		}
	return -1;
}

int ag_apolicy_check(const char *apolicy, char *why, size_t len)
{
	char buf[AG_APOLICY_MAX], *save = NULL, *w;
	unsigned int seen = 0;
	uint64_t a, b;
	int i;

	if (strlen(apolicy) >= sizeof(buf))
		return snprintf(why, len, "agent_policy too long"), -1;
	strcpy(buf, apolicy);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		i = apolicy_word(w, &a, &b);
		if (i < 0 || seen & (1u << i))
			return snprintf(why, len, "bad agent_policy word '%s'", w), -1;
		seen |= 1u << i;
	}
	return 0;
}

uint64_t ag_apolicy_dirty_max(const char *apolicy)
{
	char buf[AG_APOLICY_MAX], *save = NULL, *w;
	uint64_t a, b;

	snprintf(buf, sizeof(buf), "%s", apolicy);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (apolicy_word(w, &a, &b) == DIRTY_WORD)
			return a;
	return 0;
}

int ag_policy_scaled(const char *policy, const char *apolicy, uint64_t size, char *out,
		     size_t len, char *why, size_t wlen)
{
	char words[AG_POLICY_MAX], extra[NR_SCALED + 1][48], sbuf[AG_APOLICY_MAX], *argv[64];
	char *save = NULL, *w;
	unsigned int n = 0, k = 0, scaled = 0;
	struct sl_config cfg;
	const char *err = NULL, *badarg = NULL;
	uint64_t a, b, v;
	int i;

	if (ag_apolicy_check(apolicy, why, wlen))
		return -1;
	if (strlen(policy) >= sizeof(words))
		return snprintf(why, wlen, "policy too long"), -1;
	/* the agent's words first: each scaled rate at this size, and dirty_strict */
	strcpy(sbuf, apolicy);
	for (w = strtok_r(sbuf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		i = apolicy_word(w, &a, &b);
		if (i == DIRTY_WORD) {
			/* the bdi's own share holds below the free-run point too */
			snprintf(extra[k], sizeof(extra[k]), "dirty_strict=1");
		} else {
			scaled |= 1u << i;
			v = sl_mul_div(a, size, 1ULL << 30);
			if (v < b)
				v = b;
			if (v < 1)
				v = 1;
			if (v > SCALE_VALUE_MAX)
				v = SCALE_VALUE_MAX;
			snprintf(extra[k], sizeof(extra[k]), "%s=%llu", scaled_rates[i],
				 (unsigned long long)v);
		}
		argv[n++] = extra[k++];
	}
	strcpy(words, policy);
	save = NULL;
	for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n == 64 || !strncmp(w, "pool=", 5) || !strncmp(w, "tenant=", 7))
			return snprintf(why, wlen, "bad policy word '%s'", w), -1;
		/*
		 * a scaled rate's old value gives way to the one computed above,
		 * and dirty_strict follows dirty_bytes_max
		 */
		for (i = 0; i < (int)NR_SCALED; i++)
			if (scaled & (1u << i) && !strncmp(w, scaled_rates[i], strlen(scaled_rates[i])) &&
			    w[strlen(scaled_rates[i])] == '=')
				break;
		if (i == (int)NR_SCALED && strncmp(w, "dirty_strict=", 13))
			argv[n++] = w;
	}
	sl_config_init(&cfg);
	strcpy(cfg.pool, "p");
	if (sl_config_parse(&cfg, SL_PARSE_SET, n, argv, &err, &badarg))
		return snprintf(why, wlen, "policy: %s", err), -1;
	cfg.pool[0] = '\0';
	if (sl_config_format(&cfg, out, len) < 0)
		return snprintf(why, wlen, "policy too long"), -1;
	return 0;
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
		const char *dev;
		json_int_t ext;

		if (!ag_valid_id(name))
			return bad(err, errlen, "bad pool name", name);
		if (json_unpack(p, "{s:s, s:I}", "device", &dev, "extents", &ext) || ext < 1 ||
		    strlen(dev) >= sizeof(pool->device))
			return bad(err, errlen, "bad pool", name);
		strcpy(pool->name, name);
		strcpy(pool->device, dev);
		pool->extents = (uint64_t)ext;
		m->nr_pools++;
	}
	return 0;
}

/* A tenant's record: an optional token hash and an optional ceilings object. */
static int load_tenants(struct ag_model *m, json_t *tenants, char *err, size_t errlen)
{
	const char *id, *hash;
	json_t *t, *ceil;

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
		if (json_unpack(t, "{s?s, s?o}", "token_sha256", &hash, "ceilings", &ceil) ||
		    (hash && hash[0] && strlen(hash) != AG_HASH_HEX) || (ceil && !json_is_object(ceil)))
			return bad(err, errlen, "bad tenant", id);
		strcpy(ten->id, id);
		strcpy(ten->token_sha256, hash ? hash : "");
		ten->ceilings = ceil ? json_dumps(ceil, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
		if (!ten->ceilings)
			return bad(err, errlen, "out of memory", NULL);
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
	const char *tenant, *pool, *policy, *state, *apolicy = "";
	json_t *runs;
	json_int_t size, wiped = 0, since = 0;
	uint64_t ext = 0;
	char why[160];
	size_t i;

	if (!ag_valid_id(id))
		return bad(err, errlen, "bad volume id", id);
	if (json_unpack(j, "{s:s, s:s, s:I, s:o, s:s, s:s}", "tenant", &tenant, "pool", &pool,
			"size", &size, "runs", &runs, "policy", &policy, "state", &state))
		return bad(err, errlen, "volume lacks a field", id);
	m->nr_vols++;	/* so that ag_model_free() frees its runs */
	strcpy(v->id, id);
	if (!ag_valid_id(tenant) || !ag_valid_id(pool))
		return bad(err, errlen, "bad tenant or pool of volume", id);
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
	if (strlen(policy) >= sizeof(v->policy) || check_policy(policy, why, sizeof(why))) {
		snprintf(err, errlen, "state: volume %s: %s", id, why);
		return -1;
	}
	strcpy(v->policy, policy);
	if (json_unpack(j, "{s?s}", "agent_policy", &apolicy) || ag_apolicy_check(apolicy, why, sizeof(why)))
		return bad(err, errlen, "bad agent_policy of volume", id);
	strcpy(v->apolicy, apolicy);
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
	if (check_extents(m, err, errlen))
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
	for (i = 0; i < m->nr_tenants; i++)
		free(m->tenants[i].ceilings);
	free(m->vols);
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

int ag_sluice_table(const struct ag_volume *v, const char *data_dev, char *buf,
		    size_t len)
{
	char words[1400], canon[SL_FORMAT_MAX], *argv[64], *save = NULL, *w;
	struct sl_config cfg;
	const char *err, *badarg;
	unsigned int n = 0;
	int nw;

	snprintf(words, sizeof(words), "%s%spool=%s tenant=%s", v->policy,
		 v->policy[0] ? " " : "", v->pool, v->tenant);
	for (w = strtok_r(words, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	sl_config_init(&cfg);
	if (sl_config_parse(&cfg, SL_PARSE_TABLE, n, argv, &err, &badarg))
		return -1;
	nw = sl_config_format(&cfg, canon, sizeof(canon));
	if (nw < 0)
		return -1;
	nw = snprintf(buf, len, "0 %" PRIu64 " sluice %s 0 %d %s", v->size / 512, data_dev, nw, canon);
	return nw < 0 || (size_t)nw >= len ? -1 : 0;
}
