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

/* A file read every tick. */
struct source {
	int fd;
	char *buf;
	size_t cap;
	int len;		/* of the last read; < 0 an error */
};

struct vol {
	char id[AG_ID_MAX + 1];
	char tenant[AG_ID_MAX + 1];
	unsigned int major, minor;
	bool present;		/* its device exists */
	struct source bdi;	/* debugfs stats; fd -1 without */
	int ratio_fd;		/* /sys/class/bdi/<maj:min>/max_ratio */
	uint64_t dirty_max;
	int ratio;		/* as last written; -1 never */
	int64_t dirty, writeback, bdi_thresh;
};

struct tenant {
	char id[AG_ID_MAX + 1];
	struct source stat;	/* memory.stat; fd -1 unmapped */
	int64_t file_dirty, file_writeback;
};

struct ag_monitor {
	struct ag_monitor_config cfg;
	struct ag_state *st;
	struct io_uring ring;
	unsigned int ring_entries;
	struct source vmstat;
	uint64_t gen_seen;	/* the state's generation when the volumes were read */
	struct vol *vols;
	size_t nr_vols;
	struct tenant *tenants;
	size_t nr_tenants;
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

static void source_close(struct source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	s->fd = -1;
	s->buf = NULL;
}

static void drop_volumes(struct ag_monitor *m)
{
	for (size_t i = 0; i < m->nr_vols; i++) {
		source_close(&m->vols[i].bdi);
		if (m->vols[i].ratio_fd >= 0)
			close(m->vols[i].ratio_fd);
	}
	for (size_t i = 0; i < m->nr_tenants; i++)
		source_close(&m->tenants[i].stat);
	free(m->vols);
	free(m->tenants);
	m->vols = NULL;
	m->tenants = NULL;
	m->nr_vols = m->nr_tenants = 0;
}

static struct tenant *tenant_of(struct ag_monitor *m, const char *id)
{
	for (size_t i = 0; i < m->nr_tenants; i++)
		if (!strcmp(m->tenants[i].id, id))
			return &m->tenants[i];
	return NULL;
}

/* The ring, large enough for one read of every source. */
static int size_ring(struct ag_monitor *m, char *err, size_t errlen)
{
	unsigned int want = 8;
	size_t need = 1 + m->nr_vols + m->nr_tenants;
	int rc;

	while (want < need)
		want *= 2;
	if (want <= m->ring_entries)
		return 0;
	if (m->ring_entries)
		io_uring_queue_exit(&m->ring);
	m->ring_entries = 0;
	rc = io_uring_queue_init(want, &m->ring, 0);
	if (rc < 0)
		return snprintf(err, errlen, "io_uring_queue_init(%u): %s", want, strerror(-rc)), -1;
	m->ring_entries = want;
	return 0;
}

/* Open what is read for one volume (its device may not exist yet). */
/*
 * The bdi's max_ratio as it is, or -1: the volumes are read again after
 * every change, and a ratio taken as unknown was left alone when the
 * volume no longer asked for one (removing dirty_bytes_max kept it).
 */
static int read_ratio(int fd)
{
	char num[16];
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, num, sizeof(num) - 1, 0);
	if (n <= 0)
		return -1;
	num[n] = '\0';
	return atoi(num);
}

static void open_volume(struct ag_monitor *m, struct vol *v)
{
	char path[512];
	struct stat st;

	v->bdi.fd = v->ratio_fd = -1;
	v->ratio = -1;
	v->bdi.buf = NULL;
	v->dirty = v->writeback = v->bdi_thresh = UNKNOWN;
	snprintf(path, sizeof(path), "/dev/mapper/sluice-%s", v->id);
	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return;
	v->present = true;
	v->major = major(st.st_rdev);
	v->minor = minor(st.st_rdev);
	snprintf(path, sizeof(path), "%s/bdi/%u:%u/stats", m->cfg.debugfs, v->major, v->minor);
	source_open(&v->bdi, path, FILE_BUF);
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/max_ratio", v->major, v->minor);
	v->ratio_fd = open(path, O_RDWR | O_CLOEXEC);
	v->ratio = read_ratio(v->ratio_fd);
}

/* What the monitor needs of a volume, copied out of the state. */
struct vol_seen {
	char id[AG_ID_MAX + 1], tenant[AG_ID_MAX + 1];
	uint64_t dirty_max;
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
		out[(*n)++].dirty_max = ag_apolicy_dirty_max(v->apolicy);
	}
	if (out && st->vols.nr && !all) {
		free(out);
		out = NULL;
	}
	pthread_rwlock_unlock(&st->lock);
	free(all);
	return out;
}

/* Read the volumes again when the state has changed. */
static int refresh(struct ag_monitor *m, char *err, size_t errlen)
{
	struct vol_seen *seen;
	uint64_t gen;
	size_t i, n;

	pthread_rwlock_rdlock(&m->st->lock);
	gen = m->st->generation;
	pthread_rwlock_unlock(&m->st->lock);
	if (m->ticks && gen == m->gen_seen)
		goto missing;
	seen = volumes_now(m->st, &n, &gen);
	if (!seen)
		return snprintf(err, errlen, "out of memory"), -1;
	pthread_mutex_lock(&m->lock);
	drop_volumes(m);
	m->vols = calloc(n ? n : 1, sizeof(*m->vols));
	m->tenants = calloc(n ? n : 1, sizeof(*m->tenants));
	if (!m->vols || !m->tenants) {
		pthread_mutex_unlock(&m->lock);
		free(seen);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	for (i = 0; i < n; i++) {
		const struct vol_seen *mv = &seen[i];
		struct vol *v = &m->vols[m->nr_vols];
		struct tenant *t;
		char path[512];

		m->nr_vols++;
		snprintf(v->id, sizeof(v->id), "%s", mv->id);
		snprintf(v->tenant, sizeof(v->tenant), "%s", mv->tenant);
		v->dirty_max = mv->dirty_max;
		open_volume(m, v);
		if (tenant_of(m, mv->tenant))
			continue;
		t = &m->tenants[m->nr_tenants++];
		snprintf(t->id, sizeof(t->id), "%s", mv->tenant);
		t->stat.fd = -1;
		t->file_dirty = t->file_writeback = UNKNOWN;
		if (m->cfg.tenant_cgroup[0]) {
			/* the configured pattern, with the tenant for its %s */
			const char *pct = strstr(m->cfg.tenant_cgroup, "%s");

			snprintf(path, sizeof(path), "%.*s%s%s/memory.stat",
				 pct ? (int)(pct - m->cfg.tenant_cgroup) : (int)strlen(m->cfg.tenant_cgroup),
				 m->cfg.tenant_cgroup, pct ? t->id : "", pct ? pct + 2 : "");
			source_open(&t->stat, path, FILE_BUF);
		}
	}
	pthread_mutex_unlock(&m->lock);
	free(seen);
	m->gen_seen = gen;
	return size_ring(m, err, errlen);
missing:
	/* a volume whose device appeared since (reconcile made it) */
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->nr_vols; i++)
		if (!m->vols[i].present)
			open_volume(m, &m->vols[i]);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static void queue_read(struct ag_monitor *m, struct source *s, unsigned int *n)
{
	struct io_uring_sqe *sqe;

	if (s->fd < 0)
		return;
	sqe = io_uring_get_sqe(&m->ring);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, s->fd, s->buf, s->cap - 1, 0);
	/* proc, sysfs and debugfs files cannot be read without blocking: straight to a worker */
	io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	io_uring_sqe_set_data(sqe, s);
	s->len = -1;
	(*n)++;
}

/*
 * Every source read once: one submission that also waits for all of them
 * (one wakeup a tick, not one a completion), then the completions.
 */
static int read_all(struct ag_monitor *m, char *err, size_t errlen)
{
	unsigned int n = 0, done = 0, head, seen;
	struct io_uring_cqe *cqe;
	int rc;

	queue_read(m, &m->vmstat, &n);
	for (size_t i = 0; i < m->nr_vols; i++)
		queue_read(m, &m->vols[i].bdi, &n);
	for (size_t i = 0; i < m->nr_tenants; i++)
		queue_read(m, &m->tenants[i].stat, &n);
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
			if (!s)
				continue;
			s->len = cqe->res;
			if (s->len >= 0)
				s->buf[s->len] = '\0';
			done++;
		}
		io_uring_cq_advance(&m->ring, seen);
	}
	return 0;
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
		char num[16];
		int n;

		if (v->ratio_fd < 0 || want == v->ratio || (!v->dirty_max && v->ratio < 0))
			continue;
		n = snprintf(num, sizeof(num), "%d\n", want);
		if (pwrite(v->ratio_fd, num, n, 0) == n) {
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
	if (size_ring(m, err, errlen)) {
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
	if (m->ring_entries)
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
	for (size_t i = 0; m->ticks && i < m->nr_vols; i++)
		if (!strcmp(m->vols[i].id, id))
			j = vol_json(&m->vols[i]);
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
