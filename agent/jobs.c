// SPDX-License-Identifier: GPL-2.0
/* The agent's background work; see jobs.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "jobs.h"
#include "log.h"
#include "ops.h"

#define MAX_WORKERS 16

/* The deletes of one pool, one after another: its disk does the wiping. */
struct worker {
	struct ag_agent *a;
	char pool[AG_ID_MAX + 1];
	pthread_t thread;
	bool used, done;
};

struct ag_jobs {
	pthread_t deleter, reconciler;
	bool has_reconciler;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a kick, a worker done, or stop */
	bool stop, kicked;
	unsigned int reconcile_s;
	struct worker workers[MAX_WORKERS];	/* under lock */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ag_job_stuck(const struct ag_volume *v, int64_t now)
{
	return v->deleting && (v->attempts >= AG_JOB_STUCK_TRIES ||
			       now - v->deleting_since > AG_JOB_STUCK_S);
}

static bool stopping(struct ag_agent *a)
{
	return a->jobs && __atomic_load_n(&a->jobs->stop, __ATOMIC_ACQUIRE);
}

/* A try that failed: counted, and the next one later (1, 2, 4 ... 30 s). */
static void failed_try(struct ag_agent *a, const char *id, const struct ag_err *why)
{
	struct ag_volume *v;

	pthread_rwlock_wrlock(&a->st.lock);
	v = ag_state_volume(&a->st, id);
	if (v) {
		unsigned int shift = v->attempts < 5 ? v->attempts : 5;
		int64_t pause = (int64_t)1000 << shift;

		v->attempts++;
		if (pause > AG_JOB_RETRY_MAX_S * 1000)
			pause = AG_JOB_RETRY_MAX_S * 1000;
		v->retry_at = now_ms() + pause;
		snprintf(v->last_error, sizeof(v->last_error), "%.159s", why->msg);
		ag_log("warning", "delete of %s, try %u: %s; again in %" PRId64 " ms", id, v->attempts,
		       why->msg, pause);
	}
	pthread_rwlock_unlock(&a->st.lock);
}

/*
 * Store how far the wipe got (bytes of the volume's runs, in order). The
 * row is written from the job's own copy (nothing else changes a volume
 * being deleted), under the store's own mutex and not the state's lock:
 * readers never wait for this commit. The state takes the figure after.
 */
static int record_progress(struct ag_agent *a, struct ag_volume *copy, uint64_t wiped,
			   struct ag_err *e)
{
	struct ag_volume *v;

	copy->wiped = wiped;
	if (ag_db_begin(a->db, e) || ag_db_put_volume(a->db, copy, e) || ag_db_commit(a->db, e)) {
		ag_db_rollback(a->db);
		return -1;
	}
	pthread_rwlock_wrlock(&a->st.lock);
	v = ag_state_volume(&a->st, copy->id);
	if (v)
		v->wiped = wiped;
	pthread_rwlock_unlock(&a->st.lock);
	return 0;
}

/*
 * Zero [at, at + len) of the disk: a punched hole where the disk can zero
 * without writing (NVMe deallocate, WRITE SAME with unmap, thin or
 * file-backed disks; it also hands thin storage back), else written zeros
 * (the kernel refuses the hole with EOPNOTSUPP rather than fall back).
 */
static int zero(int fd, uint64_t at, uint64_t len, bool *can_punch)
{
	uint64_t r[2] = { at, len };

	if (*can_punch && !fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at,
				     (off_t)len))
		return 0;
	if (*can_punch && errno != EOPNOTSUPP)
		return -1;
	*can_punch = false;
	return ioctl(fd, BLKZEROOUT, r);
}

/*
 * Zero a volume's extents from v->wiped on, a chunk at a time, each one
 * flushed to the disk and then recorded. Stops early (-1, AG_E_BUSY) when
 * the jobs stop.
 */
static int wipe(struct ag_agent *a, struct ag_volume *v, const char *device, const char *uuid,
		struct ag_err *e)
{
	uint64_t base = 0, pos = v->wiped;
	bool can_punch = true;
	size_t i;
	int fd = open(device, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return ag_fail(e, AG_E_INTERNAL, "%s: %s", device, strerror(errno));
	/* the disk open is the pool's own, whatever has moved since it was found */
	if (uuid[0] && !ag_label_is(fd, uuid)) {
		close(fd);
		return ag_fail(e, AG_E_BUSY, "%s no longer carries the label of pool %s; nothing zeroed",
			       device, v->pool);
	}
	for (i = 0; i < v->nr_runs; i++) {
		uint64_t len = v->runs[i].count * AG_EXTENT_BYTES;

		while (pos < base + len) {
			uint64_t chunk = base + len - pos;

			if (chunk > AG_WIPE_CHUNK)
				chunk = AG_WIPE_CHUNK;
			if (stopping(a)) {
				close(fd);
				return ag_fail(e, AG_E_BUSY, "stopped at %" PRIu64 " bytes; goes on at the next start", pos);
			}
			if (zero(fd, v->runs[i].start * AG_EXTENT_BYTES + (pos - base), chunk, &can_punch) ||
			    fsync(fd)) {
				ag_fail(e, AG_E_INTERNAL, "%s: zeroing extents of %s: %s", device, v->id,
					strerror(errno));
				close(fd);
				return -1;
			}
			pos += chunk;
			if (record_progress(a, v, pos, e)) {
				close(fd);
				return -1;
			}
		}
		base += len;
	}
	close(fd);
	return 0;
}

/* Drop the volume from the store and the state: its name and extents are free. */
static int drop(struct ag_agent *a, const char *id, struct ag_err *e)
{
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	if (ag_db_begin(a->db, e) || ag_db_del_volume(a->db, id, e) || ag_db_commit(a->db, e)) {
		ag_db_rollback(a->db);
		goto out;
	}
	ag_state_drop_volume(&a->st, id);
	rc = 0;
out:
	pthread_rwlock_unlock(&a->st.lock);
	return rc;
}

/* One try at a delete: devices, wipe, drop. */
static int run_delete(struct ag_agent *a, const char *id, struct ag_err *e)
{
	struct ag_volume copy;
	char device[256], uuid[AG_UUID_TEXT];
	const struct ag_pool *p;
	struct ag_volume *v;
	int rc;

	if (a->with_kernel) {
		ag_volume_lock(a, id);
		rc = ag_converge_volume(a, id, e);
		ag_volume_unlock(a, id);
		if (rc)
			return -1;
		pthread_rwlock_rdlock(&a->st.lock);
		v = ag_state_volume(&a->st, id);
		rc = !v || !v->deleting || ag_volume_copy(&copy, v);
		p = rc ? NULL : ag_state_pool(&a->st, v->pool);
		if (p) {
			strcpy(device, p->device);
			strcpy(uuid, p->uuid);
		}
		pthread_rwlock_unlock(&a->st.lock);
		if (rc)
			return ag_fail(e, AG_E_NOTFOUND, "volume %s: not being deleted", id);
		rc = wipe(a, &copy, device, uuid, e);
		ag_volume_release(&copy);
		if (rc)
			return -1;
	}
	if (drop(a, id, e))
		return -1;
	ag_log("info", "volume %s deleted, its extents zeroed", id);
	return 0;
}

/*
 * The ids of the volumes being deleted (of one pool, or all) whose next try
 * is due; *next the soonest not due.
 */
static char (*due_deletes(struct ag_agent *a, const char *pool, size_t *n,
			  int64_t *next))[AG_VOLUME_ID_MAX + 1]
{
	char (*ids)[AG_VOLUME_ID_MAX + 1];
	void **all;
	size_t i, total;
	int64_t now = now_ms();

	*n = 0;
	*next = INT64_MAX;
	pthread_rwlock_rdlock(&a->st.lock);
	total = a->st.vols.nr;
	all = ag_idmap_values(&a->st.vols);
	ids = malloc((total + 1) * sizeof(*ids));
	for (i = 0; all && ids && i < total; i++) {
		const struct ag_volume *v = all[i];

		/* nothing is zeroed while the pool's disk is missing */
		if (!v->deleting || (pool && strcmp(v->pool, pool)) ||
		    ag_state_pool(&a->st, v->pool)->missing)
			continue;
		if (v->retry_at > now) {
			if (v->retry_at < *next)
				*next = v->retry_at;
			continue;
		}
		strcpy(ids[(*n)++], v->id);
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(all);
	return ids;
}

/* The due deletes (of one pool, or all), one after another. */
static int run_deletes(struct ag_agent *a, const char *pool, struct ag_err *e)
{
	char (*ids)[AG_VOLUME_ID_MAX + 1];
	struct ag_err one;
	size_t n, i;
	int64_t next;
	int failed = 0;

	ids = due_deletes(a, pool, &n, &next);
	if (!ids)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	for (i = 0; i < n && !stopping(a); i++) {
		if (!run_delete(a, ids[i], &one))
			continue;
		failed_try(a, ids[i], &one);
		if (!failed++)
			*e = one;
	}
	free(ids);
	return failed ? -1 : 0;
}

int ag_jobs_run_deletes(struct ag_agent *a, struct ag_err *e)
{
	return run_deletes(a, NULL, e);
}

static void *pool_worker(void *arg)
{
	struct worker *w = arg;
	struct ag_jobs *j = w->a->jobs;
	struct ag_err e;

	run_deletes(w->a, w->pool, &e);
	pthread_mutex_lock(&j->lock);
	w->done = true;
	j->kicked = true;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

/* Join the workers that are done; with all, wait for every one. */
static void reap(struct ag_jobs *j, bool all)
{
	size_t i;

	for (i = 0; i < MAX_WORKERS; i++) {
		struct worker *w = &j->workers[i];
		bool done;

		pthread_mutex_lock(&j->lock);
		done = w->used && (w->done || all);
		pthread_mutex_unlock(&j->lock);
		if (!done)
			continue;
		pthread_join(w->thread, NULL);
		pthread_mutex_lock(&j->lock);
		w->used = false;
		pthread_mutex_unlock(&j->lock);
	}
}

/* A worker for each pool with a due delete and none working on it. */
static void dispatch(struct ag_agent *a)
{
	struct ag_jobs *j = a->jobs;
	char (*ids)[AG_VOLUME_ID_MAX + 1];
	size_t n, i, k;
	int64_t next;

	ids = due_deletes(a, NULL, &n, &next);
	for (i = 0; ids && i < n; i++) {
		char pool[AG_ID_MAX + 1] = "";
		struct ag_volume *v;
		struct worker *w = NULL;

		pthread_rwlock_rdlock(&a->st.lock);
		v = ag_state_volume(&a->st, ids[i]);
		if (v)
			strcpy(pool, v->pool);
		pthread_rwlock_unlock(&a->st.lock);
		if (!pool[0])
			continue;
		pthread_mutex_lock(&j->lock);
		for (k = 0; k < MAX_WORKERS; k++) {
			if (j->workers[k].used && !strcmp(j->workers[k].pool, pool))
				break;
			if (!j->workers[k].used && !w)
				w = &j->workers[k];
		}
		if (k == MAX_WORKERS && w) {
			*w = (struct worker){ .a = a, .used = true };
			strcpy(w->pool, pool);
			if (pthread_create(&w->thread, NULL, pool_worker, w))
				w->used = false;
		}
		pthread_mutex_unlock(&j->lock);
	}
	free(ids);
}

/* When the soonest delete that failed is to be tried again. */
static int64_t next_retry(struct ag_agent *a)
{
	size_t n;
	int64_t next;

	free(due_deletes(a, NULL, &n, &next));
	return next;
}

static void wait_for(struct ag_jobs *j, int64_t until_ms)
{
	struct timespec ts;

	pthread_mutex_lock(&j->lock);
	if (until_ms != INT64_MAX) {
		/* the condition waits by CLOCK_MONOTONIC (set at init) */
		ts.tv_sec = until_ms / 1000;
		ts.tv_nsec = (until_ms % 1000) * 1000000;
		while (!j->stop && !j->kicked && now_ms() < until_ms)
			pthread_cond_timedwait(&j->cond, &j->lock, &ts);
	} else {
		while (!j->stop && !j->kicked)
			pthread_cond_wait(&j->cond, &j->lock);
	}
	j->kicked = false;
	pthread_mutex_unlock(&j->lock);
}

/*
 * The delete job: pools are wiped side by side (a slow disk holds up only
 * its own deletes), each pool's deletes one at a time.
 */
static void *deleter(void *arg)
{
	struct ag_agent *a = arg;
	int64_t next;

	while (!stopping(a)) {
		reap(a->jobs, false);
		dispatch(a);
		next = next_retry(a);
		wait_for(a->jobs, next);
	}
	reap(a->jobs, true);
	return NULL;
}

static void *reconciler(void *arg)
{
	struct ag_agent *a = arg;
	struct ag_jobs *j = a->jobs;
	struct timespec ts;
	struct ag_err e;
	int64_t until;

	for (;;) {
		until = now_ms() + (int64_t)j->reconcile_s * 1000;
		ts.tv_sec = until / 1000;
		ts.tv_nsec = (until % 1000) * 1000000;
		pthread_mutex_lock(&j->lock);
		while (!j->stop && now_ms() < until)
			pthread_cond_timedwait(&j->cond, &j->lock, &ts);
		pthread_mutex_unlock(&j->lock);
		if (stopping(a))
			break;
		if (ag_reconcile(a, &e))
			ag_log("warning", "periodic reconcile: %s", e.msg);
	}
	return NULL;
}

int ag_jobs_start(struct ag_agent *a, unsigned int reconcile_s, struct ag_err *e)
{
	struct ag_jobs *j = calloc(1, sizeof(*j));
	pthread_condattr_t ca;

	if (!j)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	pthread_mutex_init(&j->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cond, &ca);
	pthread_condattr_destroy(&ca);
	j->reconcile_s = reconcile_s;
	a->jobs = j;
	if (pthread_create(&j->deleter, NULL, deleter, a)) {
		a->jobs = NULL;
		free(j);
		return ag_fail(e, AG_E_INTERNAL, "cannot start the delete job");
	}
	if (reconcile_s && !pthread_create(&j->reconciler, NULL, reconciler, a))
		j->has_reconciler = true;
	return 0;
}

void ag_jobs_stop(struct ag_agent *a)
{
	struct ag_jobs *j = a->jobs;

	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	__atomic_store_n(&j->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	pthread_join(j->deleter, NULL);
	if (j->has_reconciler)
		pthread_join(j->reconciler, NULL);
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	a->jobs = NULL;
	free(j);
}

void ag_jobs_kick(struct ag_agent *a)
{
	struct ag_jobs *j = a->jobs;

	if (!j)
		return;
	pthread_mutex_lock(&j->lock);
	j->kicked = true;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
}
