// SPDX-License-Identifier: GPL-2.0
/*
 * dm-sluice: a device-mapper target that maps a range of one device, like
 * linear, and throttles the bios through it to bytes/s and IO/s limits with
 * bursts (QEMU/libvirt semantics). Bios over budget wait in arrival order,
 * per direction, and are sent on from a workqueue woken by an hrtimer (the
 * stage, sluice-stage.c); then through the volume's shared limit group, if
 * it names one (sluice-group.c), and its pool (sluice-policy.h).
 *
 * See sluice.rst for the table, messages and status.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <linux/blkdev.h>
#include <linux/backing-dev.h>
#include <linux/bio.h>
#include <linux/slab.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/hashtable.h>
#include <linux/refcount.h>
#include <linux/pagemap.h>
#include <linux/device-mapper.h>

#include "sluice-target.h"
#include "sluice-policy.h"

#define DM_MSG_PREFIX "sluice"

/*
 * The volumes by their device's number: a table load finds its own, and the
 * one below it, without walking them all (10,000 devices on a box is a
 * walk of 10,000 on every create).
 */
static DEFINE_HASHTABLE(sluice_vols, 10);
static DEFINE_MUTEX(sluice_vols_lock);
struct workqueue_struct *sluice_wq;
/* The page of every suspend probe: no other bio can carry it. */
static struct page *sluice_probe_page;

/*
 * Zeroed and the generation bumped under s.lock, under which a bio handed
 * back is taken off only if it was counted in the same generation: it is
 * never taken off counters zeroed since, so none goes below zero. A bio
 * map counts while this runs may be counted in the old generation after
 * the zeroing: then a counter is one high.
 */
static void sluice_stats_reset(struct sluice_vol *v)
{
	spin_lock(&v->s.lock);
	sluice_stats_zero(&v->st);
	atomic_inc(&v->stats_gen);
	spin_unlock(&v->s.lock);
}

/* How long a bio may be held before the suspend probe: see sluice_is_probe() */
#define SLUICE_PROBE_AFTER_NS (1000ULL * NSEC_PER_MSEC)
/*
 * The longest a bio that arrives while a normal suspend runs is held: the
 * suspend waits for it, so it goes then whatever the limits say (charged),
 * but a submitter cannot cycle its queue at the disk's speed meanwhile.
 */
#define SLUICE_SUSPEND_HOLD_NS (100ULL * NSEC_PER_MSEC)

/*
 * A bio of v's goes to its group or pool, which may hold it: a probe may be
 * due for it in a second. Marked before it is handed over (once a group or
 * pool holds it, it may be sent and completed, and freed, at any moment)
 * and counted until it completes or goes back to dm; unmarked at once if
 * it was not held. now is the caller's clock, read for the bio already.
 */
static void sluice_mark_downstream(struct sluice_vol *v, struct sluice_io *io,
				   u64 now)
{
	if (io->end & SLUICE_END_DOWNSTREAM)
		return;
	io->end |= SLUICE_END_DOWNSTREAM;
	if (atomic_inc_return(&v->nr_downstream) == 1) {
		WRITE_ONCE(v->downstream_since, now);
		if (!timer_pending(&v->probe_timer))
			mod_timer(&v->probe_timer,
				  jiffies + nsecs_to_jiffies(SLUICE_PROBE_AFTER_NS) + 1);
	}
}

static void sluice_done_downstream(struct sluice_vol *v, struct sluice_io *io)
{
	if (io->end & SLUICE_END_DOWNSTREAM) {
		io->end &= ~SLUICE_END_DOWNSTREAM;
		atomic_dec(&v->nr_downstream);
	}
}

/*
 * Send released bios on: through their group and pool, through their pool
 * only (from the group's stage), or to the device at once (a suspend must
 * not wait for the group's limits or the pool's turn; the group is charged).
 */
void sluice_submit_list(struct bio_list *bl, enum sluice_next next)
{
	struct bio *bio;

	while ((bio = bio_list_pop(bl))) {
		struct sluice_io *io = sluice_bio_io(bio);
		struct sluice_vol *v = io->vol;
		bool was = io->end & SLUICE_END_DOWNSTREAM;
		u64 now = ktime_get_ns();

		/* the submitter waits no longer: a full device may make it wait */
		bio->bi_opf &= ~REQ_NOWAIT;
		if (io->group && !io->group_passed) {
			if (next == SLUICE_TO_DEVICE) {
				sluice_group_charge(io->group, io);
			} else {
				sluice_mark_downstream(v, io, now);
				/* held: the group has it, io is not ours to touch */
				if (!sluice_group_admit(io->group, io, now))
					continue;
			}
		}
		if (next != SLUICE_TO_DEVICE && io->pool_sc) {
			struct sluice_c *sc = io->pool_sc;

			io->end |= SLUICE_END_POOLED;
			sluice_mark_downstream(v, io, now);
			if (!sc->policy->admit(sc->member, bio, &io->pool, now))
				continue;
		}
		if (!was)
			sluice_done_downstream(v, io);
		dm_submit_bio_remap(bio, NULL);
		/*
		 * Lifting a limit can release tens of thousands at once; but
		 * a suspend, which passes new bios while it runs, must not
		 * hand the CPU to their submitters.
		 */
		if (next != SLUICE_TO_DEVICE)
			cond_resched();
	}
}

/*
 * Suspends that do not tell the target. dm-stats (@stats_create) and other
 * internal suspends stop dm sending new bios to the target and wait for
 * every bio in flight to complete, without calling presuspend; a held bio
 * is in flight, so with a backlog behind a low limit the wait took as long
 * as the backlog (minutes, in D state, holding the device's suspend lock).
 *
 * The target learns of such a suspend by asking: while it has held a bio
 * for SLUICE_PROBE_AFTER_NS, it sends, at most once that often, a probe to
 * its own device, a one-block read-ahead read of the range's first sector
 * carrying sluice_probe_page. While dm is holding new bios back it fails a
 * read-ahead bio at once; otherwise the probe reaches this target's map,
 * which knows it by its page and completes it there, reading nothing. A
 * failed probe makes the volume release everything it holds, charged, as a
 * suspend does: the debt keeps the average rate, and the suspend completes
 * within about a second of its start.
 */

/* dm's clone shares the probe's bvecs, but not its bi_vcnt */
static bool sluice_is_probe(struct bio *bio)
{
	return bio_op(bio) == REQ_OP_READ && (bio->bi_opf & REQ_RAHEAD) &&
	       bio->bi_iter.bi_size && bio_page(bio) == sluice_probe_page;
}

/* The last touch of v by a probe. */
static void sluice_probe_done(struct sluice_vol *v)
{
	/* pairs with the acquire in sluice_vol_put() */
	smp_store_release(&v->probe_inflight, false);
	wake_up_var(&v->probe_inflight);
}

/*
 * Whether dm holds bios back is all the probe's end tells; it may run in
 * interrupt context, so it takes no lock: the worker reads the flag and
 * decides what next.
 */
static void sluice_probe_end_io(struct bio *bio)
{
	struct sluice_vol *v = bio->bi_private;

	WRITE_ONCE(v->probe_blocked, bio->bi_status != BLK_STS_OK);
	bio_uninit(bio);
	queue_work(sluice_wq, &v->s.dispatch);
	sluice_probe_done(v);
}

/*
 * Under v->s.lock: whether a probe is due now. A bio held for a second, by
 * this volume's limits or beyond them by its group or pool, makes it due.
 */
static bool __sluice_probe_due(struct sluice_vol *v, u64 now)
{
	u64 oldest = U64_MAX;
	struct sluice_io *io;
	int d;

	if (v->probe_inflight || !v->may_hold || now - v->probe_ns < SLUICE_PROBE_AFTER_NS)
		return false;
	for (d = 0; d < 2; d++) {
		if (list_empty(&v->s.queue[d]))
			continue;
		io = list_first_entry(&v->s.queue[d], struct sluice_io, entry);
		oldest = min(oldest, io->arrival_ns);
	}
	if (atomic_read(&v->nr_downstream))
		oldest = min(oldest, READ_ONCE(v->downstream_since));
	return oldest != U64_MAX && now - oldest >= SLUICE_PROBE_AFTER_NS;
}

/*
 * Its own work item, on a workqueue without a rescuer: the dispatch worker,
 * which frees what dm's mempools hold, must never wait on them for a probe.
 * The bio is the volume's own: nothing to allocate.
 */
static void sluice_probe_fn(struct work_struct *w)
{
	struct sluice_vol *v = container_of(w, struct sluice_vol, probe_work);
	struct block_device *bdev = dm_disk(v->md)->part0;
	unsigned int lbs = bdev_logical_block_size(bdev);
	struct bio *bio = &v->probe_bio;

	if (lbs > PAGE_SIZE) {
		sluice_probe_done(v);
		return;
	}
	bio_init(bio, bdev, &v->probe_bvec, 1, REQ_OP_READ | REQ_RAHEAD);
	bio->bi_iter.bi_sector = v->begin;
	__bio_add_page(bio, sluice_probe_page, lbs, 0);
	bio->bi_end_io = sluice_probe_end_io;
	bio->bi_private = v;
	submit_bio_noacct(bio);
}

/*
 * Take back onto out what the volume's group and pool member hold for it,
 * oldest first (what the pool holds passed the group before what the group
 * holds); close both, until sluice_open(), if the volume is suspending.
 */
static void sluice_take_back(struct sluice_c *sc, struct bio_list *out, bool close)
{
	struct bio *bio;

	if (sc->member) {
		sc->policy->drain(sc->member, out);
		if (!close)
			sc->policy->reopen(sc->member);
		bio_list_for_each(bio, out)
			sluice_bio_io(bio)->end &= ~SLUICE_END_POOLED;
	}
	if (sc->group)
		sluice_group_drain(sc->group, sc->vol, out, close);
}

/*
 * A probe found dm holding bios back: what the volume's group and pool
 * member hold goes too, at once (they stay open: no resume follows an
 * internal suspend).
 */
static void sluice_release_blocked(struct sluice_vol *v)
{
	struct bio_list out = BIO_EMPTY_LIST;
	struct sluice_c *sc;

	spin_lock(&v->s.lock);
	sc = v->live_sc;
	spin_unlock(&v->s.lock);
	if (!sc)
		return;
	sluice_take_back(sc, &out, false);
	sluice_submit_list(&out, SLUICE_TO_DEVICE);
}

static void sluice_probe_timer_fn(struct timer_list *t)
{
	struct sluice_vol *v = from_timer(v, t, probe_timer);

	queue_work(sluice_wq, &v->s.dispatch);
}

static void sluice_dispatch_fn(struct work_struct *w)
{
	struct sluice_vol *v = container_of(w, struct sluice_vol, s.dispatch);
	struct bio_list out = BIO_EMPTY_LIST;
	u64 now = ktime_get_ns();
	bool probe, blocked, suspending;

	spin_lock(&v->s.lock);
	/*
	 * An answer counts only for a probe decided on since the volume last
	 * opened: one sent before, or across, a suspend of its own may have
	 * found that suspend blocking, and is no news after the resume.
	 */
	blocked = xchg(&v->probe_blocked, 0) && v->may_hold &&
		  (s64)(v->probe_ns - v->open_ns) >= 0;
	suspending = !v->may_hold;
	__sluice_stage_release(&v->s, &v->st, &out, now,
			       blocked ? SLUICE_ALL : SLUICE_DUE,
			       suspending ? SLUICE_SUSPEND_HOLD_NS : U64_MAX);
	probe = !blocked && __sluice_probe_due(v, now);
	if (probe) {
		v->probe_inflight = true;
		v->probe_ns = now;
	} else if ((v->s.nr_queued || atomic_read(&v->nr_downstream)) &&
		   !v->probe_inflight && !suspending) {
		/* come back to probe even if the limits hold everything longer */
		mod_timer(&v->probe_timer, jiffies + 1 +
			  nsecs_to_jiffies(max(now, v->probe_ns) + SLUICE_PROBE_AFTER_NS - now));
	}
	spin_unlock(&v->s.lock);
	if (blocked)
		sluice_release_blocked(v);
	/* blocked or suspending: to the device now, past group and pool */
	sluice_submit_list(&out, blocked || suspending ? SLUICE_TO_DEVICE : SLUICE_TO_GROUP);
	if (probe)
		queue_work(system_unbound_wq, &v->probe_work);
}

/*
 * dirty_strict=1 holds the device's dirty and writeback pages to its bdi's
 * own share of the dirty threshold (its max_ratio) even while the global
 * count is below the free-run point, where the kernel otherwise holds no
 * one: BDI_CAP_STRICTLIMIT, which FUSE sets on its bdis and which 6.2 offers
 * as /sys/class/bdi/<dev>/strict_limit. A throttled volume's writeback waits
 * in its queue; without this it can pin half the dirty threshold and stall
 * every other writer.
 *
 * The capability belongs to the dm device, the setting to each of its
 * sluice ranges: the device is strict while any range's live table asks for
 * it. It is worked out again when a table goes live, when a set message
 * changes it and when a range's last table goes (a reload to another target
 * type, or a removal), so that it never outlives the table that set it.
 */
static void __sluice_dirty_strict_apply(struct mapped_device *md)
{
	struct backing_dev_info *bdi = dm_disk(md)->bdi;
	unsigned int caps = READ_ONCE(bdi->capabilities);
	struct sluice_vol *v;
	bool on = false;

	lockdep_assert_held(&sluice_vols_lock);
	hash_for_each_possible(sluice_vols, v, node, disk_devt(dm_disk(md)))
		if (v->md == md && v->dirty_strict)
			on = true;
	if (on)
		caps |= BDI_CAP_STRICTLIMIT;
	else
		caps &= ~BDI_CAP_STRICTLIMIT;
	WRITE_ONCE(bdi->capabilities, caps);
}

static void sluice_dirty_strict(struct sluice_vol *v, bool on)
{
	mutex_lock(&sluice_vols_lock);
	v->dirty_strict = on;
	__sluice_dirty_strict_apply(v->md);
	mutex_unlock(&sluice_vols_lock);
}

/* Whether other is a member of pool directly over or under the new table. */
static bool sluice_sc_nests(struct sluice_c *other, struct sluice_vol *v,
			    const char *pool, dev_t below, dev_t self)
{
	return other && other->member && !strcmp(other->cfg.pool, pool) &&
	       (v->devt == below || other->dev->bdev->bd_dev == self);
}

/*
 * Whether v's live table, or the one that passed its check at preresume and
 * is about to be, is such a member; the caller holds sluice_vols_lock.
 */
static bool sluice_vol_in_pool(struct sluice_vol *v, const char *pool, dev_t below, dev_t self)
{
	bool in;

	/*
	 * Neither table is destroyed before it is cleared from v; a set
	 * message rewrites a table's cfg under s.lock.
	 */
	spin_lock(&v->s.lock);
	in = sluice_sc_nests(v->checked_sc, v, pool, below, self) ||
	     sluice_sc_nests(v->live_sc, v, pool, below, self);
	spin_unlock(&v->s.lock);
	return in;
}

/*
 * Whether sc, about to join its pool, would sit directly over, or directly
 * under, a live member of the same pool: the upper member's bio would hold
 * a slot while its clone below waited for one, and a pool full of such bios
 * deadlocks (the stall detector would only break it after a second each
 * time). Refused at table load, and again at resume, where a table that
 * passes is recorded (checked_sc) before either is live. A map between the
 * two (a linear device, say) hides them from each other, as a target cannot
 * see into another target's table: the pool then relies on the detector.
 *
 * With claim (at preresume), a table that does not nest is recorded as
 * checked in the same critical section.
 */
static bool sluice_nests_in_pool(struct sluice_c *sc, struct mapped_device *md, bool claim)
{
	struct block_device *whole = dm_disk(md)->part0;
	dev_t self = disk_devt(dm_disk(md)), below = sc->dev->bdev->bd_dev;
	struct sluice_vol *v;
	bool nests = false;
	int bkt;

	mutex_lock(&sluice_vols_lock);
	/* directly over a member: the one below is found by its number */
	hash_for_each_possible(sluice_vols, v, node, below) {
		nests = sluice_vol_in_pool(v, sc->cfg.pool, below, self);
		if (nests)
			goto out;
	}
	/*
	 * Directly under one: a device stacked on this one holds it, so one
	 * that nobody holds (every new device) is under nothing.
	 */
	if (!READ_ONCE(whole->bd_holders))
		goto out;
	hash_for_each(sluice_vols, bkt, v, node) {
		nests = sluice_vol_in_pool(v, sc->cfg.pool, below, self);
		if (nests)
			break;
	}
out:
	if (claim && !nests)
		sc->vol->checked_sc = sc;
	mutex_unlock(&sluice_vols_lock);
	return nests;
}

/* sc is suspended or going away: it no longer counts for another's check */
static void sluice_unclaim(struct sluice_c *sc)
{
	mutex_lock(&sluice_vols_lock);
	if (sc->vol->checked_sc == sc)
		sc->vol->checked_sc = NULL;
	mutex_unlock(&sluice_vols_lock);
}

static struct sluice_vol *sluice_vol_get(struct mapped_device *md, sector_t begin)
{
	dev_t devt = disk_devt(dm_disk(md));
	struct sluice_vol *v;

	mutex_lock(&sluice_vols_lock);
	hash_for_each_possible(sluice_vols, v, node, devt) {
		if (v->md == md && v->begin == begin) {
			refcount_inc(&v->ref);
			goto out;
		}
	}
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		goto out;
	if (sluice_stats_init(&v->st)) {
		kfree(v);
		v = NULL;
		goto out;
	}
	if (sluice_stage_batch_init(&v->s)) {
		sluice_stats_free(&v->st);
		kfree(v);
		v = NULL;
		goto out;
	}
	v->devt = devt;
	v->md = md;
	v->begin = begin;
	refcount_set(&v->ref, 1);
	mutex_init(&v->cfg_lock);
	sluice_stage_init(&v->s, sluice_dispatch_fn);
	INIT_WORK(&v->probe_work, sluice_probe_fn);
	timer_setup(&v->probe_timer, sluice_probe_timer_fn, 0);
	atomic_set(&v->nr_downstream, 0);
	v->may_hold = true;
	hash_add(sluice_vols, &v->node, devt);
out:
	mutex_unlock(&sluice_vols_lock);
	return v;
}

static void sluice_vol_put(struct sluice_vol *v)
{
	mutex_lock(&sluice_vols_lock);
	if (!refcount_dec_and_test(&v->ref)) {
		mutex_unlock(&sluice_vols_lock);
		return;
	}
	hash_del(&v->node);
	if (v->dirty_strict)
		__sluice_dirty_strict_apply(v->md);
	mutex_unlock(&sluice_vols_lock);

	/* a probe queued but not sent never will be */
	if (cancel_work_sync(&v->probe_work))
		WRITE_ONCE(v->probe_inflight, false);
	/* pairs with the release in the probe's end_io: it is done with v */
	wait_var_event(&v->probe_inflight, !smp_load_acquire(&v->probe_inflight));
	/* with may_hold false nothing arms the probe timer again */
	timer_delete_sync(&v->probe_timer);
	/* presuspend released every held bio before the last table went */
	sluice_stage_stop(&v->s);
	sluice_stats_free(&v->st);
	kfree(v);
}

/* Make cfg the volume's limits, carrying the buckets' levels over. */
static void sluice_install(struct sluice_vol *v, const struct sl_config *cfg)
{
	struct sl_limits lim;

	sl_limits_from_config(&lim, cfg);
	sluice_stage_install(&v->s, &lim);
}

static void sluice_member_params(struct sluice_member_params *mp,
				 const struct sl_config *cfg)
{
	mp->weight = cfg->weight;
	mp->reserve_iops = cfg->reserve_iops;
	mp->reserve_bps = cfg->reserve_bps;
	mp->latency_us = cfg->latency_us;
}

static void sluice_dtr(struct dm_target *ti)
{
	struct sluice_c *sc = ti->private;

	if (sc->member)
		sc->policy->detach(sc->member);
	if (sc->policy)
		sluice_policy_put(sc->policy);
	if (sc->group)
		sluice_group_put(sc->group);
	if (sc->vol) {
		sluice_unclaim(sc);
		sluice_vol_put(sc->vol);
	}
	if (sc->dev)
		dm_put_device(ti, sc->dev);
	kfree(sc);
}

/*
 * Construct a sluice mapping:
 *   <dev> <offset> <#args> [key=value ...]
 *
 * <offset> in sectors. The keys, all optional (0 = unlimited):
 *   bps rbps wbps iops riops wiops       limits in bytes/s and IO/s
 *   bps_max ... wiops_max                burst rates
 *   burst_s                              burst length in seconds
 *   iops_size                            an IO of n * iops_size bytes is n IOs
 *   pool weight reserve_iops reserve_bps sharing a pool (weight module)
 *   dirty_strict                         0 or 1: the bdi's strict dirty limit
 *   group group_bps ... group_wiops_max group_burst_s
 *                                        a shared limit group and its limits
 *   tenant                               a label reported back, unused here
 */
static int sluice_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct sluice_c *sc;
	unsigned long long tmp;
	unsigned int nargs;
	const char *bad = NULL, *err = NULL;
	char dummy;
	int ret;

	if (argc < 3) {
		ti->error = "Invalid argument count: need <dev> <offset> <#args>";
		return -EINVAL;
	}
	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc) {
		ti->error = "Cannot allocate context";
		return -ENOMEM;
	}
	ti->private = sc;

	if (sscanf(argv[1], "%llu%c", &tmp, &dummy) != 1 || tmp != (sector_t)tmp) {
		ti->error = "Invalid device offset";
		ret = -EINVAL;
		goto bad;
	}
	sc->start = tmp;
	if (kstrtouint(argv[2], 10, &nargs)) {
		ti->error = "Invalid #args";
		ret = -EINVAL;
		goto bad;
	}
	if (nargs != argc - 3) {
		ti->error = "#args does not match the number of arguments";
		ret = -EINVAL;
		goto bad;
	}
	sl_config_init(&sc->cfg);
	if (sl_config_parse(&sc->cfg, SL_PARSE_TABLE, nargs, argv + 3,
			    &err, &bad)) {
		/* err is a string literal, as dm expects of ti->error */
		ti->error = (char *)err;
		if (bad)
			DMERR("rejected argument '%s': %s", bad, err);
		ret = -EINVAL;
		goto bad;
	}
	if (sc->cfg.pool[0]) {
		struct sluice_member_params mp;

		sc->policy = sluice_policy_get("weight");
		if (!sc->policy) {
			ti->error = "pool: no weight policy module is available";
			ret = -EINVAL;
			goto bad;
		}
		sluice_member_params(&mp, &sc->cfg);
		sc->member = sc->policy->attach(sc->cfg.pool, &mp, &err);
		if (!sc->member) {
			ti->error = (char *)err;
			ret = -ENOMEM;
			goto bad;
		}
	}
	if (sc->cfg.group[0]) {
		sc->group = sluice_group_get(sc->cfg.group);
		if (!sc->group) {
			ti->error = "group: cannot allocate group";
			ret = -ENOMEM;
			goto bad;
		}
	}
	sc->plain = !sc->member && !sc->group;
	if (sc->member && sc->policy->lane)
		sc->lane = sc->policy->lane(sc->member);
	sc->laned = sc->lane && !sc->group;
	ret = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &sc->dev);
	if (ret) {
		ti->error = "Device lookup failed";
		goto bad;
	}
	if (sc->member && sluice_nests_in_pool(sc, dm_table_get_md(ti->table), false)) {
		ti->error = "pool: the device below or above is a member of the same pool";
		ret = -EINVAL;
		goto bad;
	}
	sc->vol = sluice_vol_get(dm_table_get_md(ti->table), ti->begin);
	if (!sc->vol) {
		ti->error = "Cannot allocate volume state";
		ret = -ENOMEM;
		goto bad;
	}

	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	ti->accounts_remapped_io = true;
	ti->per_io_data_size = sizeof(struct sluice_io);
	return 0;

bad:
	sluice_dtr(ti);
	return ret;
}

/* The direction a bio of op is counted and limited in. */
static inline int sluice_op_dir(enum req_op op)
{
	return op_is_write(op) ? SL_WRITE : SL_READ;
}

/* A write of page-cache pages is writeback; direct I/O carries user pages. */
static bool sluice_is_writeback(struct bio *bio)
{
	struct folio *folio;

	if (bio->bi_opf & REQ_BACKGROUND)
		return true;
	if (!bio_has_data(bio))
		return false;
	folio = page_folio(bio_page(bio));
	return !folio_test_anon(folio) && folio_mapping(folio);
}

/* What a lane step left to the pool's lock (see sluice-lane.h). */
static noinline void sluice_lane_slow(struct sluice_c *sc,
				      enum sluice_lane_step step, u64 start,
				      u64 svc)
{
	sc->policy->lane_slow(sc->member, step, start, svc);
}

/*
 * Whether a bio of sc's passes its pool's lane; if not, the pool's admit()
 * is next. A slot it took as the lane closed goes back.
 */
static __always_inline bool sluice_lane_passes(struct sluice_c *sc)
{
	enum sluice_lane_step step = sluice_lane_pass(sc->lane);

	if (likely(step == SLUICE_LANE_OK))
		return true;
	if (step == SLUICE_LANE_RACED)
		sluice_lane_slow(sc, step, 0, 0);
	return false;
}

/*
 * A bio of sc's that passed the lane completed: its slot back, counted.
 * start: when it was sent if it is timed (svc its service time), else 0.
 */
static __always_inline void sluice_lane_end(struct sluice_c *sc, u64 start,
					    u64 svc)
{
	enum sluice_lane_step step = sluice_lane_done(sc->lane, true, false,
						       start != 0, 0, svc);

	if (unlikely(step != SLUICE_LANE_OK))
		sluice_lane_slow(sc, step, start, svc);
}

/* A bio within its limits goes to its pool, if it has one, else on. */
static int sluice_pass(struct sluice_c *sc, struct sluice_io *io,
		       struct bio *bio)
{
	if (!sc->member)
		return DM_MAPIO_REMAPPED;
	if (sc->lane && sluice_lane_passes(sc)) {
		io->end |= SLUICE_END_LANE;
		return DM_MAPIO_REMAPPED;
	}
	io->end |= SLUICE_END_POOLED;
	sluice_mark_downstream(sc->vol, io, io->start_ns);
	if (!sc->policy->admit(sc->member, bio, &io->pool, io->start_ns))
		return DM_MAPIO_SUBMITTED;
	sluice_done_downstream(sc->vol, io);
	return DM_MAPIO_REMAPPED;
}

/* A bio within its volume's limits: its group's next, then its pool. */
static int sluice_next(struct sluice_c *sc, struct sluice_io *io,
		       struct bio *bio)
{
	if (io->group) {
		sluice_mark_downstream(sc->vol, io, io->start_ns);
		if (!sluice_group_admit(io->group, io, io->start_ns))
			return DM_MAPIO_SUBMITTED;
		sluice_done_downstream(sc->vol, io);
	}
	return sluice_pass(sc, io, bio);
}

/*
 * Take back what map counted for a bio that dm will submit again, unless
 * the counters were reset since (they would go below zero): under s.lock,
 * as the reset is.
 */
static void sluice_uncount(struct sluice_vol *v, struct sluice_io *io)
{
	spin_lock(&v->s.lock);
	if (io->stats_gen != (u32)atomic_read(&v->stats_gen)) {
		spin_unlock(&v->s.lock);
		return;
	}
	sluice_count(&v->st, ios[io->dir], -1);
	if (io->throttled)
		atomic64_dec(&v->st.throttled[io->dir]);
	sluice_stats_unwait(&v->st, io, SLUICE_CHARGED_VOL);
	if (io->count_bytes)
		sluice_count(&v->st, bytes[io->dir], -(u64)io->bytes);
	else
		atomic64_dec(&v->st.discards);
	if (io->wb)
		sluice_count(&v->st, wb_bytes, -(u64)io->bytes);
	spin_unlock(&v->s.lock);
}

static void sluice_uncount_all(struct sluice_vol *v, struct sluice_io *io)
{
	sluice_uncount(v, io);
	if (io->group)
		sluice_group_count(io->group, io, -1);
}

/*
 * Whether the bio that makes this CPU's count of a direction's bios n is
 * in the latency sample: the first, so that a volume of few bios is timed
 * at all, then one in SLUICE_LAT_SAMPLE.
 */
static __always_inline bool sluice_lat_sampled(u64 n)
{
	return (n & (SLUICE_LAT_SAMPLE - 1)) == 1;
}

/*
 * Count a bio with data in its volume's counters; whether it is the one in
 * SLUICE_LAT_SAMPLE to time. With io, keep what a bio that may be taken
 * back needs to be uncounted.
 */
static __always_inline bool sluice_count_in(struct sluice_stats *st,
					    struct bio *bio, enum req_op op,
					    int d, struct sluice_io *io)
{
	/*
	 * Write-zeroes and secure erase make the device write their whole
	 * range: charged their size, as blk-throttle does. A discard may
	 * write nothing: one IO, no bytes.
	 */
	bool count_bytes = op != REQ_OP_DISCARD;
	u32 bytes = count_bytes ? bio->bi_iter.bi_size : 0;
	bool wb = d == SL_WRITE && count_bytes && sluice_is_writeback(bio);
	u64 n;

	if (io) {
		io->count_bytes = count_bytes;
		io->bytes = bytes;
		io->wb = wb;
	}
	n = this_cpu_add_return(st->pcpu->ios[d], 1);
	if (likely(count_bytes))
		sluice_count(st, bytes[d], bytes);
	else
		atomic64_inc(&st->discards);
	if (wb)
		sluice_count(st, wb_bytes, bytes);
	return sluice_lat_sampled(n);
}

/* A bio with data that a limit, a group or a pool may hold. */
static noinline int sluice_map_held(struct dm_target *ti, struct bio *bio)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;
	struct sluice_io *io = sluice_bio_io(bio);
	enum req_op op = bio_op(bio);
	int d = sluice_op_dir(op);
	bool suspending;
	u64 now, wait;

	io->dir = d;
	/* before it counts: a reset since then leaves it counted */
	io->stats_gen = atomic_read(&v->stats_gen);
	io->end = SLUICE_END_COUNTED;
	if (sluice_count_in(&v->st, bio, op, d, io))
		io->end |= SLUICE_END_TIMED;
	io->start_ns = ktime_get_ns();
	io->throttled = false;
	io->group_passed = false;
	io->nowait = bio->bi_opf & REQ_NOWAIT;
	io->charged = 0;
	io->waited = 0;
	io->group_throttled = false;
	io->pool_sc = sc->member ? sc : NULL;
	io->vol = v;
	io->group = sc->group;
	if (io->group)
		sluice_group_count(io->group, io, 1);

	if (!READ_ONCE(v->s.limited) && list_empty_careful(&v->s.queue[d]))
		return sluice_next(sc, io, bio);

	spin_lock(&v->s.lock);
	/* read before the lock: the buckets take a time just past as well */
	now = io->start_ns;
	/* batch mode ended since this CPU last passed a bio in it */
	if (unlikely(sluice_stage_cpu_unfolded(&v->s)))
		__sluice_stage_fold(&v->s, now);
	/*
	 * Suspending, with noflush: dm takes the bio back and submits it
	 * again after the resume, when the limits hold it. A normal suspend
	 * waits for it: the limits hold it SLUICE_SUSPEND_HOLD_NS at most,
	 * and neither the group nor the pool holds it; it is charged (debt).
	 * So does a noflush suspend for a REQ_NOWAIT bio (sluice_presuspend()).
	 */
	suspending = !v->may_hold;
	if (suspending && !io->nowait && dm_noflush_suspending(ti)) {
		spin_unlock(&v->s.lock);
		sluice_uncount_all(v, io);
		return DM_MAPIO_REQUEUE;
	}
	wait = __sluice_stage_admit(&v->s, io, now);
	if (!wait) {
		/* a group's or a pool's bios stay on this path */
		if (!suspending && sc->plain)
			__sluice_stage_try_batch(&v->s, now);
		spin_unlock(&v->s.lock);
		if (!suspending)
			return sluice_next(sc, io, bio);
		if (io->group)
			sluice_group_charge(io->group, io);
		io->pool_sc = NULL;
		return DM_MAPIO_REMAPPED;
	}
	/* woken in time for the suspend probe, or for the suspend's bound */
	if (wait != U64_MAX)
		__sluice_stage_arm(&v->s, now + min(wait, suspending ? SLUICE_SUSPEND_HOLD_NS :
							       SLUICE_PROBE_AFTER_NS));
	io->throttled = true;
	__sluice_stage_hold(&v->s, io, now);
	atomic64_inc(&v->st.throttled[d]);
	spin_unlock(&v->s.lock);
	return DM_MAPIO_SUBMITTED;
}

/* Our own probe: dm is not holding bios back (see sluice_is_probe()). */
static noinline int sluice_map_probe(struct bio *bio)
{
	sluice_bio_io(bio)->end = 0;
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;
}

/* An empty flush moves no data and is never held. */
static noinline int sluice_map_flush(struct sluice_c *sc, struct bio *bio)
{
	sluice_bio_io(bio)->end = 0;
	sluice_count(&sc->vol->st, flushes, 1);
	return DM_MAPIO_REMAPPED;
}

/* One in SLUICE_LAT_SAMPLE unlimited bios is timed. */
static noinline int sluice_map_timed(struct bio *bio, int d)
{
	struct sluice_io *io = sluice_bio_io(bio);

	io->dir = d;
	io->end = SLUICE_END_COUNTED | SLUICE_END_TIMED;
	io->start_ns = ktime_get_ns();
	return DM_MAPIO_REMAPPED;
}

/*
 * A bio nothing may hold (unlimited, or in batch mode): counted, and marked
 * with its volume in bi_private, which dm leaves NULL in a clone it maps
 * and does not use, so that end_io knows it without the per-bio data; or,
 * one in SLUICE_LAT_SAMPLE, timed.
 */
static __always_inline int sluice_map_unheld(struct sluice_vol *v,
					     struct bio *bio, enum req_op op,
					     int d)
{
	if (unlikely(sluice_count_in(&v->st, bio, op, d, NULL)))
		return sluice_map_timed(bio, d);
	bio->bi_private = v;
	return DM_MAPIO_REMAPPED;
}

/* A CPU passed its share of a batch: charge every CPU's. */
static noinline void sluice_stage_fold_now(struct sluice_stage *s)
{
	spin_lock(&s->lock);
	__sluice_stage_fold(s, ktime_get_ns());
	spin_unlock(&s->lock);
}

/* A bio of the lane in the latency sample: timed, its pool's times too. */
static noinline int sluice_map_lane_timed(struct bio *bio, int d)
{
	struct sluice_io *io = sluice_bio_io(bio);

	io->dir = d;
	io->end = SLUICE_END_COUNTED | SLUICE_END_TIMED | SLUICE_END_LANE;
	io->start_ns = ktime_get_ns();
	return DM_MAPIO_REMAPPED;
}

/*
 * A bio of an unlimited volume in a pool (and no group), nothing held: it
 * passes the pool's lane if that is open, counted as the unlimited path
 * counts, and marked in bi_private as that path marks its bios, with
 * SLUICE_PRIV_LANE, so that end_io gives its slot back without the per-bio
 * data; one of the latency sample is timed. Else the path that may hold it.
 */
static noinline int sluice_map_pooled(struct dm_target *ti, struct bio *bio,
				      enum req_op op, int d)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;

	if (!sluice_lane_passes(sc))
		return sluice_map_held(ti, bio);
	if (unlikely(sluice_count_in(&v->st, bio, op, d, NULL)))
		return sluice_map_lane_timed(bio, d);
	bio->bi_private = (void *)((unsigned long)v | SLUICE_PRIV_LANE);
	return DM_MAPIO_REMAPPED;
}

/*
 * A bio of a volume with a limit in force or bios held: passed without the
 * lock while its stage is in batch mode (see sluice-stage.c), else on the
 * locked path.
 */
static noinline int sluice_map_limited(struct dm_target *ti, struct bio *bio,
				       int d)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;
	struct sluice_stage *s = &v->s;
	enum req_op op = bio_op(bio);
	u32 bytes = bio->bi_iter.bi_size;
	u64 n, by;

	/* a group or pool, and a limit in force or bios held */
	if (!sc->plain)
		return sluice_map_held(ti, bio);
	/* batch mode ends before a bio is held: no queue to pass */
	if (!READ_ONCE(s->batch) || op == REQ_OP_DISCARD ||
	    bytes > READ_ONCE(s->batch_max))
		return sluice_map_held(ti, bio);
	n = this_cpu_add_return(s->pcpu->ios[d], 1);
	by = this_cpu_add_return(s->pcpu->bytes[d], bytes);
	/* another CPU's folded, after a migration: this CPU's next bio folds */
	if (unlikely(n - this_cpu_read(s->pcpu->folded_ios[d]) >= SLUICE_BATCH_IOS ||
		     by - this_cpu_read(s->pcpu->folded_bytes[d]) >= SLUICE_BATCH_BYTES))
		sluice_stage_fold_now(s);
	return sluice_map_unheld(v, bio, op, d);
}

/*
 * The unlimited path is the one most bios take, and is kept to what dm-linear
 * does and the counting (sluice_map_unheld()); the rest is out of line.
 */
static int sluice_map(struct dm_target *ti, struct bio *bio)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v;
	enum req_op op;
	int d;

	if (unlikely(sluice_is_probe(bio)))
		return sluice_map_probe(bio);
	bio_set_dev(bio, sc->dev->bdev);
	if (unlikely(!bio_sectors(bio)))
		return sluice_map_flush(sc, bio);
	bio->bi_iter.bi_sector = sc->start +
		dm_target_offset(ti, bio->bi_iter.bi_sector);
	v = sc->vol;
	op = bio_op(bio);
	d = sluice_op_dir(op);
	if (unlikely(READ_ONCE(v->s.limited) ||
		     !list_empty_careful(&v->s.queue[d])))
		return sluice_map_limited(ti, bio, d);
	/* no limit in force, no group, no pool: nothing may hold it */
	if (likely(sc->plain))
		return sluice_map_unheld(v, bio, op, d);
	/* an unlimited volume in a pool with a lane, and no group */
	if (sc->laned)
		return sluice_map_pooled(ti, bio, op, d);
	return sluice_map_held(ti, bio);
}

/* A bio held, pooled, timed or without data. */
static noinline int sluice_end_io_more(struct dm_target *ti, struct bio *bio,
				       blk_status_t error)
{
	struct sluice_c *sc = ti->private;
	struct sluice_io *io = sluice_bio_io(bio);
	struct sluice_stats *st;
	u64 now = 0, lat;

	if (io->end & SLUICE_END_POOLED) {
		now = ktime_get_ns();
		sc->policy->complete(sc->member, bio, &io->pool, now);
	} else if (io->end & SLUICE_END_LANE) {
		/* a bio of the lane is timed in the sample only */
		if (io->end & SLUICE_END_TIMED) {
			u64 svc;

			now = ktime_get_ns();
			svc = now - io->start_ns;
			sluice_lane_count_timed(sc->lane, 0, svc);
			sluice_lane_end(sc, io->start_ns, svc);
		} else {
			sluice_lane_end(sc, 0, 0);
		}
	}
	sluice_done_downstream(sc->vol, io);
	if (!(io->end & SLUICE_END_COUNTED) || error == BLK_STS_DM_REQUEUE)
		return DM_ENDIO_DONE;
	st = &sc->vol->st;
	if (error)
		atomic64_inc(&st->errors[io->dir]);
	if (!(io->end & SLUICE_END_TIMED))
		return DM_ENDIO_DONE;
	if (!now)
		now = ktime_get_ns();
	lat = now - io->start_ns;
	sluice_count(st, lat_ns, lat);
	sluice_count(st, lat_hist[sl_lat_bucket(lat)], 1);
	return DM_ENDIO_DONE;
}

/* An untimed bio of the lane (see sluice_map_pooled()). */
static noinline int sluice_end_io_lane(struct dm_target *ti, struct bio *bio,
				       blk_status_t error)
{
	struct sluice_c *sc = ti->private;

	sluice_lane_end(sc, 0, 0);
	if (unlikely(error) && error != BLK_STS_DM_REQUEUE)
		atomic64_inc(&sc->vol->st.errors[sluice_op_dir(bio_op(bio))]);
	return DM_ENDIO_DONE;
}

static int sluice_end_io(struct dm_target *ti, struct bio *bio,
			 blk_status_t *error)
{
	struct sluice_vol *v = bio->bi_private;

	/* the unlimited path's bio, untimed (see sluice_map()) */
	if (likely(v)) {
		if (unlikely((unsigned long)v & SLUICE_PRIV_LANE))
			return sluice_end_io_lane(ti, bio, *error);
		if (unlikely(*error) && *error != BLK_STS_DM_REQUEUE)
			atomic64_inc(&v->st.errors[sluice_op_dir(bio_op(bio))]);
		return DM_ENDIO_DONE;
	}
	return sluice_end_io_more(ti, bio, *error);
}

/*
 * Stop holding bios. On a noflush suspend the held bios go back to dm, which
 * submits them again after resume, through whatever table is live then; on
 * any other suspend they are sent on now, so that the suspend completes.
 *
 * A bio that came REQ_NOWAIT is sent on, charged, by any suspend. dm would
 * submit it again from its own worker, flag and all, and end it with EAGAIN
 * if the device is suspended by then (dm_submit_bio()); io_uring, which
 * sets the flag, retries an EAGAIN only in the submitter's own context, so
 * the application would get the error.
 */
static void sluice_presuspend(struct dm_target *ti)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;
	bool requeue = dm_noflush_suspending(ti);
	struct bio_list out = BIO_EMPTY_LIST, back = BIO_EMPTY_LIST;
	struct bio_list taken = BIO_EMPTY_LIST;
	struct bio *bio;

	/*
	 * Quiet the timer and worker while bios are still held: from the
	 * moment may_hold goes false every new bio passes (charged), and a
	 * submitter gets the CPU whenever this sleeps.
	 */
	sluice_unclaim(sc);
	hrtimer_cancel(&v->s.timer);
	cancel_work_sync(&v->s.dispatch);
	spin_lock(&v->s.lock);
	v->may_hold = false;
	v->live_sc = NULL;
	__sluice_stage_end_batch(&v->s, ktime_get_ns());
	__sluice_stage_release(&v->s, &v->st, &out, ktime_get_ns(),
			       requeue ? SLUICE_RETURN : SLUICE_ALL, U64_MAX);
	spin_unlock(&v->s.lock);
	hrtimer_cancel(&v->s.timer);
	/* a worker queued since may be admitting bios to the group: let it finish */
	cancel_work_sync(&v->s.dispatch);
	/* and bios held since then (SLUICE_SUSPEND_HOLD_NS) must still go */
	queue_work(sluice_wq, &v->s.dispatch);
	/* an internal suspend's probe answer is no longer news */
	WRITE_ONCE(v->probe_blocked, 0);
	/* what the group and pool hold passed the limits before what they hold */
	sluice_take_back(sc, &taken, true);
	if (requeue) {
		/* charged once already: they are charged again when they return */
		bio_list_for_each(bio, &taken) {
			struct sluice_io *io = sluice_bio_io(bio);

			if (io->nowait)
				continue;
			sluice_stage_refund(&v->s, io);
			if (io->group)
				sluice_group_refund(io->group, io);
		}
	}
	bio_list_merge(&taken, &out);
	out = taken;

	if (!requeue) {
		sluice_submit_list(&out, SLUICE_TO_DEVICE);
	} else {
		struct bio_list to_dev = BIO_EMPTY_LIST;

		/*
		 * dm puts each requeued bio at the head of its deferred list:
		 * hand them back newest first, to be submitted again in order.
		 */
		while ((bio = bio_list_pop(&out))) {
			if (sluice_bio_io(bio)->nowait)
				bio_list_add(&to_dev, bio);
			else
				bio_list_add_head(&back, bio);
		}
		sluice_submit_list(&to_dev, SLUICE_TO_DEVICE);
		while ((bio = bio_list_pop(&back))) {
			sluice_uncount_all(v, sluice_bio_io(bio));
			bio->bi_status = BLK_STS_DM_REQUEUE;
			bio_endio(bio);
		}
	}
	/*
	 * A probe decided on but not yet sent would reach whatever table is
	 * live next; now that nothing is held, none is needed.
	 */
	if (cancel_work_sync(&v->probe_work))
		WRITE_ONCE(v->probe_inflight, false);
}

static void sluice_open(struct sluice_c *sc)
{
	WRITE_ONCE(sc->vol->probe_blocked, 0);
	spin_lock(&sc->vol->s.lock);
	sc->vol->open_ns = ktime_get_ns();
	sc->vol->may_hold = true;
	sc->vol->live_sc = sc;
	spin_unlock(&sc->vol->s.lock);
	if (sc->member)
		sc->policy->reopen(sc->member);
	if (sc->group)
		sluice_group_open(sc->group, sc->vol);
}

static void sluice_presuspend_undo(struct dm_target *ti)
{
	sluice_open(ti->private);
}

/*
 * Nesting in a pool is refused at load; both tables loaded first get here,
 * and so do two resumed at once: the first to pass is seen by the other.
 */
static int sluice_preresume(struct dm_target *ti)
{
	struct sluice_c *sc = ti->private;

	if (sc->member && sluice_nests_in_pool(sc, dm_table_get_md(ti->table), true)) {
		DMERR("pool %s: the device below or above is a member of the same pool",
		      sc->cfg.pool);
		return -EINVAL;
	}
	return 0;
}

static void sluice_resume(struct dm_target *ti)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;

	mutex_lock(&v->cfg_lock);
	sluice_install(v, &sc->cfg);
	sluice_dirty_strict(v, sc->cfg.dirty_strict);
	/*
	 * A table that names group limits sets them for the whole group when
	 * it first goes live; later changes (a set to any member) stand.
	 */
	if (sc->group && sc->cfg.group_given) {
		sluice_group_lock(sc->group);
		sluice_group_set(sc->group, &sc->cfg);
		sluice_group_unlock(sc->group);
		spin_lock(&v->s.lock);
		sc->cfg.group_given = false;
		spin_unlock(&v->s.lock);
	}
	mutex_unlock(&v->cfg_lock);
	sluice_open(sc);
}

static void sluice_emit_info(struct sluice_stats *st, const struct sluice_pcpu_stats *c,
			     char *result, unsigned int maxlen, unsigned int nr_queued,
			     bool batch)
{
	unsigned int sz = 0;
	int i;

	DMEMIT("rd_ios=%llu rd_bytes=%llu wr_ios=%llu wr_bytes=%llu",
	       c->ios[SL_READ], c->bytes[SL_READ], c->ios[SL_WRITE], c->bytes[SL_WRITE]);
	DMEMIT(" rd_throttled=%lld wr_throttled=%lld queued=%u",
	       atomic64_read(&st->throttled[SL_READ]),
	       atomic64_read(&st->throttled[SL_WRITE]), nr_queued);
	DMEMIT(" wait_ns=%lld wait_max_ns=%lld flushes=%llu discards=%lld",
	       atomic64_read(&st->wait_ns), atomic64_read(&st->wait_max_ns),
	       c->flushes, atomic64_read(&st->discards));
	DMEMIT(" wb_bytes=%llu rd_errors=%lld wr_errors=%lld wait_hist=",
	       c->wb_bytes, atomic64_read(&st->errors[SL_READ]),
	       atomic64_read(&st->errors[SL_WRITE]));
	for (i = 0; i < SL_HIST_BUCKETS; i++)
		DMEMIT("%s%lld", i ? "," : "", atomic64_read(&st->hist[i]));
	DMEMIT(" lat_ns=%llu lat_hist=", c->lat_ns);
	for (i = 0; i < SL_LAT_BUCKETS; i++)
		DMEMIT("%s%llu", i ? "," : "", c->lat_hist[i]);
	DMEMIT(" batch=%u", batch);
}

/* The table's config as in force: its group's limits from the group. */
static void sluice_table_config(struct sluice_c *sc, struct sl_config *cfg)
{
	spin_lock(&sc->vol->s.lock);
	*cfg = sc->cfg;
	spin_unlock(&sc->vol->s.lock);
	if (sc->group)
		sluice_group_config(sc->group, cfg);
}

/*
 * "<#args> <key=value> ..." of cfg (or, for IMA, the words joined by
 * commas), formatted in place in result: a config's canonical form is too
 * long for a kernel stack. The words go after room for the count, which is
 * then put before them.
 */
static void sluice_emit_args(const struct sl_config *cfg, char *result,
			     unsigned int maxlen, unsigned int *szp, bool ima)
{
	unsigned int sz = *szp, room = ima ? 0 : 4, len;
	char count[4];
	int words;

	if (sz + room + 1 >= maxlen)
		return;
	words = sl_config_format(cfg, result + sz + room, maxlen - sz - room);
	if (words < 0) {
		result[sz] = '\0';
		return;
	}
	len = strlen(result + sz + room);
	if (ima) {
		strreplace(result + sz, ' ', ',');
		*szp = sz + len;
		return;
	}
	snprintf(count, sizeof(count), "%d%s", words, words ? " " : "");
	memmove(result + sz + strlen(count), result + sz + room, len + 1);
	memcpy(result + sz, count, strlen(count));
	*szp = sz + strlen(count) + len;
}

static void sluice_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;
	struct sluice_pcpu_stats c;
	struct sl_config cfg;
	unsigned int sz = 0, nr_queued;
	bool batch;

	switch (type) {
	case STATUSTYPE_INFO:
		/* the base a reset sets, with its generation */
		spin_lock(&v->s.lock);
		nr_queued = v->s.nr_queued;
		batch = v->s.batch;
		sluice_stats_read(&v->st, &c);
		spin_unlock(&v->s.lock);
		sluice_emit_info(&v->st, &c, result, maxlen, nr_queued, batch);
		sz = strlen(result);
		if (sc->group)
			sluice_group_status(sc->group, result, maxlen, &sz);
		if (sc->member)
			sc->policy->status(sc->member, result, maxlen, &sz);
		break;
	case STATUSTYPE_TABLE:
		sluice_table_config(sc, &cfg);
		DMEMIT("%s %llu ", sc->dev->name, (unsigned long long)sc->start);
		sluice_emit_args(&cfg, result, maxlen, &sz, false);
		break;
	case STATUSTYPE_IMA:
		sluice_table_config(sc, &cfg);
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu,limits=", sc->dev->name,
		       (unsigned long long)sc->start);
		sluice_emit_args(&cfg, result, maxlen, &sz, true);
		DMEMIT(";");
		break;
	}
}

/*
 * Messages:
 *   set <key=value> [...]   change limits live; all or nothing; group_*
 *                           keys change the volume's group's limits
 *   pool depth=<n> cost=<iops|bytes>   pool parameters (weight module)
 *   reset_stats             zero the counters
 */
static int sluice_message(struct dm_target *ti, unsigned int argc, char **argv,
			  char *result, unsigned int maxlen)
{
	struct sluice_c *sc = ti->private;
	struct sluice_vol *v = sc->vol;
	const char *err = NULL, *bad = NULL;
	struct sl_config cfg;
	bool group_given;

	if (argc >= 1 && !strcasecmp(argv[0], "reset_stats")) {
		if (argc > 1) {
			DMWARN("reset_stats: takes no arguments");
			return -EINVAL;
		}
		sluice_stats_reset(v);
		return 0;
	}
	if (argc >= 1 && !strcasecmp(argv[0], "pool")) {
		if (!sc->member) {
			DMWARN("pool: this volume is in no pool");
			return -EINVAL;
		}
		return sc->policy->message(sc->member, argc - 1, argv + 1);
	}
	if (argc < 1 || strcasecmp(argv[0], "set")) {
		DMWARN("unknown message '%s' (want set, pool or reset_stats)",
		       argc ? argv[0] : "");
		return -EINVAL;
	}
	if (argc < 2) {
		DMWARN("set: needs at least one key=value");
		return -EINVAL;
	}
	mutex_lock(&v->cfg_lock);
	cfg = sc->cfg;
	/*
	 * group_* keys change the group's limits in force, from any member:
	 * read and set under the group's lock, so that two members' sets of
	 * different group keys both take effect
	 */
	cfg.group_given = false;
	if (sc->group) {
		sluice_group_lock(sc->group);
		sluice_group_config(sc->group, &cfg);
	}
	if (sl_config_parse(&cfg, SL_PARSE_SET, argc - 1, argv + 1, &err, &bad)) {
		if (sc->group)
			sluice_group_unlock(sc->group);
		mutex_unlock(&v->cfg_lock);
		DMWARN("set rejected%s%s: %s; limits unchanged", bad ? " at " : "",
		       bad ? bad : "", err);
		return -EINVAL;
	}
	/* a set's group keys are applied once, here; the table keeps none */
	group_given = cfg.group_given;
	cfg.group_given = false;
	spin_lock(&v->s.lock);
	sc->cfg = cfg;
	spin_unlock(&v->s.lock);
	sluice_install(v, &cfg);
	sluice_dirty_strict(v, cfg.dirty_strict);
	if (sc->member) {
		struct sluice_member_params mp;

		sluice_member_params(&mp, &cfg);
		sc->policy->set(sc->member, &mp);
	}
	if (group_given)
		sluice_group_set(sc->group, &cfg);
	if (sc->group)
		sluice_group_unlock(sc->group);
	mutex_unlock(&v->cfg_lock);
	/* new limits may release held bios now, or later than armed */
	queue_work(sluice_wq, &v->s.dispatch);
	return 0;
}

static int sluice_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	struct sluice_c *sc = ti->private;

	return fn(ti, sc->dev, sc->start, ti->len, data);
}

static struct target_type sluice_target = {
	.name = "sluice",
	.version = {1, 0, 0},
	/*
	 * NOWAIT: map never sleeps; a bio over its limits is queued, not
	 * waited for, so REQ_NOWAIT submitters (io_uring) are not punted.
	 */
	.features = DM_TARGET_PASSES_INTEGRITY | DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = sluice_ctr,
	.dtr = sluice_dtr,
	.map = sluice_map,
	.end_io = sluice_end_io,
	.presuspend = sluice_presuspend,
	.presuspend_undo = sluice_presuspend_undo,
	.preresume = sluice_preresume,
	.resume = sluice_resume,
	.status = sluice_status,
	.message = sluice_message,
	.iterate_devices = sluice_iterate_devices,
};

static int __init dm_sluice_init(void)
{
	int r;

	sluice_probe_page = alloc_page(GFP_KERNEL);
	if (!sluice_probe_page)
		return -ENOMEM;
	sluice_wq = alloc_workqueue("kdmsluiced", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!sluice_wq) {
		__free_page(sluice_probe_page);
		return -ENOMEM;
	}
	r = dm_register_target(&sluice_target);
	if (r < 0) {
		DMERR("register failed %d", r);
		destroy_workqueue(sluice_wq);
		__free_page(sluice_probe_page);
	}
	return r;
}

static void __exit dm_sluice_exit(void)
{
	dm_unregister_target(&sluice_target);
	destroy_workqueue(sluice_wq);
	__free_page(sluice_probe_page);
}

module_init(dm_sluice_init);
module_exit(dm_sluice_exit);

MODULE_DESCRIPTION(DM_NAME " sluice target: bio-level I/O throttling");
MODULE_AUTHOR("The sluice developers");
MODULE_LICENSE("GPL");
