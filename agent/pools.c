// SPDX-License-Identifier: GPL-2.0
/*
 * Pools: registered by their disk, found again by the label written on it
 * (label.h), never by path; see ops.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <blkid/blkid.h>

#include "log.h"
#include "ops.h"

/* Registrations take turns: the checks, the label and the commit are one step. */
static pthread_mutex_t adding = PTHREAD_MUTEX_INITIALIZER;

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

/*
 * Whether the disk may become a pool, by what the state holds: no pool of
 * that name, none on the same blocks (whatever the path: the same device,
 * a partition and its disk, a device stacked on the other), and no pool's
 * label on it. The caller holds the state's lock.
 */
static int may_take(struct ag_agent *a, const char *name, const char *device, dev_t devno,
		    const struct ag_label *found, bool force, struct ag_err *e)
{
	void **all;
	size_t i, n;
	int rc = 0;

	if (ag_state_pool(&a->st, name))
		return ag_fail(e, AG_E_EXISTS, "pool %s exists", name);
	all = ag_state_sorted(&a->st.pools, &n);
	for (i = 0; i < n && !rc; i++) {
		const struct ag_pool *p = all[i];

		if (found && p->uuid[0] && !strcmp(p->uuid, found->uuid))
			rc = ag_fail(e, AG_E_EXISTS, "device: %s carries the label of pool %s", device,
				     p->name);
		else if (p->devno && ag_blk_overlap(p->devno, devno))
			rc = ag_fail(e, AG_E_EXISTS, "device: %s shares blocks with pool %s (%s)", device,
				     p->name, p->device);
	}
	free(all);
	if (!rc && found && !force)
		rc = ag_fail(e, AG_E_REFUSED, "device: %s carries the label of another sluice pool, %.64s"
			     " (%s); not taken without force", device, found->pool, found->uuid);
	return rc;
}

int ag_pool_add(struct ag_agent *a, const char *name, const char *device, bool force,
		uint64_t capacity_iops, uint64_t capacity_bps, struct ag_err *e)
{
	struct ag_pool *p = NULL;
	struct ag_label label, found;
	char sig[64], path[sizeof(p->device)];
	uint64_t size = 0;
	dev_t devno;
	int fd = -1, has_label, rc = -1;

	if (!ag_valid_id(name))
		return ag_fail(e, AG_E_INVALID, "name: 1 to %d of a-z 0-9 -", AG_ID_MAX);
	/* one name for one disk, however it was spelt (symlinks, "/dev/./vdb") */
	if (ag_blk_canonical(device, path, sizeof(path), &devno, e))
		return -1;
	pthread_mutex_lock(&adding);
	/* exclusive: not a disk the kernel holds (mounted, mapped, a RAID member) */
	fd = open(path, O_RDWR | O_EXCL | O_CLOEXEC);
	if (fd < 0) {
		ag_fail(e, errno == EBUSY ? AG_E_BUSY : AG_E_INVALID, "device: %s: %s", path,
			strerror(errno));
		goto out;
	}
	has_label = ag_label_read(fd, &found);
	if (probe_signature(path, sig, sizeof(sig), &size) || has_label < 0) {
		ag_fail(e, AG_E_INTERNAL, "device: %s: cannot read it", path);
		goto out;
	}
	if (sig[0] && !force) {
		ag_fail(e, AG_E_REFUSED, "device: %s carries a %s signature; not taken without force",
			path, sig);
		goto out;
	}
	if (ag_extents_of(size) < 2) {
		ag_fail(e, AG_E_INVALID, "device: %s: too small (at least %" PRIu64 " bytes)", path,
			2 * AG_EXTENT_BYTES);
		goto out;
	}
	pthread_rwlock_rdlock(&a->st.lock);
	rc = may_take(a, name, path, devno, has_label ? &found : NULL, force, e);
	pthread_rwlock_unlock(&a->st.lock);
	if (rc)
		goto out;
	rc = -1;
	p = calloc(1, sizeof(*p));
	if (!p || ag_uuid_new(p->uuid)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory, or no randomness");
		goto out;
	}
	strcpy(p->name, name);
	strcpy(p->device, path);
	p->extents = ag_extents_of(size);
	p->devno = devno;
	p->capacity_iops = capacity_iops;
	p->capacity_bps = capacity_bps;
	/*
	 * The label first: a crash before the commit leaves a labelled disk
	 * that no pool names, which a registration takes again with force.
	 */
	snprintf(label.uuid, sizeof(label.uuid), "%s", p->uuid);
	snprintf(label.pool, sizeof(label.pool), "%s", name);
	label.extents = p->extents;
	if (ag_label_write(fd, &label, e))
		goto out;
	if (!ag_label_kept(path, p->uuid)) {
		ag_fail(e, AG_E_REFUSED, "device: %s does not keep what is written to it (its label, "
			"read back, differs); a pool there would be lost at the next start", path);
		goto out;
	}
	pthread_rwlock_wrlock(&a->st.lock);
	/* again under the write lock: an import may have come in between */
	if (may_take(a, name, path, devno, NULL, true, e) || ag_db_store_pool(a->db, p, e))
		goto unlock;
	if (ag_state_add_pool(&a->st, p)) {
		ag_fail(e, AG_E_INTERNAL, "out of memory (the pool is stored: restart to see it)");
		goto unlock;
	}
	ag_log("info", "pool %s: %s, %" PRIu64 " extents, label %s%s%s", name, path, p->extents,
	       p->uuid, sig[0] ? ", forced over a " : "", sig);
	p = NULL;
	rc = 0;
unlock:
	pthread_rwlock_unlock(&a->st.lock);
out:
	pthread_mutex_unlock(&adding);
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

int ag_pool_set_capacity(struct ag_agent *a, const char *name, uint64_t capacity_iops,
			 uint64_t capacity_bps, struct ag_err *e)
{
	struct ag_pool *p, next;
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	p = ag_state_pool(&a->st, name);
	if (!p) {
		ag_fail(e, AG_E_NOTFOUND, "no pool %s", name);
		goto out;
	}
	if (p->reserved_iops > capacity_iops * a->reservation_pct / 100) {
		ag_fail(e, AG_E_OVERCOMMIT, "capacity_iops: %" PRIu64 " IO/s are reserved on pool %s, "
			"more than %u%% of %" PRIu64, p->reserved_iops, name, a->reservation_pct,
			capacity_iops);
		goto out;
	}
	if (p->reserved_bps > capacity_bps * a->reservation_pct / 100) {
		ag_fail(e, AG_E_OVERCOMMIT, "capacity_bytes_sec: %" PRIu64 " bytes/s are reserved on "
			"pool %s, more than %u%% of %" PRIu64, p->reserved_bps, name,
			a->reservation_pct, capacity_bps);
		goto out;
	}
	next = *p;
	next.capacity_iops = capacity_iops;
	next.capacity_bps = capacity_bps;
	if (ag_db_store_pool(a->db, &next, e))
		goto out;
	p->capacity_iops = capacity_iops;
	p->capacity_bps = capacity_bps;
	a->st.generation++;
	rc = 0;
out:
	pthread_rwlock_unlock(&a->st.lock);
	return rc;
}

struct where {
	char name[AG_ID_MAX + 1];
	char uuid[AG_UUID_TEXT];
	char device[256];
	dev_t devno;
	uint64_t extents;
	int found;		/* 1, 0 missing, -1 on two disks */
	bool store;		/* a label was written or the path moved: store the row */
};

/* Whether the disk open as fd is of the size that gives extents. */
static bool size_fits(int fd, uint64_t extents)
{
	uint64_t bytes = 0;

	return !ioctl(fd, BLKGETSIZE64, &bytes) && ag_extents_of(bytes) == extents;
}

/*
 * A pool made before labels gets one on the disk at its path: extent 0 has
 * always been kept for it, so nothing is overwritten. A label already there
 * in its name is taken (the label was written, the uuid not yet stored);
 * another pool's is not.
 */
static void adopt(struct where *w, struct ag_err *e)
{
	struct ag_label l = { .extents = 0 };
	char sig[64] = "";
	uint64_t size;
	int fd = open(w->device, O_RDWR | O_CLOEXEC), has;

	w->found = 0;
	if (fd < 0) {
		ag_fail(e, AG_E_NOTFOUND, "pool %s: %s: %s", w->name, w->device, strerror(errno));
		return;
	}
	has = ag_label_read(fd, &l);
	if (has > 0 && !strcmp(l.pool, w->name) && l.extents == w->extents) {
		/* labelled for it before: a start that stopped before storing the uuid */
		strcpy(w->uuid, l.uuid);
		w->found = 1;
		w->store = true;
		ag_log("info", "pool %s: takes the label %s found on %s", w->name, l.uuid, w->device);
	} else if (has) {
		ag_fail(e, AG_E_NOTFOUND, "pool %s: %s carries %s label, not its own", w->name,
			w->device, has > 0 ? "another pool's" : "a damaged");
	} else if (!size_fits(fd, w->extents) || probe_signature(w->device, sig, sizeof(sig), &size) ||
		   sig[0]) {
		/* a disk that moved in at its path: another size, or a filesystem, a table */
		ag_fail(e, AG_E_NOTFOUND, "pool %s: %s is not its disk (%s); not labelled", w->name,
			w->device, sig[0] ? sig : "another size");
	} else if (ag_uuid_new(l.uuid)) {
		ag_fail(e, AG_E_INTERNAL, "pool %s: no randomness for a label", w->name);
	} else {
		l.extents = w->extents;
		snprintf(l.pool, sizeof(l.pool), "%s", w->name);
		if (!ag_label_write(fd, &l, e)) {
			strcpy(w->uuid, l.uuid);
			w->found = 1;
			w->store = true;
			ag_log("info", "pool %s: labelled %s on %s", w->name, l.uuid, w->device);
		}
	}
	close(fd);
}

int ag_pools_resolve(struct ag_agent *a, struct ag_err *e)
{
	struct where *w;
	struct ag_err one;
	void **all;
	size_t i, n;
	int rc = 0;

	pthread_rwlock_rdlock(&a->st.lock);
	all = ag_state_sorted(&a->st.pools, &n);
	w = calloc(n + 1, sizeof(*w));
	for (i = 0; all && w && i < n; i++) {
		const struct ag_pool *p = all[i];

		strcpy(w[i].name, p->name);
		strcpy(w[i].uuid, p->uuid);
		strcpy(w[i].device, p->device);
		w[i].extents = p->extents;
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(all);
	if (!w)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	/* the disks are read outside the lock */
	for (i = 0; i < n; i++) {
		char at[sizeof(w[i].device)] = "";

		one = (struct ag_err){ 0 };
		if (!w[i].uuid[0]) {
			adopt(&w[i], &one);
		} else {
			w[i].found = ag_label_find(w[i].uuid, w[i].device, at, sizeof(at), &w[i].devno,
						   &one);
			if (w[i].found == 0)
				ag_fail(&one, AG_E_NOTFOUND, "pool %s: no disk carries its label %s (last on %s)",
					w[i].name, w[i].uuid, w[i].device);
		}
		if (w[i].found == 1 && !w[i].store && at[0] && strcmp(at, w[i].device) &&
		    w[i].devno) {
			ag_log("info", "pool %s: found on %s (was on %s)", w[i].name, at, w[i].device);
			strcpy(w[i].device, at);
			w[i].store = true;
		}
		if (w[i].found == 1 && !w[i].devno) {
			dev_t d;

			if (ag_blk_canonical(w[i].device, at, sizeof(at), &d, &one))
				w[i].found = 0;
			else
				w[i].devno = d;
		}
		if (w[i].found != 1) {
			ag_log("error", "%s: its volumes are down, and nothing on it is touched", one.msg);
			if (!rc)
				*e = one;
			rc = -1;
		}
	}
	pthread_rwlock_wrlock(&a->st.lock);
	for (i = 0; i < n; i++) {
		struct ag_pool *p = ag_state_pool(&a->st, w[i].name);

		if (!p)
			continue;
		p->missing = w[i].found != 1;
		p->devno = p->missing ? 0 : w[i].devno;
		if (!w[i].store)
			continue;
		strcpy(p->uuid, w[i].uuid);
		strcpy(p->device, w[i].device);
		if (ag_db_store_pool(a->db, p, &one))
			ag_log("error", "pool %s: storing where it was found: %s", p->name, one.msg);
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(w);
	return rc;
}
