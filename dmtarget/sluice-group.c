// SPDX-License-Identifier: GPL-2.0
/*
 * Shared limit groups of dm-sluice: every table that names group=<name>
 * shares one throttle stage, whose limits are the group_* keys of the table
 * last resumed with any, or of the last set message naming them. A bio
 * passes its volume's own limits first, then its group's. Groups are found
 * by name and live while a table names them, so reloads and suspends keep
 * their buckets as they keep a volume's.
 */
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "sluice-target.h"

#define DM_MSG_PREFIX "sluice"

struct sluice_group {
	struct list_head list;		/* in sluice_groups */
	char name[SL_LABEL_MAX + 1];
	unsigned int refs;		/* tables naming it; sluice_groups_lock */
	struct mutex cfg_lock;		/* serialises changes of its limits */
	struct sluice_stage s;
	struct sl_config cfg;		/* its group_* limits; under s.lock */
	struct sluice_stats st;
};

static LIST_HEAD(sluice_groups);
static DEFINE_MUTEX(sluice_groups_lock);

static void sluice_group_dispatch_fn(struct work_struct *w)
{
	struct sluice_group *g = container_of(w, struct sluice_group, s.dispatch);
	struct bio_list out = BIO_EMPTY_LIST;

	spin_lock(&g->s.lock);
	__sluice_stage_release(&g->s, &g->st, &out, ktime_get_ns(), SLUICE_DUE, U64_MAX);
	spin_unlock(&g->s.lock);
	sluice_submit_list(&out, SLUICE_TO_POOL);
}

struct sluice_group *sluice_group_get(const char *name)
{
	struct sluice_group *g;

	mutex_lock(&sluice_groups_lock);
	list_for_each_entry(g, &sluice_groups, list) {
		if (!strcmp(g->name, name)) {
			g->refs++;
			goto out;
		}
	}
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		goto out;
	if (sluice_stats_init(&g->st)) {
		kfree(g);
		g = NULL;
		goto out;
	}
	strscpy(g->name, name, sizeof(g->name));
	g->refs = 1;
	mutex_init(&g->cfg_lock);
	sluice_stage_init(&g->s, sluice_group_dispatch_fn);
	sl_config_init(&g->cfg);
	list_add(&g->list, &sluice_groups);
out:
	mutex_unlock(&sluice_groups_lock);
	return g;
}

void sluice_group_put(struct sluice_group *g)
{
	mutex_lock(&sluice_groups_lock);
	if (--g->refs) {
		mutex_unlock(&sluice_groups_lock);
		return;
	}
	list_del(&g->list);
	mutex_unlock(&sluice_groups_lock);
	/* every member drained what it had here when it was suspended */
	sluice_stage_stop(&g->s);
	sluice_stats_free(&g->st);
	kfree(g);
}

/*
 * Held from reading the group's limits to setting them, so that two
 * members' sets of different group keys both take effect.
 */
void sluice_group_lock(struct sluice_group *g)
{
	mutex_lock(&g->cfg_lock);
}

void sluice_group_unlock(struct sluice_group *g)
{
	mutex_unlock(&g->cfg_lock);
}

/* Make the group_* limits of cfg the group's, whichever member asks. */
void sluice_group_set(struct sluice_group *g, const struct sl_config *cfg)
{
	struct sl_limits lim;

	lockdep_assert_held(&g->cfg_lock);
	sl_limits_from_group(&lim, cfg);
	sluice_stage_install(&g->s, &lim);
	spin_lock(&g->s.lock);
	sl_config_copy_group(&g->cfg, cfg);
	spin_unlock(&g->s.lock);
	/* new limits may release held bios now */
	queue_work(sluice_wq, &g->s.dispatch);
}

/* The group's limits in force into cfg's group_* fields. */
void sluice_group_config(struct sluice_group *g, struct sl_config *cfg)
{
	spin_lock(&g->s.lock);
	sl_config_copy_group(cfg, &g->cfg);
	spin_unlock(&g->s.lock);
}

/* The group's counters take every bio its members map, as theirs do. */
void sluice_group_count(struct sluice_group *g, struct sluice_io *io, int sign)
{
	sluice_count(&g->st, ios[io->dir], (u64)(s64)sign);
	sluice_count(&g->st, bytes[io->dir], (u64)(sign * (s64)io->bytes));
	if (sign > 0)
		return;
	/* taken back: what the group held it for goes too */
	if (io->group_throttled)
		atomic64_dec(&g->st.throttled[io->dir]);
	sluice_stats_unwait(&g->st, io, SLUICE_CHARGED_GROUP);
}

/*
 * A bio that passed its volume's limits: true if it may go on now (it is
 * charged), false if the group holds it; its worker sends it on later.
 */
bool sluice_group_admit(struct sluice_group *g, struct sluice_io *io, u64 now)
{
	u64 wait;

	if (!READ_ONCE(g->s.limited) && list_empty_careful(&g->s.queue[io->dir])) {
		io->group_passed = true;
		return true;
	}
	spin_lock(&g->s.lock);
	if (io->vol->group_closed) {
		/* its volume is suspending: held nowhere */
		__sluice_stage_charge(&g->s, io, now);
		spin_unlock(&g->s.lock);
		io->group_passed = true;
		return true;
	}
	io->group_passed = true;
	wait = __sluice_stage_admit(&g->s, io, now);
	if (!wait) {
		spin_unlock(&g->s.lock);
		return true;
	}
	if (wait != U64_MAX)
		__sluice_stage_arm(&g->s, now + wait);
	__sluice_stage_hold(&g->s, io, now);
	atomic64_inc(&g->st.throttled[io->dir]);
	io->group_throttled = true;
	spin_unlock(&g->s.lock);
	return false;
}

/* A bio sent on past the group (by a suspend): charged all the same. */
void sluice_group_charge(struct sluice_group *g, struct sluice_io *io)
{
	spin_lock(&g->s.lock);
	__sluice_stage_charge(&g->s, io, ktime_get_ns());
	spin_unlock(&g->s.lock);
	io->group_passed = true;
}

void sluice_group_refund(struct sluice_group *g, struct sluice_io *io)
{
	sluice_stage_refund(&g->s, io);
}

/*
 * Take back the bios of one volume that the group holds, oldest first, not
 * charged to the group; with close, hold none of its bios until it opens.
 */
void sluice_group_drain(struct sluice_group *g, struct sluice_vol *v,
			struct bio_list *out, bool close)
{
	struct bio_list dir[2] = { BIO_EMPTY_LIST, BIO_EMPTY_LIST };
	struct sluice_io *io, *tmp;
	int d;

	spin_lock(&g->s.lock);
	if (close)
		v->group_closed = true;
	for (d = 0; d < 2; d++) {
		list_for_each_entry_safe(io, tmp, &g->s.queue[d], entry) {
			if (io->vol != v)
				continue;
			list_del(&io->entry);
			g->s.nr_queued--;
			io->group_passed = false;
			bio_list_add(&dir[d], sluice_io_bio(io));
		}
	}
	spin_unlock(&g->s.lock);
	sluice_merge_by_seq(&dir[0], &dir[1]);
	bio_list_merge(out, &dir[0]);
}

void sluice_group_open(struct sluice_group *g, struct sluice_vol *v)
{
	spin_lock(&g->s.lock);
	v->group_closed = false;
	spin_unlock(&g->s.lock);
}

void sluice_group_status(struct sluice_group *g, char *result, unsigned int maxlen,
			 unsigned int *szp)
{
	unsigned int sz = *szp, queued;

	spin_lock(&g->s.lock);
	queued = g->s.nr_queued;
	spin_unlock(&g->s.lock);
	DMEMIT(" group=%s group_queued=%u", g->name, queued);
	*szp = sz;
	sluice_emit_counters(&g->st, "group_", result, maxlen, szp);
}
