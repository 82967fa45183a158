// SPDX-License-Identifier: GPL-2.0
/* The dirty monitor; see monitor.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "model.h"
#include "monitor.h"
#include "state.h"

#define PAGE_BYTES 4096
#define VMSTAT_BUF 16384
#define FILE_BUF 4096
#define UNKNOWN (-1)
/*
 * Files are opened, read and closed by the ring itself, into its own table
 * of SLOTS files (not the process's): a batch of SLOTS at a time, three
 * linked requests each. The monitor holds no descriptor per volume.
 */
#define SLOTS 64
#define RING_ENTRIES 256	/* 3 * SLOTS, vmstat and the tick */
#define READS_PER_TICK 1024
#define RECHECK_TICKS 60

/* A file read every tick: by its open descriptor (vmstat), or by its path. */
struct source {
	int fd;
	char *path;
	char *buf;
	size_t cap;
	int len;		/* of the last read; < 0 an error */
};

struct vol {
	char id[AG_VOLUME_ID_MAX + 1];
	char tenant[AG_ID_MAX + 1];
	unsigned int major, minor;
	bool present;		/* its device exists */
	struct source bdi;	/* debugfs stats; no path without the device */
	uint64_t dirty_max;
	int ratio;		/* as last written; -1 never */
	int64_t dirty, writeback, bdi_thresh;
};

struct tenant {
	char id[AG_ID_MAX + 1];
	struct source stat;	/* memory.stat; no path unmapped */
	int64_t file_dirty, file_writeback;
};

struct ag_monitor {
	struct ag_monitor_config cfg;
	struct ag_state *st;
	struct io_uring ring;
	bool ring_ready;
	struct source vmstat;
	uint64_t gen_seen;	/* the state's generation when the volumes were read */
	struct vol *vols;
	size_t nr_vols;
	struct ag_idmap by_id;	/* the volumes by id */
	struct tenant *tenants;
	size_t nr_tenants;
	size_t cursor;		/* where the next tick's reads of the others start */
	int64_t nr_dirty, nr_writeback, thresh, bg_thresh;	/* bytes */
	uint64_t ticks;
	pthread_mutex_t lock;	/* the figures above, against the readers */
	pthread_t thread;
	bool running, stop;
};

void ag_monitor_config_defaults(struct ag_monitor_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval_ms = 1000;
	c->control = true;
	snprintf(c->debugfs, sizeof(c->debugfs), "/sys/kernel/debug");
}

static int source_open(struct source *s, const char *path, size_t cap)
{
	s->len = -1;
	s->cap = cap;
	s->path = NULL;
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return -1;
	s->buf = malloc(cap);
	if (!s->buf) {
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	return 0;
}

/* A source read by its path (the ring opens it for each read). */
static void source_path(struct source *s, const char *path, size_t cap)
{
	s->fd = -1;
	s->len = -1;
	s->cap = cap;
	s->path = strdup(path);
	s->buf = s->path ? malloc(cap) : NULL;
	if (!s->buf) {
		free(s->path);
		s->path = NULL;
	}
}

static void source_close(struct source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->path);
	s->fd = -1;
	s->buf = NULL;
	s->path = NULL;
}

static void drop_volumes(struct ag_monitor *m)
{
	for (size_t i = 0; i < m->nr_vols; i++)
		source_close(&m->vols[i].bdi);
	for (size_t i = 0; i < m->nr_tenants; i++)
		source_close(&m->tenants[i].stat);
	free(m->vols);
	free(m->tenants);
	ag_idmap_destroy(&m->by_id);
	m->vols = NULL;
	m->tenants = NULL;
	m->nr_vols = m->nr_tenants = 0;
}

static int ring_init(struct ag_monitor *m, char *err, size_t errlen)
{
	int rc = io_uring_queue_init(RING_ENTRIES, &m->ring, 0);

	if (rc < 0)
		return snprintf(err, errlen, "io_uring_queue_init: %s", strerror(-rc)), -1;
	rc = io_uring_register_files_sparse(&m->ring, SLOTS);
	if (rc < 0) {
		io_uring_queue_exit(&m->ring);
		return snprintf(err, errlen, "io_uring_register_files_sparse: %s", strerror(-rc)), -1;
	}
	m->ring_ready = true;
	return 0;
}

/* The bdi's max_ratio as it is, or -1 (read once, when the volume is first seen). */
static int read_ratio(unsigned int major, unsigned int minor)
{
	char path[64], num[16];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/max_ratio", major, minor);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, num, sizeof(num) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	num[n] = '\0';
	return atoi(num);
}

static int write_ratio(const struct vol *v, int ratio)
{
	char path[64], num[16];
	int fd, n, rc;

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/max_ratio", v->major, v->minor);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(num, sizeof(num), "%d\n", ratio);
	rc = write(fd, num, n) == n ? 0 : -1;
	close(fd);
	return rc;
}

/* Look for a volume's device (it may not exist yet); with it, its bdi's figures. */
static void find_device(struct ag_monitor *m, struct vol *v)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/mapper/sluice-%s", v->id);
	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return;
	v->present = true;
	v->major = major(st.st_rdev);
	v->minor = minor(st.st_rdev);
	snprintf(path, sizeof(path), "%s/bdi/%u:%u/stats", m->cfg.debugfs, v->major, v->minor);
	source_path(&v->bdi, path, FILE_BUF);
	v->ratio = read_ratio(v->major, v->minor);
}

/*
 * A volume seen before, after the state changed: its device may be another
 * now (deleted and made again under the same id, or made again by a
 * reconcile), with the kernel's default max_ratio. A new device is looked
 * at afresh; a volume with a dirty bound has its ratio read again.
 */
static void recheck_device(struct ag_monitor *m, struct vol *v, uint64_t dirty_max)
{
	char path[512];
	struct stat st;
	bool same;

	snprintf(path, sizeof(path), "/dev/mapper/sluice-%s", v->id);
	same = !stat(path, &st) && S_ISBLK(st.st_mode) && v->present &&
	       major(st.st_rdev) == v->major && minor(st.st_rdev) == v->minor;
	if (!same) {
		source_close(&v->bdi);
		v->present = false;
		v->ratio = -1;
		v->dirty = v->writeback = v->bdi_thresh = UNKNOWN;
		find_device(m, v);
	} else if (dirty_max || v->dirty_max) {
		v->ratio = read_ratio(v->major, v->minor);
	}
}

/* What the monitor needs of a volume, copied out of the state. */
struct vol_seen {
	char id[AG_VOLUME_ID_MAX + 1], tenant[AG_ID_MAX + 1];
	uint64_t dirty_max;
	uint64_t changed;
};

/* The volumes that are not being deleted, copied under the state's lock. */
static struct vol_seen *volumes_now(struct ag_state *st, size_t *n, uint64_t *gen)
{
	struct vol_seen *out;
	void **all;
	size_t i;

	*n = 0;
	pthread_rwlock_rdlock(&st->lock);
	*gen = st->generation;
	all = ag_idmap_values(&st->vols);
	out = calloc(st->vols.nr + 1, sizeof(*out));
	for (i = 0; out && all && i < st->vols.nr; i++) {
		const struct ag_volume *v = all[i];

		if (v->deleting)
			continue;
		strcpy(out[*n].id, v->id);
		strcpy(out[*n].tenant, v->tenant);
		out[*n].changed = v->changed;
		out[(*n)++].dirty_max = v->policy.dirty_bytes_max;
	}
	if (out && st->vols.nr && !all) {
		free(out);
		out = NULL;
	}
	pthread_rwlock_unlock(&st->lock);
	free(all);
	return out;
}

static void new_tenant(struct ag_monitor *m, struct tenant *t, const char *id)
{
	char path[512];

	snprintf(t->id, sizeof(t->id), "%s", id);
	t->stat = (struct source){ .fd = -1, .len = -1 };
	t->file_dirty = t->file_writeback = UNKNOWN;
	if (m->cfg.tenant_cgroup[0]) {
		/* the configured pattern, with the tenant for its %s */
		const char *pct = strstr(m->cfg.tenant_cgroup, "%s");

		snprintf(path, sizeof(path), "%.*s%s%s/memory.stat",
			 pct ? (int)(pct - m->cfg.tenant_cgroup) : (int)strlen(m->cfg.tenant_cgroup),
			 m->cfg.tenant_cgroup, pct ? t->id : "", pct ? pct + 2 : "");
		source_path(&t->stat, path, FILE_BUF);
	}
}

/*
 * Read the volumes again when the state has changed: a volume seen before
 * keeps what was found of it (its device, its ratio); a new one is looked
 * for. Each volume and tenant is found by id in constant time.
 */
static int refresh(struct ag_monitor *m, char *err, size_t errlen)
{
	struct ag_idmap tenants = { 0 };
	struct vol_seen *seen;
	struct vol *vols, *old;
	struct tenant *ts;
	size_t i, n, nt = 0;
	uint64_t gen;

	pthread_rwlock_rdlock(&m->st->lock);
	gen = m->st->generation;
	pthread_rwlock_unlock(&m->st->lock);
	if (m->ticks && gen == m->gen_seen)
		goto missing;
	seen = volumes_now(m->st, &n, &gen);
	vols = calloc(n ? n : 1, sizeof(*vols));
	ts = calloc(n ? n : 1, sizeof(*ts));
	if (!seen || !vols || !ts) {
		free(seen);
		free(vols);
		free(ts);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < n; i++) {
		struct vol *v = &vols[i];
		struct tenant *t;

		old = ag_idmap_get(&m->by_id, seen[i].id);
		if (old) {
			*v = *old;
			old->bdi = (struct source){ .fd = -1 };
			/* only a volume changed since: a change the next tick, not 10,000 looks */
			if (seen[i].changed > m->gen_seen)
				recheck_device(m, v, seen[i].dirty_max);
		} else {
			snprintf(v->id, sizeof(v->id), "%s", seen[i].id);
			v->bdi = (struct source){ .fd = -1, .len = -1 };
			v->ratio = -1;
			v->dirty = v->writeback = v->bdi_thresh = UNKNOWN;
			find_device(m, v);
		}
		snprintf(v->tenant, sizeof(v->tenant), "%s", seen[i].tenant);
		v->dirty_max = seen[i].dirty_max;
		if (ag_idmap_get(&tenants, v->tenant))
			continue;
		t = &ts[nt++];
		new_tenant(m, t, v->tenant);
		ag_idmap_put(&tenants, t->id, t);
	}
	drop_volumes(m);
	m->vols = vols;
	m->nr_vols = n;
	m->tenants = ts;
	m->nr_tenants = nt;
	for (i = 0; i < n; i++)
		ag_idmap_put(&m->by_id, vols[i].id, &vols[i]);
	pthread_mutex_unlock(&m->lock);
	ag_idmap_destroy(&tenants);
	free(seen);
	m->gen_seen = gen;
	return 0;
missing:
	/*
	 * a volume whose device appeared since (reconcile made it); once a
	 * minute every volume, for a device made again behind the state's back
	 */
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->nr_vols; i++)
		if (!m->vols[i].present)
			find_device(m, &m->vols[i]);
		else if (m->ticks % RECHECK_TICKS == 0)
			recheck_device(m, &m->vols[i], m->vols[i].dirty_max);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Queue a read of s: of its descriptor, or opened, read and closed by the ring in slot. */
static void queue_read(struct ag_monitor *m, struct source *s, int slot, unsigned int *n)
{
	struct io_uring_sqe *sqe;

	s->len = -1;
	if (!s->buf)
		return;
	if (s->fd >= 0) {
		sqe = io_uring_get_sqe(&m->ring);
		io_uring_prep_read(sqe, s->fd, s->buf, s->cap - 1, 0);
		/* proc, sysfs and debugfs files cannot be read without blocking: straight to a worker */
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
		io_uring_sqe_set_data(sqe, s);
		(*n)++;
		return;
	}
	/* hard links: the close runs whatever became of the read */
	sqe = io_uring_get_sqe(&m->ring);
	/* a file in the ring's table: no O_CLOEXEC (it is never the process's) */
	io_uring_prep_openat_direct(sqe, AT_FDCWD, s->path, O_RDONLY, 0, slot);
	io_uring_sqe_set_flags(sqe, IOSQE_IO_HARDLINK | IOSQE_ASYNC);
	io_uring_sqe_set_data(sqe, NULL);
	sqe = io_uring_get_sqe(&m->ring);
	io_uring_prep_read(sqe, slot, s->buf, s->cap - 1, 0);
	io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK);
	io_uring_sqe_set_data(sqe, s);
	sqe = io_uring_get_sqe(&m->ring);
	io_uring_prep_close_direct(sqe, slot);
	io_uring_sqe_set_data(sqe, NULL);
	*n += 3;
}

/* Submit what is queued, wait for all n completions, and keep each read's length. */
static int reap_reads(struct ag_monitor *m, unsigned int n, char *err, size_t errlen)
{
	unsigned int done = 0, head, seen;
	struct io_uring_cqe *cqe;
	int rc;

	if (!n)
		return 0;
	rc = io_uring_submit_and_wait(&m->ring, n);
	if (rc < 0 && rc != -EINTR)
		return snprintf(err, errlen, "io_uring_submit: %s", strerror(-rc)), -1;
	while (done < n) {
		rc = io_uring_wait_cqe_nr(&m->ring, &cqe, n - done);
		if (rc == -EINTR)
			continue;
		if (rc < 0)
			return snprintf(err, errlen, "io_uring_wait_cqe: %s", strerror(-rc)), -1;
		seen = 0;
		io_uring_for_each_cqe(&m->ring, head, cqe) {
			struct source *s = io_uring_cqe_get_data(cqe);

			seen++;
			done++;
			if (!s)
				continue;
			s->len = cqe->res;
			if (s->len >= 0)
				s->buf[s->len] = '\0';
		}
		io_uring_cq_advance(&m->ring, seen);
	}
	return 0;
}

/* Queue s, and submit and reap the batch when the ring's table is full. */
static int read_one(struct ag_monitor *m, struct source *s, int *slot, unsigned int *n, char *err,
		    size_t errlen)
{
	queue_read(m, s, (*slot)++, n);
	if (*slot < SLOTS)
		return 0;
	*slot = 0;
	if (reap_reads(m, *n, err, errlen))
		return -1;
	*n = 0;
	return 0;
}

/*
 * A tick's reads: vmstat, every volume with a dirty bound, and the others in
 * turn, at most READS_PER_TICK files a tick (with more volumes and tenants
 * than that, each one's figures are a few ticks old: the monitor's work a
 * tick is bounded whatever their number). A batch of SLOTS files goes in one
 * submission that also waits for all of them (one wakeup a batch).
 */
static int read_all(struct ag_monitor *m, char *err, size_t errlen)
{
	unsigned int n = 0, budget = READS_PER_TICK;
	int slot = 0;
	size_t i, total = m->nr_vols + m->nr_tenants, seen;

	queue_read(m, &m->vmstat, -1, &n);
	for (i = 0; i < m->nr_vols && budget; i++)
		if (m->vols[i].dirty_max && m->vols[i].bdi.buf) {
			if (read_one(m, &m->vols[i].bdi, &slot, &n, err, errlen))
				return -1;
			budget--;
		}
	for (seen = 0; seen < total && budget; seen++) {
		struct source *s;

		i = m->cursor++ % total;
		s = i < m->nr_vols ? &m->vols[i].bdi : &m->tenants[i - m->nr_vols].stat;
		if (!s->buf || (i < m->nr_vols && m->vols[i].dirty_max))
			continue;
		if (read_one(m, s, &slot, &n, err, errlen))
			return -1;
		budget--;
	}
	return reap_reads(m, n, err, errlen);
}

/* The number after "<key>" (followed by a space or a colon) in text; -1 if absent. */
static int64_t field(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *p = text;

	while ((p = strstr(p, key))) {
		if ((p == text || p[-1] == '\n') && (p[n] == ' ' || p[n] == ':')) {
			p += n + 1;
			while (*p == ' ' || *p == ':')
				p++;
			return strtoll(p, NULL, 10);
		}
		p += n;
	}
	return UNKNOWN;
}

static int64_t kib(int64_t v)
{
	return v < 0 ? UNKNOWN : v * 1024;
}

static int64_t pages(int64_t v)
{
	return v < 0 ? UNKNOWN : v * PAGE_BYTES;
}

static void parse(struct ag_monitor *m)
{
	if (m->vmstat.len > 0) {
		m->nr_dirty = pages(field(m->vmstat.buf, "nr_dirty"));
		m->nr_writeback = pages(field(m->vmstat.buf, "nr_writeback"));
		m->thresh = pages(field(m->vmstat.buf, "nr_dirty_threshold"));
		m->bg_thresh = pages(field(m->vmstat.buf, "nr_dirty_background_threshold"));
	}
	for (size_t i = 0; i < m->nr_vols; i++) {
		struct vol *v = &m->vols[i];

		if (v->bdi.len <= 0)
			continue;
		v->dirty = kib(field(v->bdi.buf, "BdiReclaimable"));
		v->writeback = kib(field(v->bdi.buf, "BdiWriteback"));
		v->bdi_thresh = kib(field(v->bdi.buf, "BdiDirtyThresh"));
	}
	for (size_t i = 0; i < m->nr_tenants; i++) {
		struct tenant *t = &m->tenants[i];

		if (t->stat.len <= 0)
			continue;
		t->file_dirty = field(t->stat.buf, "file_dirty");
		t->file_writeback = field(t->stat.buf, "file_writeback");
	}
}

/* max_ratio for dirty_bytes_max: floor(100 D / T), 1 to 100. */
static int ratio_for(uint64_t dirty_max, int64_t thresh)
{
	uint64_t r;

	if (thresh <= 0)
		return 100;
	r = dirty_max * 100 / (uint64_t)thresh;
	return r < 1 ? 1 : r > 100 ? 100 : (int)r;
}

static void control(struct ag_monitor *m)
{
	for (size_t i = 0; i < m->nr_vols; i++) {
		struct vol *v = &m->vols[i];
		int want = v->dirty_max ? ratio_for(v->dirty_max, m->thresh) : 100;

		if (!v->present || want == v->ratio || (!v->dirty_max && v->ratio < 0))
			continue;
		if (!write_ratio(v, want)) {
			if (v->ratio != want)
				ag_log("info", "volume %s: bdi %u:%u max_ratio %d (dirty_bytes_max %" PRIu64
				       ", threshold %" PRId64 ")", v->id, v->major, v->minor, want,
				       v->dirty_max, m->thresh);
			v->ratio = want;
		} else {
			ag_log("warning", "volume %s: bdi %u:%u max_ratio %d: %s", v->id, v->major,
			       v->minor, want, strerror(errno));
			v->ratio = -2;	/* tried; try again next tick */
		}
	}
}

static int wait_tick(struct ag_monitor *m, char *err, size_t errlen)
{
	struct __kernel_timespec ts = {
		.tv_sec = m->cfg.interval_ms / 1000,
		.tv_nsec = (long long)(m->cfg.interval_ms % 1000) * 1000000,
	};
	struct io_uring_sqe *sqe = io_uring_get_sqe(&m->ring);
	struct io_uring_cqe *cqe;
	int rc;

	if (!sqe)
		return snprintf(err, errlen, "io_uring: no sqe for the tick"), -1;
	io_uring_prep_timeout(sqe, &ts, 0, 0);
	io_uring_sqe_set_data(sqe, NULL);
	rc = io_uring_submit(&m->ring);
	if (rc < 0)
		return snprintf(err, errlen, "io_uring_submit: %s", strerror(-rc)), -1;
	do
		rc = io_uring_wait_cqe(&m->ring, &cqe);
	while (rc == -EINTR);
	if (rc < 0)
		return snprintf(err, errlen, "io_uring_wait_cqe: %s", strerror(-rc)), -1;
	io_uring_cqe_seen(&m->ring, cqe);
	return 0;
}

int ag_monitor_tick(struct ag_monitor *m, bool wait, char *err, size_t errlen)
{
	if (wait && wait_tick(m, err, errlen))
		return -1;
	if (refresh(m, err, errlen) || read_all(m, err, errlen))
		return -1;
	pthread_mutex_lock(&m->lock);
	parse(m);
	if (m->cfg.control)
		control(m);
	m->ticks++;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

int ag_monitor_open(struct ag_monitor **mp, struct ag_state *st,
		    const struct ag_monitor_config *cfg, char *err, size_t errlen)
{
	struct ag_monitor *m = calloc(1, sizeof(*m));

	if (!m)
		return snprintf(err, errlen, "out of memory"), -1;
	m->cfg = *cfg;
	m->nr_dirty = m->nr_writeback = m->thresh = m->bg_thresh = UNKNOWN;
	pthread_mutex_init(&m->lock, NULL);
	m->st = st;
	if (source_open(&m->vmstat, "/proc/vmstat", VMSTAT_BUF)) {
		snprintf(err, errlen, "/proc/vmstat: %s", strerror(errno));
		free(m);
		return -1;
	}
	if (ring_init(m, err, errlen)) {
		source_close(&m->vmstat);
		free(m);
		return -1;
	}
	*mp = m;
	return 0;
}

static void *run(void *arg)
{
	struct ag_monitor *m = arg;
	char err[256], last[256] = "";

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		if (ag_monitor_tick(m, true, err, sizeof(err))) {
			/* once a failure, not every tick */
			if (strcmp(err, last))
				ag_log("warning", "dirty monitor: %s", err);
			snprintf(last, sizeof(last), "%s", err);
		} else {
			last[0] = '\0';
		}
	}
	return NULL;
}

int ag_monitor_start(struct ag_monitor *m)
{
	if (pthread_create(&m->thread, NULL, run, m))
		return -1;
	m->running = true;
	return 0;
}

void ag_monitor_close(struct ag_monitor *m)
{
	if (!m)
		return;
	if (m->running) {
		__atomic_store_n(&m->stop, true, __ATOMIC_RELEASE);
		pthread_join(m->thread, NULL);
	}
	drop_volumes(m);
	source_close(&m->vmstat);
	if (m->ring_ready)
		io_uring_queue_exit(&m->ring);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static json_t *num_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *vol_json(const struct vol *v)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "id", v->id, "tenant", v->tenant,
			 "dirty_bytes", num_or_null(v->dirty),
			 "writeback_bytes", num_or_null(v->writeback),
			 "bdi_dirty_thresh_bytes", num_or_null(v->bdi_thresh),
			 "dirty_bytes_max", v->dirty_max ? json_integer((json_int_t)v->dirty_max) :
			 json_null(),
			 "max_ratio", num_or_null(v->ratio < 0 ? UNKNOWN : v->ratio));
}

json_t *ag_monitor_volume_json(struct ag_monitor *m, const char *id)
{
	json_t *j = NULL;

	if (!m)
		return NULL;
	pthread_mutex_lock(&m->lock);
	if (m->ticks) {
		const struct vol *v = ag_idmap_get(&m->by_id, id);

		if (v)
			j = vol_json(v);
	}
	pthread_mutex_unlock(&m->lock);
	return j;
}

json_t *ag_monitor_json(struct ag_monitor *m)
{
	json_t *vols = json_array(), *tenants = json_array(), *j;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nr_vols; i++)
		json_array_append_new(vols, vol_json(&m->vols[i]));
	for (size_t i = 0; i < m->nr_tenants; i++)
		json_array_append_new(tenants, json_pack("{s:s, s:o, s:o}", "id", m->tenants[i].id,
							 "file_dirty_bytes",
							 num_or_null(m->tenants[i].file_dirty),
							 "file_writeback_bytes",
							 num_or_null(m->tenants[i].file_writeback)));
	j = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "ticks", (json_int_t)m->ticks,
		      "dirty_bytes", num_or_null(m->nr_dirty),
		      "writeback_bytes", num_or_null(m->nr_writeback),
		      "dirty_thresh_bytes", num_or_null(m->thresh),
		      "background_thresh_bytes", num_or_null(m->bg_thresh),
		      "volumes", vols, "tenants", tenants);
	pthread_mutex_unlock(&m->lock);
	return j;
}
