/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of dm-sluice share: the throttle stage (a set of buckets
 * with the bios held for them, in arrival order per direction), which a
 * volume and a shared limit group each have, the per-bio data, and the
 * group's interface.
 *
 * A bio passes its volume's stage, then its group's, then its pool; a stage
 * that holds it sends it on to the next from its own worker.
 */
#ifndef DM_SLUICE_TARGET_H
#define DM_SLUICE_TARGET_H

#include <linux/bio.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/device-mapper.h>

#include "sluice-core.h"
#include "sluice-policy.h"

/*
 * What every bio with data adds to: per CPU, summed at status (see
 * sluice-stats.c). All u64, in this order for the sums.
 */
struct sluice_pcpu_stats {
	u64 ios[2];
	u64 bytes[2];
	u64 wb_bytes;
	u64 flushes;
	/*
	 * Completion latency, arrival at the target to completion, of one
	 * bio with data in SLUICE_LAT_SAMPLE of each direction on each CPU:
	 * those that take this CPU's ios[dir] to one past a multiple of it.
	 */
	u64 lat_ns;
	u64 lat_hist[SL_LAT_BUCKETS];
};

/*
 * Timing a bio reads the clock twice, which costs more than the rest of an
 * unlimited bio's path together; one in this many is enough for the
 * histogram (a power of two).
 */
#define SLUICE_LAT_SAMPLE 16

/*
 * Counters, updated without the stage lock so that the unthrottled path
 * takes no lock: per CPU what every bio counts, shared what a bio that
 * waits or fails counts.
 */
struct sluice_stats {
	struct sluice_pcpu_stats __percpu *pcpu;
	struct sluice_pcpu_stats base;	/* the sums at the last reset */
	atomic64_t throttled[2];
	atomic64_t errors[2];
	atomic64_t discards;
	atomic64_t wait_ns;
	atomic64_t wait_max_ns;
	atomic64_t hist[SL_HIST_BUCKETS];
};

/* Add to this CPU's copy of a per-CPU counter; any context. */
#define sluice_count(st, field, n) this_cpu_add((st)->pcpu->field, (n))

/*
 * A CPU's bios that a volume's stage passed in batch mode (see
 * sluice-stage.c): what it passed, added by that CPU, and what of it the
 * buckets were charged, written under the stage's lock.
 */
struct sluice_batch {
	u64 ios[2], bytes[2];
	u64 folded_ios[2], folded_bytes[2];
};

/* A CPU folds its batch into the buckets after this many bios, or bytes. */
#define SLUICE_BATCH_IOS 32
#define SLUICE_BATCH_BYTES (1024 * 1024)

struct sluice_stage {
	spinlock_t lock;		/* protects everything below */
	struct list_head queue[2];	/* held bios per direction, FIFO */
	unsigned int nr_queued;
	u64 seq;			/* arrival order across directions */
	bool limited;			/* lim.any, read without the lock */
	/* batch mode: a volume's stage only (pcpu), read without the lock */
	bool batch;
	u32 batch_max;			/* the largest bio it passes */
	u64 batch_tried;		/* when the last try to enter it was */
	struct sluice_batch __percpu *pcpu;
	struct sl_limits lim;
	struct sl_throttle thr;
	struct hrtimer timer;		/* queues dispatch on sluice_wq */
	struct work_struct dispatch;
};

struct sluice_group;

/*
 * The throttle state of one mapped range of one dm device. It is shared by
 * the tables loaded for that device, so that a reload keeps the buckets and
 * the counters: reloading the same table changes nothing.
 */
struct sluice_vol {
	struct hlist_node node;		/* in sluice_vols, by devt */
	dev_t devt;			/* md's device number */
	struct mapped_device *md;
	sector_t begin;
	refcount_t ref;
	bool dirty_strict;		/* under sluice_vols_lock */

	/*
	 * Serialises what changes the limits in force (set messages and
	 * resume), so that two changes cannot lose one another's keys or
	 * leave the table disagreeing with the limits in force.
	 */
	struct mutex cfg_lock;

	/* its own limits; s.lock protects the fields below too */
	struct sluice_stage s;
	bool may_hold;			/* false while suspending */
	struct sluice_stats st;
	/* bumped by reset_stats: a bio counted before is not uncounted after */
	atomic_t stats_gen;

	/* the table live and holding bios, for its pool member and group */
	struct sluice_c *live_sc;
	/*
	 * Under sluice_vols_lock: the table that passed the nesting check at
	 * preresume, until it is suspended or destroyed. Another table's
	 * check counts it as live, so that two resumes at once cannot both
	 * pass before either is live.
	 */
	struct sluice_c *checked_sc;
	/* the suspend probe, see sluice_is_probe() */
	struct work_struct probe_work;	/* on system_unbound_wq */
	struct timer_list probe_timer;	/* queues dispatch to decide on one */
	struct bio probe_bio;		/* nothing to allocate to send one */
	struct bio_vec probe_bvec;
	u64 probe_ns;			/* when the last one was decided on */
	u64 open_ns;			/* when a table last resumed */
	bool probe_inflight;
	int probe_blocked;		/* it found dm holding new bios back */
	/* bios held beyond the limits, by the group or the pool */
	atomic_t nr_downstream;
	u64 downstream_since;		/* since it was last 0 */

	/* under its group's s.lock: drained for a suspend, hold nothing */
	bool group_closed;
};

/* One per table. */
struct sluice_c {
	struct dm_dev *dev;
	sector_t start;
	struct sluice_vol *vol;
	struct sl_config cfg;		/* under vol->s.lock once live */
	struct sluice_policy_type *policy;	/* with pool= */
	struct sluice_member *member;
	struct sluice_group *group;	/* with group= */
	bool plain;			/* neither: no stage after its own */
	struct sluice_lane_member *lane;	/* its pool's, if it has one */
	bool laned;			/* a pool with a lane, and no group */
};

/* Per-bio data. */
struct sluice_io {
	struct list_head entry;		/* in a stage's queue */
	u64 arrival_ns;			/* in that stage */
	u64 seq;
	u32 bytes;			/* counted in st.bytes */
	u32 stats_gen;			/* vol->stats_gen when counted */
	u8 end;				/* SLUICE_END_*: set in map first */
	u8 dir;
	/*
	 * The rest is set only on the path that may hold it (a limit, a
	 * group, a pool): the unlimited path's bio is never held or taken
	 * back, and no one reads them.
	 */
	bool count_bytes;		/* not a discard */
	bool wb;			/* counted in st.wb_bytes */
	bool throttled;			/* counted in st.throttled */
	bool group_passed;		/* its group has it, or charged it */
	bool nowait;			/* came REQ_NOWAIT: never back to dm */
	u8 charged;			/* SLUICE_CHARGED_*: the stages that did */
	/*
	 * SLUICE_CHARGED_*: the stages that held it and counted its wait,
	 * and those waits, taken back if dm submits it again.
	 */
	u8 waited;
	bool group_throttled;		/* counted in its group's throttled */
	u64 wait_ns[2];			/* by the volume's stage, the group's */
	u64 start_ns;			/* arrival at the target (if timed) */
	struct sluice_pool_stamp pool;	/* the pool policy's */
	struct sluice_c *pool_sc;	/* the table whose pool it goes to */
	struct sluice_vol *vol;
	struct sluice_group *group;
};

/*
 * What end_io has to do for a bio. A bio of the unlimited path has only
 * SLUICE_END_COUNTED, and end_io tests that with one compare.
 */
#define SLUICE_END_COUNTED 1	/* has data: counted in st */
#define SLUICE_END_TIMED 2	/* in the latency sample: start_ns */
#define SLUICE_END_POOLED 4	/* admitted to the pool: complete it */
#define SLUICE_END_DOWNSTREAM 8	/* counted in vol->nr_downstream */
#define SLUICE_END_LANE 16	/* passed its pool's lane: timed if TIMED */
/*
 * In bi_private, with the volume, for a bio of the lane outside the latency
 * sample: end_io gives its slot back (the volume is at least 2-aligned).
 */
#define SLUICE_PRIV_LANE 1UL

#define SLUICE_CHARGED_VOL 1
#define SLUICE_CHARGED_GROUP 2

enum sluice_release {
	SLUICE_DUE,	/* what the limits allow now; arm the timer for the rest */
	SLUICE_ALL,	/* everything, charged: a suspend must not wait */
	SLUICE_RETURN,	/* everything, uncharged: dm will submit it again */
};

/* Where released bios go next. */
enum sluice_next {
	SLUICE_TO_GROUP,	/* the group's stage, then the pool */
	SLUICE_TO_POOL,		/* the pool, if any */
	SLUICE_TO_DEVICE,	/* the device now, charged to the group */
};

extern struct workqueue_struct *sluice_wq;

static inline struct sluice_io *sluice_bio_io(struct bio *bio)
{
	return dm_per_bio_data(bio, sizeof(struct sluice_io));
}

static inline struct bio *sluice_io_bio(struct sluice_io *io)
{
	return dm_bio_from_per_bio_data(io, sizeof(struct sluice_io));
}

/* sluice-stage.c */
void sluice_stage_init(struct sluice_stage *s, work_func_t dispatch);
void sluice_stage_stop(struct sluice_stage *s);
void sluice_stage_install(struct sluice_stage *s, const struct sl_limits *lim);
void __sluice_stage_arm(struct sluice_stage *s, u64 expires);
void __sluice_stage_charge(struct sluice_stage *s, struct sluice_io *io, u64 now);
void sluice_stage_refund(struct sluice_stage *s, struct sluice_io *io);
u64 __sluice_stage_admit(struct sluice_stage *s, struct sluice_io *io, u64 now);
void __sluice_stage_hold(struct sluice_stage *s, struct sluice_io *io, u64 now);
void __sluice_stage_release(struct sluice_stage *s, struct sluice_stats *st,
			    struct bio_list *out, u64 now, enum sluice_release how,
			    u64 max_hold_ns);

int sluice_stage_batch_init(struct sluice_stage *s);
void __sluice_stage_fold(struct sluice_stage *s, u64 now);
void __sluice_stage_try_batch(struct sluice_stage *s, u64 now);
void __sluice_stage_end_batch(struct sluice_stage *s, u64 now);

/*
 * Whether this CPU has bios it passed in batch mode that the buckets were
 * not charged yet; any context.
 */
static inline bool sluice_stage_cpu_unfolded(struct sluice_stage *s)
{
	return s->pcpu &&
	       (this_cpu_read(s->pcpu->ios[0]) != this_cpu_read(s->pcpu->folded_ios[0]) ||
		this_cpu_read(s->pcpu->ios[1]) != this_cpu_read(s->pcpu->folded_ios[1]));
}

/* sluice-stats.c */
int sluice_stats_init(struct sluice_stats *st);
void sluice_stats_free(struct sluice_stats *st);
void sluice_stats_read(struct sluice_stats *st, struct sluice_pcpu_stats *now);
void sluice_stats_wait(struct sluice_stats *st, struct sluice_io *io, u8 stage, u64 wait);
void sluice_stats_unwait(struct sluice_stats *st, struct sluice_io *io, u8 stage);
void sluice_stats_zero(struct sluice_stats *st);
void sluice_emit_counters(struct sluice_stats *st, const char *prefix, char *result,
			  unsigned int maxlen, unsigned int *szp);
/* Merge b into a, oldest first by seq (each is oldest first already). */
void sluice_merge_by_seq(struct bio_list *a, struct bio_list *b);

/* sluice-target.c: send released bios on */
void sluice_submit_list(struct bio_list *bl, enum sluice_next next);

/* sluice-group.c */
struct sluice_group *sluice_group_get(const char *name);
void sluice_group_put(struct sluice_group *g);
void sluice_group_lock(struct sluice_group *g);
void sluice_group_unlock(struct sluice_group *g);
void sluice_group_set(struct sluice_group *g, const struct sl_config *cfg);
void sluice_group_config(struct sluice_group *g, struct sl_config *cfg);
void sluice_group_count(struct sluice_group *g, struct sluice_io *io, int sign);
bool sluice_group_admit(struct sluice_group *g, struct sluice_io *io, u64 now);
void sluice_group_charge(struct sluice_group *g, struct sluice_io *io);
void sluice_group_refund(struct sluice_group *g, struct sluice_io *io);
void sluice_group_drain(struct sluice_group *g, struct sluice_vol *v,
			struct bio_list *out, bool close);
void sluice_group_open(struct sluice_group *g, struct sluice_vol *v);
void sluice_group_status(struct sluice_group *g, char *result, unsigned int maxlen,
			 unsigned int *szp);

#endif
