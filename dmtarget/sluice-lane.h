/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pool's lane, shared by the pool policy and the target: the state a bio
 * passes, and its completion gives back, without the pool's lock (see
 * sluice-weight.c, "The lane", for why it is fair and how it is ordered
 * against the lock). The policy owns it: it opens and closes it, sets its
 * depth and credit cap, and takes the credits back, under its lock. The
 * target runs the two steps below, inline, on every bio of a pooled volume
 * the lane may take: no indirect call into the policy's module and, for a
 * bio outside the latency sample, no per-bio data. Through calls into the
 * policy, the lane cost 2.1% of an IO's instructions over the unpooled
 * target (4k reads on a RAM disk, one CPU: two retpolined calls, the per-bio
 * stamps, the frames); run here, 1.2%.
 */
#ifndef SLUICE_LANE_H
#define SLUICE_LANE_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>

#include "sluice-depth.h"

/* A CPU folds its lane completions into the depth controller this often. */
#define SLUICE_LANE_FOLD_DONE SL_DEPTH_WIN_DONE

/*
 * One CPU's part of a lane: the slots it keeps (credits, see the policy),
 * and its completions not yet folded into the depth controller, all and
 * the timed with their service times; folded every SLUICE_LANE_FOLD_DONE,
 * or at the first after a tick.
 */
struct sluice_lane_cpu {
	atomic_t credit;
	u32 done, timed;
	u64 wait_ns, svc_ns;
	unsigned long folded_at;	/* jiffies */
};

struct sluice_lane {
	/* read by every bio, written by the policy's lock: a line of their own */
	bool open ____cacheline_aligned_in_smp;
	unsigned int depth;		/* the pool's depth in force */
	unsigned int credit_cap;
	struct sluice_lane_cpu __percpu *pcpu;
	/*
	 * Every bio of the pool in flight, the lane's and the lock's, and
	 * every credit: a slot is taken by a bounded increment. The one field
	 * every CPU may write for a bio: a line of its own too.
	 */
	atomic_t inflight ____cacheline_aligned_in_smp;
};

/*
 * A member's counters, per CPU: bios pass the lane on any CPU. sent counts
 * those the policy's lock sent, lane_sent and lane_done the lane's (a bio
 * may complete on another CPU than it was sent on: only the sums over the
 * CPUs mean anything, see the policy's member_inflight()); the times are
 * the timed completions'.
 */
struct sluice_lane_member_cpu {
	u64 sent, lane_sent, lane_done, timed, wait_ns, svc_ns;
};

/*
 * A member's bios in flight are those the lock sent (inflight) and those of
 * the lane (lane_sent less lane_done, summed over the CPUs): two atomics on
 * the member's line for every bio of the lane cost a third of the lane's
 * time on two CPUs, and blk-mq counts a disk's bios in flight so too.
 */
struct sluice_lane_member {
	struct sluice_lane *lane;
	atomic_t inflight;		/* its bios the lock sent, in flight */
	/*
	 * jiffies: its last completion or lane send, or the lock's first send
	 * after idle
	 */
	unsigned long progress;
	bool used;			/* a bio passed the lane: no think time */
	struct sluice_lane_member_cpu __percpu *pcpu;
};

/* What a lane step leaves to the policy's lock. */
enum sluice_lane_step {
	SLUICE_LANE_OK,		/* nothing */
	SLUICE_LANE_SHUT,	/* pass: no slot, or closed; admit() the bio */
	SLUICE_LANE_RACED,	/* pass: closed after a slot was taken: give it back */
	SLUICE_LANE_CLOSED,	/* done: the lane is closed, finish under the lock */
	SLUICE_LANE_FOLD,	/* done: fold this CPU's completions */
};

/* Take a slot if fewer than limit bios count in flight. */
static inline bool sluice_lane_take_slot(struct sluice_lane *l, int limit)
{
	int n = atomic_read(&l->inflight);

	do {
		if (n >= limit)
			return false;
	} while (!atomic_try_cmpxchg(&l->inflight, &n, n + 1));
	return true;
}

/* A member's progress: now, written at most once a tick. */
static inline void sluice_lane_progress(struct sluice_lane_member *lm)
{
	unsigned long now = jiffies;

	/* read first: one write a tick */
	if (READ_ONCE(lm->progress) != now)
		WRITE_ONCE(lm->progress, now);
}

/* A bio of lm's passes the lane if it is open and has a slot. */
static __always_inline enum sluice_lane_step
sluice_lane_pass(struct sluice_lane_member *lm)
{
	struct sluice_lane *l = lm->lane;

	if (!READ_ONCE(l->open))
		return SLUICE_LANE_SHUT;
	/* this CPU's credit, else a slot of the pool's (fully ordered either way) */
	if (atomic_dec_if_positive(&raw_cpu_ptr(l->pcpu)->credit) < 0 &&
	    !sluice_lane_take_slot(l, READ_ONCE(l->depth)))
		return SLUICE_LANE_SHUT;
	/* closed since it was read (the submitter may have been preempted) */
	if (unlikely(!READ_ONCE(l->open)))
		return SLUICE_LANE_RACED;
	/*
	 * A stall is a second without progress while bios are in flight:
	 * one sent now has had none yet (the lock's path stamps a member's
	 * first send after idle; the lane cannot tell which that is).
	 */
	sluice_lane_progress(lm);
	this_cpu_inc(lm->pcpu->lane_sent);
	/* read first: the line stays clean while the member keeps using it */
	if (!READ_ONCE(lm->used))
		WRITE_ONCE(lm->used, true);
	return SLUICE_LANE_OK;
}

/* A timed completion of lm's: its wait in the pool and service time. */
static inline void sluice_lane_count_timed(struct sluice_lane_member *lm,
					   u64 wait, u64 svc)
{
	this_cpu_inc(lm->pcpu->timed);
	this_cpu_add(lm->pcpu->wait_ns, wait);
	this_cpu_add(lm->pcpu->svc_ns, svc);
}

/*
 * A completion's slot kept as its CPU's credit, if the lane is open and the
 * CPU has fewer than credit_cap; false: the caller gives it to the pool.
 */
static inline bool sluice_lane_keep_credit(struct sluice_lane *l)
{
	unsigned int cap = READ_ONCE(l->credit_cap);
	atomic_t *credit;

	if (!cap || !READ_ONCE(l->open))
		return false;
	credit = &raw_cpu_ptr(l->pcpu)->credit;
	if (atomic_read(credit) >= cap)
		return false;
	/* fully ordered: the lane is read after */
	atomic_inc_return(credit);
	if (likely(READ_ONCE(l->open)))
		return true;
	/* closed since: take it back, unless the closer took it already */
	return atomic_dec_if_positive(credit) < 0;
}

/*
 * A bio of lm's in flight completed: its slot back, to this CPU's credit or
 * the pool (fully ordered, then the lane is read: the policy's lock closes
 * it, then takes the credits back and reads the slots). The member's
 * progress is written first, for a stall check that reads the slot free.
 * lane: the bio passed the lane (else the lock sent it); loose: its slot
 * counted against a squeeze, and the lock must see it.
 */
static __always_inline enum sluice_lane_step
sluice_lane_give(struct sluice_lane_member *lm, bool lane, bool loose)
{
	struct sluice_lane *l = lm->lane;

	sluice_lane_progress(lm);
	if (lane)
		this_cpu_inc(lm->pcpu->lane_done);
	else
		atomic_dec(&lm->inflight);
	if (loose || !sluice_lane_keep_credit(l))
		atomic_dec(&l->inflight);
	/*
	 * A stalled member's bio was excused: until the lock ends its stall,
	 * the pool may send one bio more than its depth.
	 */
	if (unlikely(loose || !READ_ONCE(l->open)))
		return SLUICE_LANE_CLOSED;
	return SLUICE_LANE_OK;
}

/*
 * The rest of a completion while the lane is open: counted on this CPU,
 * with its times if timed; nothing waits, nothing to kick, no expectation.
 */
static __always_inline enum sluice_lane_step
sluice_lane_count_done(struct sluice_lane *l, bool timed, u64 wait, u64 svc)
{
	struct sluice_lane_cpu __percpu *pc = l->pcpu;

	if (timed) {
		this_cpu_inc(pc->timed);
		this_cpu_add(pc->wait_ns, wait);
		this_cpu_add(pc->svc_ns, svc);
	}
	if (this_cpu_add_return(pc->done, 1) >= SLUICE_LANE_FOLD_DONE ||
	    time_after(jiffies, this_cpu_read(pc->folded_at)))
		return SLUICE_LANE_FOLD;
	return SLUICE_LANE_OK;
}

/* A completion of lm's: its slot back, then counted if the lane is open. */
static __always_inline enum sluice_lane_step
sluice_lane_done(struct sluice_lane_member *lm, bool lane, bool loose,
		 bool timed, u64 wait, u64 svc)
{
	enum sluice_lane_step step = sluice_lane_give(lm, lane, loose);

	if (step != SLUICE_LANE_OK)
		return step;
	return sluice_lane_count_done(lm->lane, timed, wait, svc);
}

#endif
