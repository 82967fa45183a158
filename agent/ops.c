// SPDX-License-Identifier: GPL-2.0
/* The agent's operations on pools and volumes; see ops.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <blkid/blkid.h>
#include <linux/fs.h>

#include "dmctl.h"
#include "log.h"
#include "model.h"
#include "ops.h"
#include "plan.h"

static int failf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int failc(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A failure of class code (AG_E_*): returns -code. */
static int failc(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -code;
}

static int failf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Load the state and its model; the caller frees both. */
static int load(struct ag_store *s, json_t **state, struct ag_model *m, char *err,
		size_t errlen)
{
	if (ag_store_load(s, state, err, errlen))
		return -1;
	if (ag_model_from_json(m, *state, err, errlen)) {
		json_decref(*state);
		return -1;
	}
	return 0;
}

static json_t *section(json_t *state, const char *name)
{
	json_t *o = json_object_get(state, name);

	if (!o) {
		o = json_object();
		json_object_set_new(state, name, o);
	}
	return o;
}

/* The signature libblkid finds on dev (a filesystem, RAID, LVM, partition table), if any. */
static int probe_signature(const char *dev, char *what, size_t len, uint64_t *size)
{
	blkid_probe pr = blkid_new_probe_from_filename(dev);
	const char *v = NULL;
	int rc;

	what[0] = '\0';
	if (!pr)
		return -1;
	*size = (uint64_t)blkid_probe_get_size(pr);
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0) {
		if (!blkid_probe_lookup_value(pr, "TYPE", &v, NULL) ||
		    !blkid_probe_lookup_value(pr, "PTTYPE", &v, NULL))
			snprintf(what, len, "%s", v);
		else
			snprintf(what, len, "unknown");
	} else if (rc == -2) {
		snprintf(what, len, "ambivalent (several)");
	}
	blkid_free_probe(pr);
	return rc < 0 && rc != -2 ? -1 : 0;
}

int ag_pool_add(struct ag_store *s, const char *name, const char *device, bool force,
		char *err, size_t errlen)
{
	struct ag_model m;
	json_t *state;
	char sig[64];
	uint64_t size = 0;
	struct stat st;
	int rc = -1;

	if (!ag_valid_id(name))
		return failc(err, errlen, AG_E_INVALID, "pool name: 1 to %d of a-z 0-9 -", AG_ID_MAX);
	if (stat(device, &st) || !S_ISBLK(st.st_mode))
		return failc(err, errlen, AG_E_INVALID, "%s: not a block device", device);
	if (load(s, &state, &m, err, errlen))
		return -1;
	if (ag_model_pool(&m, name)) {
		rc = failc(err, errlen, AG_E_EXISTS, "pool %s exists", name);
		goto out;
	}
	for (size_t i = 0; i < m.nr_pools; i++)
		if (!strcmp(m.pools[i].device, device)) {
			rc = failc(err, errlen, AG_E_EXISTS, "%s is pool %s already", device, m.pools[i].name);
			goto out;
		}
	if (probe_signature(device, sig, sizeof(sig), &size)) {
		failf(err, errlen, "%s: cannot probe it", device);
		goto out;
	}
	if (sig[0] && !force) {
		rc = failc(err, errlen, AG_E_REFUSED, "%s carries a %s signature; not taken without force", device, sig);
		goto out;
	}
	if (ag_extents_of(size) < 2) {
		rc = failc(err, errlen, AG_E_INVALID, "%s: too small (at least %" PRIu64 " bytes)", device,
		      2 * AG_EXTENT_BYTES);
		goto out;
	}
	json_object_set_new(section(state, "pools"), name,
			    json_pack("{s:s, s:I}", "device", device,
				      "extents", (json_int_t)ag_extents_of(size)));
	rc = ag_store_save(s, state, err, errlen);
	if (!rc)
		ag_log("info", "pool %s: %s, %" PRIu64 " extents%s%s", name, device,
		       ag_extents_of(size), sig[0] ? ", forced over a " : "", sig);
out:
	ag_model_free(&m);
	json_decref(state);
	return rc;
}

/* The extent map of a pool, every volume's runs marked. */
static int pool_map(const struct ag_model *m, const struct ag_pool *p, struct ag_extmap *map)
{
	size_t i;

	if (ag_extmap_init(map, p->extents))
		return -1;
	for (i = 0; i < m->nr_vols; i++)
		if (!strcmp(m->vols[i].pool, p->name) &&
		    ag_extmap_mark(map, m->vols[i].runs, m->vols[i].nr_runs)) {
			ag_extmap_destroy(map);
			return -1;
		}
	return 0;
}

/*
 * Append count extents of pool p to *runs: 0, -EINVAL if the stored runs do
 * not fit the pool, or -ENOSPC with *free_left the free extents.
 */
static int allocate(const struct ag_model *m, const struct ag_pool *p, uint64_t count,
		    struct ag_run **runs, size_t *nr, uint64_t *free_left)
{
	struct ag_extmap map;
	int rc;

	if (pool_map(m, p, &map))
		return -EINVAL;
	rc = ag_extmap_alloc(&map, count, runs, nr);
	*free_left = map.nr_free;
	ag_extmap_destroy(&map);
	return rc;
}

static json_t *runs_json(const struct ag_run *r, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("[I, I]", (json_int_t)r[i].start,
						   (json_int_t)r[i].count));
	return a;
}

static uint64_t extents_for(uint64_t size)
{
	return (size + AG_EXTENT_BYTES - 1) / AG_EXTENT_BYTES;
}

static int check_policy(const char *id, const char *tenant, const char *pool,
			const char *policy, char *err, size_t errlen)
{
	json_t *st = json_pack("{s:{s:{s:s, s:I}}, s:{s:{s:s, s:s, s:I, s:[[I, I]], s:s, s:s}}}",
			       "pools", pool, "device", "/dev/null", "extents", (json_int_t)2,
			       "volumes", id, "tenant", tenant, "pool", pool, "size", (json_int_t)512,
			       "runs", (json_int_t)1, (json_int_t)1, "policy", policy,
			       "state", "ready");
	struct ag_model m;
	int rc;

	if (!st)
		return failf(err, errlen, "out of memory");
	rc = ag_model_from_json(&m, st, err, errlen);
	if (!rc)
		ag_model_free(&m);
	json_decref(st);
	return rc;
}

static int save_and_converge(struct ag_store *s, json_t *state, const char *id, char *err,
			     size_t errlen);

/* The policy in force at size, into buf (AG_POLICY_MAX); -AG_E_INVALID with err. */
static int in_force(const char *policy, const char *apolicy, uint64_t size, char *buf, char *err,
		    size_t errlen)
{
	char why[200];

	if (ag_policy_scaled(policy, apolicy, size, buf, AG_POLICY_MAX, why, sizeof(why)))
		return failc(err, errlen, AG_E_INVALID, "%s", why);
	return 0;
}

/* Record a volume's apolicy, leaving none out of the record. */
static void set_apolicy(json_t *jv, const char *apolicy)
{
	if (apolicy[0])
		json_object_set_new(jv, "agent_policy", json_string(apolicy));
	else
		json_object_del(jv, "agent_policy");
}

int ag_volume_create(struct ag_store *s, const char *id, const char *tenant,
		     const char *pool, uint64_t size, const char *base, const char *apolicy,
		     char *err, size_t errlen)
{
	char policy[AG_POLICY_MAX];
	struct ag_model m;
	uint64_t free_left;
	struct ag_run *runs = NULL;
	size_t nr = 0;
	const struct ag_pool *p;
	json_t *state;
	int rc = -1;

	if (!size || size % AG_SIZE_ALIGN)
		return failc(err, errlen, AG_E_INVALID, "size: a positive multiple of 4096");
	if (in_force(base, apolicy, size, policy, err, errlen))
		return -AG_E_INVALID;
	if (check_policy(id, tenant, pool, policy, err, errlen))
		return -AG_E_INVALID;
	if (load(s, &state, &m, err, errlen))
		return -1;
	p = ag_model_pool(&m, pool);
	if (!p) {
		rc = failc(err, errlen, AG_E_NOTFOUND, "no pool %s", pool);
		goto out;
	}
	if (json_object_get(json_object_get(state, "volumes"), id)) {
		rc = failc(err, errlen, AG_E_EXISTS, "volume %s exists", id);
		goto out;
	}
	switch (allocate(&m, p, extents_for(size), &runs, &nr, &free_left)) {
	case 0:
		break;
	case -EINVAL:
		failf(err, errlen, "pool %s: extent map", pool);
		goto out;
	default:
		rc = failc(err, errlen, AG_E_NOSPACE, "pool %s: no room for %" PRIu64 " bytes (%" PRIu64 " extents free)",
		      pool, size, free_left);
		goto out;
	}
	if (!json_object_get(section(state, "tenants"), tenant))
		json_object_set_new(section(state, "tenants"), tenant, json_object());
	json_object_set_new(section(state, "volumes"), id,
			    json_pack("{s:s, s:s, s:I, s:o, s:s, s:s}", "tenant", tenant, "pool", pool,
				      "size", (json_int_t)size, "runs", runs_json(runs, nr),
				      "policy", policy, "state", "ready"));
	set_apolicy(json_object_get(section(state, "volumes"), id), apolicy);
	rc = save_and_converge(s, state, id, err, errlen);
out:
	free(runs);
	ag_model_free(&m);
	json_decref(state);
	return rc;
}

static const struct ag_volume *find_vol(const struct ag_model *m, const char *id)
{
	size_t i;

	for (i = 0; i < m->nr_vols; i++)
		if (!strcmp(m->vols[i].id, id))
			return &m->vols[i];
	return NULL;
}

int ag_volume_grow(struct ag_store *s, const char *id, uint64_t size, const char *base,
		   const char *apolicy, char *err, size_t errlen)
{
	char policy[AG_POLICY_MAX];
	struct ag_model m;
	uint64_t free_left;
	struct ag_run *runs = NULL;
	size_t nr;
	const struct ag_volume *v;
	json_t *state, *jv;
	int rc = -1;

	if (load(s, &state, &m, err, errlen))
		return -1;
	v = find_vol(&m, id);
	if (!v || v->deleting) {
		rc = failc(err, errlen, AG_E_NOTFOUND, "no volume %s", id);
		goto out;
	}
	if (size % AG_SIZE_ALIGN || size <= v->size) {
		rc = failc(err, errlen, AG_E_INVALID, "size: a multiple of 4096 above the current %" PRIu64,
			   v->size);
		goto out;
	}
	if (!base) {
		base = v->policy;
		apolicy = v->apolicy;
	}
	rc = in_force(base, apolicy, size, policy, err, errlen);
	if (rc)
		goto out;
	rc = -1;
	nr = v->nr_runs;
	runs = malloc(nr * sizeof(*runs));
	if (!runs) {
		failf(err, errlen, "out of memory");
		goto out;
	}
	memcpy(runs, v->runs, nr * sizeof(*runs));
	switch (allocate(&m, ag_model_pool(&m, v->pool), extents_for(size) - extents_for(v->size),
			 &runs, &nr, &free_left)) {
	case 0:
		break;
	case -EINVAL:
		failf(err, errlen, "out of memory");
		goto out;
	default:
		rc = failc(err, errlen, AG_E_NOSPACE, "pool %s: no room to grow %s", v->pool, id);
		goto out;
	}
	jv = json_object_get(json_object_get(state, "volumes"), id);
	json_object_set_new(jv, "size", json_integer((json_int_t)size));
	json_object_set_new(jv, "runs", runs_json(runs, nr));
	json_object_set_new(jv, "policy", json_string(policy));
	set_apolicy(jv, apolicy);
	rc = save_and_converge(s, state, id, err, errlen);
out:
	free(runs);
	ag_model_free(&m);
	json_decref(state);
	return rc;
}

int ag_volume_set(struct ag_store *s, const char *id, const char *base, const char *apolicy,
		  char *err, size_t errlen)
{
	char policy[AG_POLICY_MAX];
	struct ag_model m;
	const struct ag_volume *v;
	json_t *state;
	int rc = -1;

	if (load(s, &state, &m, err, errlen))
		return -1;
	v = find_vol(&m, id);
	if (!v || v->deleting) {
		rc = failc(err, errlen, AG_E_NOTFOUND, "no volume %s", id);
		goto out;
	}
	/* the target's own parser checks it there, with a pool as in the table */
	rc = in_force(base, apolicy, v->size, policy, err, errlen);
	if (rc)
		goto out;
	json_object_set_new(json_object_get(json_object_get(state, "volumes"), id), "policy",
			    json_string(policy));
	set_apolicy(json_object_get(json_object_get(state, "volumes"), id), apolicy);
	rc = save_and_converge(s, state, id, err, errlen);
out:
	ag_model_free(&m);
	json_decref(state);
	return rc;
}

int ag_tenant_create(struct ag_store *s, const char *id, json_t *record, char *err,
		     size_t errlen)
{
	json_t *state;
	int rc;

	if (!ag_valid_id(id))
		return failc(err, errlen, AG_E_INVALID, "id: 1 to %d of a-z 0-9 -", AG_ID_MAX);
	if (ag_store_load(s, &state, err, errlen))
		return -AG_E_INTERNAL;
	if (json_object_get(section(state, "tenants"), id)) {
		rc = failc(err, errlen, AG_E_EXISTS, "tenant %s exists", id);
	} else {
		json_object_set(section(state, "tenants"), id, record);
		rc = ag_store_save(s, state, err, errlen) ? -AG_E_INTERNAL : 0;
	}
	if (!rc)
		ag_log("info", "tenant %s created", id);
	json_decref(state);
	return rc;
}

int ag_tenant_delete(struct ag_store *s, const char *id, char *err, size_t errlen)
{
	json_t *state, *vol;
	const char *vid;
	int rc = 0;

	if (ag_store_load(s, &state, err, errlen))
		return -AG_E_INTERNAL;
	if (!json_object_get(section(state, "tenants"), id))
		rc = failc(err, errlen, AG_E_NOTFOUND, "no tenant %s", id);
	json_object_foreach(section(state, "volumes"), vid, vol)
		if (!rc && !strcmp(json_string_value(json_object_get(vol, "tenant")), id))
			rc = failc(err, errlen, AG_E_EXISTS, "tenant %s has volume %s", id, vid);
	if (!rc) {
		json_object_del(section(state, "tenants"), id);
		rc = ag_store_save(s, state, err, errlen) ? -AG_E_INTERNAL : 0;
	}
	if (!rc)
		ag_log("info", "tenant %s deleted", id);
	json_decref(state);
	return rc;
}

/*
 * Zero a volume's extents on its pool's disk, so the next owner reads zeros.
 * A disk that can zero without being written to (write zeroes with unmap:
 * NVMe deallocate, SCSI WRITE SAME with unmap, thin or file-backed disks)
 * does it by a punched hole, which also hands thin storage back; the kernel
 * refuses that (EOPNOTSUPP) rather than fall back to writing, and then
 * BLKZEROOUT writes the zeros.
 */
static int wipe(const struct ag_pool *p, const struct ag_volume *v, char *err, size_t errlen)
{
	int fd = open(p->device, O_RDWR | O_CLOEXEC);
	bool can_punch = true;
	size_t i;

	if (fd < 0)
		return failf(err, errlen, "%s: %s", p->device, strerror(errno));
	for (i = 0; i < v->nr_runs; i++) {
		uint64_t r[2] = { v->runs[i].start * AG_EXTENT_BYTES,
				  v->runs[i].count * AG_EXTENT_BYTES };

		if (can_punch &&
		    !fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r[0], (off_t)r[1]))
			continue;
		if (can_punch && errno != EOPNOTSUPP) {
			close(fd);
			return failf(err, errlen, "%s: unmapping extents of %s: %s", p->device, v->id,
				     strerror(errno));
		}
		can_punch = false;
		if (ioctl(fd, BLKZEROOUT, r)) {
			close(fd);
			return failf(err, errlen, "%s: zeroing extents of %s: %s", p->device, v->id,
				     strerror(errno));
		}
	}
	if (fsync(fd)) {
		close(fd);
		return failf(err, errlen, "%s: %s", p->device, strerror(errno));
	}
	close(fd);
	return 0;
}

int ag_volume_delete(struct ag_store *s, const char *id, char *err, size_t errlen)
{
	struct ag_model m;
	const struct ag_volume *v;
	json_t *state, *vols;
	int rc = -1;

	if (load(s, &state, &m, err, errlen))
		return -1;
	v = find_vol(&m, id);
	if (!v) {
		rc = failc(err, errlen, AG_E_NOTFOUND, "no volume %s", id);
		goto out;
	}
	vols = json_object_get(state, "volumes");
	json_object_set_new(json_object_get(vols, id), "state", json_string("deleting"));
	/* reconcile removes the devices, zeroes the extents, drops the volume */
	if (save_and_converge(s, state, id, err, errlen))
		goto out;
	rc = 0;
	ag_log("info", "volume %s deleted, its extents zeroed", id);
out:
	ag_model_free(&m);
	json_decref(state);
	return rc;
}

/*
 * The wanted tables of every volume (or of the one named only), from the
 * model and the live devices; *nw is how many.
 */
static int wants(const struct ag_model *m, const char *only, struct ag_want *w,
		 char (*tables)[2][8192], size_t *nw, const struct ag_have *have, size_t nhave,
		 char *err, size_t errlen)
{
	size_t v_i, i = 0;

	*nw = 0;
	for (v_i = 0; v_i < m->nr_vols; v_i++) {
		const struct ag_volume *v = &m->vols[v_i];
		const struct ag_pool *p = ag_model_pool(m, v->pool);
		char pool_devno[32], data_devno[160], data[128];
		struct stat st;

		if (only && strcmp(v->id, only))
			continue;
		i = (*nw)++;
		w[i] = (struct ag_want){ v->id, tables[i][0], tables[i][1], v->deleting };
		if (v->deleting)
			continue;
		if (stat(p->device, &st) || !S_ISBLK(st.st_mode))
			return failf(err, errlen, "pool %s: %s is not a block device", p->name,
				     p->device);
		snprintf(pool_devno, sizeof(pool_devno), "%u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
		if (ag_data_table(v, pool_devno, tables[i][0], sizeof(tables[i][0])))
			return failf(err, errlen, "volume %s: table too long", v->id);
		/* the kernel prints the device below as maj:min once it exists */
		snprintf(data, sizeof(data), AG_DM_PREFIX "%s-data", v->id);
		snprintf(data_devno, sizeof(data_devno), "/dev/mapper/%s", data);
		for (size_t h = 0; h < nhave; h++)
			if (!strcmp(have[h].name, data))
				snprintf(data_devno, sizeof(data_devno), "%u:%u", have[h].major,
					 have[h].minor);
		if (ag_sluice_table(v, data_devno, tables[i][1], sizeof(tables[i][1])))
			return failf(err, errlen, "volume %s: bad policy", v->id);
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
 * Plan and apply until nothing is left to do (three passes at most: a
 * created data device changes how the sluice table over it reads). With
 * only, just that volume's devices are read and changed: an operation on
 * one volume costs the same with 1 or 1000 volumes.
 */
static int converge(const struct ag_model *m, const char *only, char *err, size_t errlen)
{
	struct ag_want *w = calloc(m->nr_vols + 1, sizeof(*w));
	char (*tables)[2][8192] = calloc(m->nr_vols + 1, sizeof(*tables));
	int pass, rc = -1, failed = 0;

	if (!w || !tables) {
		failf(err, errlen, "out of memory");
		goto out;
	}
	for (pass = 0; pass < 3; pass++) {
		struct ag_have *have;
		struct ag_action *acts;
		size_t nh, nw, na, i, changes = 0;

		if (only ? ag_dm_list_volume(only, &have, &nh) :
			   ag_dm_list(AG_DM_PREFIX, &have, &nh)) {
			failf(err, errlen, "cannot list dm devices");
			goto out;
		}
		if (wants(m, only, w, tables, &nw, have, nh, err, errlen)) {
			ag_dm_list_free(have, nh);
			goto out;
		}
		if (ag_plan(w, nw, have, nh, &acts, &na)) {
			ag_dm_list_free(have, nh);
			failf(err, errlen, "out of memory");
			goto out;
		}
		for (i = 0; i < na; i++) {
			if (acts[i].kind == AG_REPORT && pass)
				continue;
			if (acts[i].kind != AG_REPORT) {
				changes++;
				ag_log("info", "%s %s%s%s", ag_action_name(acts[i].kind), acts[i].name,
				       acts[i].arg ? ": " : "", acts[i].arg ? acts[i].arg : "");
			}
			if (apply(&acts[i])) {
				ag_log("error", "%s %s failed", ag_action_name(acts[i].kind),
				       acts[i].name);
				failed++;
			}
		}
		ag_plan_free(acts, na);
		ag_dm_list_free(have, nh);
		if (failed) {
			failf(err, errlen, "%d dm operations failed", failed);
			goto out;
		}
		if (!changes) {
			rc = 0;
			goto out;
		}
	}
	failf(err, errlen, "not converged after 3 passes");
out:
	free(w);
	free(tables);
	return rc;
}

/*
 * Converge the kernel with state (all volumes, or the one named only) and
 * finish deletes; state is the document in the store, changed and saved
 * again when a delete finishes.
 */
static int converge_state(struct ag_store *s, json_t *state, const char *only, char *err,
			  size_t errlen)
{
	struct ag_model m;
	json_t *vols;
	size_t i, finished = 0;
	int rc;

	if (ag_model_from_json(&m, state, err, errlen))
		return -1;
	rc = converge(&m, only, err, errlen);
	/* a delete that a crash interrupted: its devices are gone now */
	vols = json_object_get(state, "volumes");
	for (i = 0; !rc && i < m.nr_vols; i++) {
		const struct ag_volume *v = &m.vols[i];

		if (!v->deleting || (only && strcmp(v->id, only)))
			continue;
		rc = wipe(ag_model_pool(&m, v->pool), v, err, errlen);
		if (!rc) {
			json_object_del(vols, v->id);
			finished++;
		}
	}
	if (!rc && finished)
		rc = ag_store_save(s, state, err, errlen);
	if (!rc && !only)
		ag_log("info", "reconciled: %zu volumes, %lu dm calls", m.nr_vols - finished,
		       ag_dm_calls);
	ag_model_free(&m);
	return rc;
}

/*
 * An operation's acknowledgement: its changed state durable, then the
 * kernel converged for its volume from that same document.
 */
static int save_and_converge(struct ag_store *s, json_t *state, const char *id, char *err,
			     size_t errlen)
{
	if (ag_store_save(s, state, err, errlen))
		return -1;
	return converge_state(s, state, id, err, errlen);
}

int ag_reconcile(struct ag_store *s, char *err, size_t errlen)
{
	json_t *state;
	int rc;

	if (ag_store_load(s, &state, err, errlen))
		return -1;
	rc = converge_state(s, state, NULL, err, errlen);
	json_decref(state);
	return rc;
}
