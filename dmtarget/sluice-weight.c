// SPDX-License-Identifier: GPL-2.0
/*
 * dm-sluice-weight: the pool policy of the sluice target. The volumes whose
 * tables name one pool share a dispatcher that keeps at most `depth` bios in
 * flight to their device; above that, the next bio is chosen by reservation
 * tags, then by weight (start-time fair queueing), see sluice-sched.h. The
 * depth sets itself to the device's parallelism (sluice-depth.h); a slot is
 * kept for a volume that keeps few bios outstanding (sluice-think.h); and a
 * volume's latency target squeezes the slots of volumes with looser ones.
 *
 * The pool is named, not found by device: each volume usually sits on its
 * own linear map of the pool's disk.
 *
 * The lane. While nothing waits in the pool, no slot is kept, no member is
 * stalled and no member has a latency target, the scheduler has nothing to
 * order: every bio goes at once. The pool then opens its lane, and a bio
 * passes it with one bounded atomic increment of the bios in flight,
 * without the lock, the tags or a clock read (the target reads the clock
 * for the bios of its latency sample only, and its service time is
 * measured on those); its completion gives the slot back with one atomic
 * decrement and counts itself on its CPU, folded into the depth controller
 * under the lock every SLUICE_LANE_FOLD_DONE completions or once a tick.
 * The target runs both steps itself (sluice-lane.h); what they leave to the
 * lock comes back through lane_slow(). A stall
 * (a second without progress) is timed in jiffies. The first bio that must
 * wait closes the lane under the lock, and the pool is the locked dispatcher
 * again until nothing waits. Skipping the tags is fair: start-time fair
 * queueing orders backlogged members only, and a member that becomes
 * backlogged starts at the virtual time (or its last finish tag, at most one
 * step ahead), whatever it sent meanwhile; reservation tags likewise bring
 * no credit from before. Think times are not measured across an open lane,
 * and no member is expected while it is open: anticipation keeps slots only
 * against a waiter, and there is none.
 *
 * Credits. The one line every CPU would write for every bio is the pool's
 * count of slots taken: two CPUs sending to one pool took 2.4% of their
 * IO/s on it (measured in the guest, with and without the count). So a lane
 * completion keeps its slot on its CPU, as a credit (up to credit_cap), and
 * that CPU's next lane bio takes the credit instead: a CPU that sends and
 * completes its own bios writes no line another CPU writes. A credit is a
 * slot taken (the count includes it) and not in flight; the lock's holder
 * takes every CPU's credits back (__pool_reclaim_credits()) whenever it
 * closes the lane and whenever the depth changes, so that the depth holds
 * and a waiter sees every free slot.
 *
 * Ordering between the lane and the lock: a completion gives its slot back,
 * to the pool or as its CPU's credit (a fully ordered atomic), before it
 * reads whether the lane is open; a bio that is to wait closes the lane,
 * then (smp_mb()) takes the credits back and reads the bios in flight.
 * Either the completion sees the lane closed, and takes the locked path
 * that kicks the worker (taking back a credit it had just kept, unless the
 * closer took it), or the waiting bio sees the slot free.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <linux/bio.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <linux/timer.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/device-mapper.h>

#include "sluice-sched.h"
#include "sluice-depth.h"
#include "sluice-think.h"
#include "sluice-policy.h"

#define DM_MSG_PREFIX "sluice-weight"

#define POOL_DEPTH_MAX SL_DEPTH_MAX
/*
 * A member whose bios in flight have made no progress (no completion, nor
 * a send through the lane, which stamps it too) for this long is stalled:
 * its device below is suspended, has lost its path or hangs. Its bios then
 * stop counting against the pool's depth, and it sends no more, until one
 * of them completes; so one stuck member cannot take every slot of the
 * pool and hang the others.
 */
#define POOL_STALL_MS 1000
/* How often a pool that has bios waiting and no room looks for stalls. */
#define POOL_STALL_CHECK_MS 250
/*
 * Latency targets: every window, a member with a target whose completions
 * (at least POOL_LAT_MIN_DONE since it was last looked at, or any after
 * POOL_LAT_WIN_MAX_NS) were over it more than one time in ten (its p90
 * above it) squeezes the slots that members with looser targets, or none,
 * may hold together (see __pool_latency_window()). As io.latency does with
 * queue depths.
 */
#define POOL_LAT_WIN_NS (50ULL * NSEC_PER_MSEC)
/* A member's window: at least this many completions, or this long. */
#define POOL_LAT_MIN_DONE 8
#define POOL_LAT_WIN_MAX_NS (1000ULL * NSEC_PER_MSEC)
/* The most expected members a completion looks at to keep slots for. */
#define POOL_EXPECT_SCAN 8
/* sluice_pool_stamp.flags */
#define POOL_BIO_LOOSE 1	/* counted in the pool's loose_inflight */
struct sluice_pool {
	struct list_head list;		/* in sluice_pools */
	char name[SL_LABEL_MAX + 1];
	unsigned int nr_members;	/* under sluice_pools_lock */
	struct work_struct dispatch;
	struct timer_list stall_timer;	/* kicks dispatch while it is blocked */

	spinlock_t lock;		/* protects everything below */
	struct sl_sched s;
	struct sl_heap_node **wv, **rv;
	u32 cap;
	struct list_head members;
	/* those of stalled members, which take no slot (see inflight) */
	unsigned int excused;
	struct sl_depth dc;		/* the depth in force: dc.depth */
	unsigned int kept;		/* slots kept for anticipated members */
	struct list_head expected;	/* members thinking, see sluice-think.h */
	/* latency targets */
	unsigned int nr_targets;	/* members with one */
	u64 squeeze_ns;			/* the target that squeezes; 0: none */
	unsigned int loose_cap, loose_inflight;
	u64 lat_win_start;
	u64 lat_looked;			/* when a target was last looked at */
	u64 squeeze_at;			/* when the squeeze last changed */
	/*
	 * Open, depth and credit cap written under the lock; the bios in
	 * flight, of the lane too, in lane.inflight (see sluice-lane.h).
	 */
	struct sluice_lane lane;
};

struct sluice_member {
	struct sluice_pool *pool;
	struct list_head node;		/* in pool->members; all below too */
	struct sl_sched_client c;
	struct bio_list queue;
	unsigned int nr_queued;
	/* its bios in flight, progress and counters (sluice-lane.h) */
	struct sluice_lane_member lm;
	unsigned int excused;		/* of them, excused by its stall */
	bool stalled;			/* see POOL_STALL_MS */
	bool closed;			/* drained for a suspend: hold nothing */
	u64 by_reservation, stalls;
	/* anticipation */
	struct sl_think think;
	bool expected;			/* its next bio is expected soon */
	u64 expect_until;		/* till then */
	struct list_head expect_node;	/* in pool->expected while it is */
	bool anticipating;		/* and it holds one of the kept slots */
	struct hrtimer antic_timer;	/* armed while it is: ends it */
	u64 anticipated;		/* a bio came within the window */
	/* latency target, and this window's completions against it */
	u64 target_ns;
	u32 lat_done, lat_over, lat_near;	/* near: within a fifth */
	u64 lat_since;			/* the start of its window */
	u64 lat_missed;			/* windows it missed */
};

static LIST_HEAD(sluice_pools);
static DEFINE_MUTEX(sluice_pools_lock);
static struct workqueue_struct *weight_wq;

/* What the device writes or reads: all but a discard (charged as one IO). */
static u64 bio_cost_bytes(struct bio *bio)
{
	if (bio_op(bio) == REQ_OP_DISCARD)
		return 0;
	return bio->bi_iter.bi_size;
}

/* The bios that may count in flight: what the lock's holder may send to. */
static int __pool_limit(const struct sluice_pool *p)
{
	return p->dc.depth + p->excused - p->kept;
}

static bool __pool_room(const struct sluice_pool *p)
{
	return atomic_read(&p->lane.inflight) < __pool_limit(p);
}

/*
 * The credits a CPU may keep (see the top): none for a depth below the
 * CPUs (they would strand most of it), else one, or its share of half the
 * depth.
 */
static unsigned int pool_credit_cap(unsigned int depth)
{
	unsigned int cpus = num_online_cpus();

	if (depth < cpus)
		return 0;
	return max(1U, depth / (2 * cpus));
}

/* Every CPU's credits back to the pool: O(CPUs), on the lock's rare paths. */
static void __pool_reclaim_credits(struct sluice_pool *p)
{
	int cpu, n = 0;

	for_each_possible_cpu(cpu)
		n += atomic_xchg(&per_cpu_ptr(p->lane.pcpu, cpu)->credit, 0);
	if (n)
		atomic_sub(n, &p->lane.inflight);
}

/* The depth in force changed: credits kept at the old one come back. */
static void __pool_depth_changed(struct sluice_pool *p)
{
	WRITE_ONCE(p->lane.depth, p->dc.depth);
	WRITE_ONCE(p->lane.credit_cap, pool_credit_cap(p->dc.depth));
	__pool_reclaim_credits(p);
}

/* m's next bio came, or will not come soon: stop expecting it. */
static void __member_end_expect(struct sluice_pool *p, struct sluice_member *m)
{
	if (!m->expected)
		return;
	m->expected = false;
	list_del_init(&m->expect_node);
	if (m->anticipating) {
		m->anticipating = false;
		p->kept--;
	}
}

/* Nothing for the scheduler to order, nothing to keep: open the lane. */
static void __pool_open_lane(struct sluice_pool *p)
{
	struct sluice_member *m, *tmp;

	if (p->lane.open || sl_heap_top(&p->s.w) || p->kept || p->excused ||
	    p->nr_targets || p->squeeze_ns)
		return;
	/* their next bios may pass the lane unseen */
	list_for_each_entry_safe(m, tmp, &p->expected, expect_node)
		__member_end_expect(p, m);
	WRITE_ONCE(p->lane.open, true);
}

/* A bio is to wait, or a target joined: no bio may pass the lane. */
static void __pool_close_lane(struct sluice_pool *p)
{
	bool was_open = p->lane.open;

	if (was_open)
		WRITE_ONCE(p->lane.open, false);
	/* the credits and slots are read after: see the ordering at the top */
	smp_mb();
	/* none is kept while it is closed */
	if (was_open)
		__pool_reclaim_credits(p);
}

/*
 * A slot for the lock's holder. The CPUs' credits count as taken: before a
 * bio is made to wait for a slot, they are taken back (the lane closes).
 */
static bool __pool_take_locked(struct sluice_pool *p)
{
	if (sluice_lane_take_slot(&p->lane, __pool_limit(p)))
		return true;
	if (!p->lane.open)
		return false;
	__pool_close_lane(p);
	return sluice_lane_take_slot(&p->lane, __pool_limit(p));
}

/* A member's latency target came or went: a target keeps the lane closed. */
static void __pool_targets_changed(struct sluice_pool *p)
{
	if (p->nr_targets)
		__pool_close_lane(p);
	else
		__pool_open_lane(p);
}

/* Whether m's bios count against the squeeze of a latency target. */
static bool __member_loose(const struct sluice_pool *p,
			   const struct sluice_member *m)
{
	return p->squeeze_ns && (!m->target_ns || m->target_ns > p->squeeze_ns);
}

static bool __member_squeezed(const struct sluice_pool *p,
			      const struct sluice_member *m)
{
	return __member_loose(p, m) && p->loose_inflight >= p->loose_cap;
}

/*
 * A slot taken by the lane after it closed goes back: ordered as a
 * completion's, and the worker kicked if a waiter may now have room.
 */
static noinline void pool_give_back(struct sluice_pool *p)
{
	unsigned long flags;
	bool kick;

	atomic_dec_return(&p->lane.inflight);
	spin_lock_irqsave(&p->lock, flags);
	kick = sl_heap_top(&p->s.w) && __pool_room(p);
	spin_unlock_irqrestore(&p->lock, flags);
	if (kick)
		queue_work(weight_wq, &p->dispatch);
}

/*
 * m's bios in flight: the lock's, and the lane's summed over the CPUs
 * (O(CPUs): on the lock's rarer paths only). The completions are read
 * before the sends, so a bio sent and completed meanwhile counts, and none
 * in flight before is missed.
 */
static unsigned int member_inflight(struct sluice_member *m)
{
	u64 sent = 0, done = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		done += READ_ONCE(per_cpu_ptr(m->lm.pcpu, cpu)->lane_done);
	/* the sends after: each completion read has its send read too */
	smp_rmb();
	for_each_possible_cpu(cpu)
		sent += READ_ONCE(per_cpu_ptr(m->lm.pcpu, cpu)->lane_sent);
	return atomic_read(&m->lm.inflight) + (unsigned int)(sent - done);
}

/*
 * A bio of m goes to the device, counted in the pool's inflight already:
 * count it for m, stamp it.
 */
static void __pool_count_sent(struct sluice_pool *p, struct sluice_member *m,
			      struct sluice_pool_stamp *stamp, u64 now)
{
	/* its first after idle has had no progress yet */
	if (atomic_inc_return_relaxed(&m->lm.inflight) == 1)
		WRITE_ONCE(m->lm.progress, jiffies);
	this_cpu_inc(m->lm.pcpu->sent);
	/* a stalled member's bio takes no slot either */
	if (m->stalled) {
		m->excused++;
		p->excused++;
	}
	stamp->sent_ns = now;
	stamp->flags = 0;
	if (__member_loose(p, m)) {
		stamp->flags |= POOL_BIO_LOOSE;
		p->loose_inflight++;
	}
}

/* Send the head bio of m's queue, as the scheduler chose it. */
static struct bio *__pool_take(struct sluice_pool *p, struct sluice_member *m,
			       bool by_res, u64 now)
{
	struct bio *bio = bio_list_pop(&m->queue);
	u64 bytes = bio_cost_bytes(bio);

	m->nr_queued--;
	sl_sched_sent(&p->s, &m->c, by_res, sl_sched_cost(&p->s, bytes), bytes,
		      m->nr_queued > 0, now);
	if (by_res)
		m->by_reservation++;
	__pool_count_sent(p, m, sluice_pool_stamp(bio), now);
	return bio;
}

/*
 * The squeeze holds back the member the scheduler picked: the backlogged
 * member with a target at least as tight as the squeezing one that is next
 * by weight, or NULL. O(members), and only while a target is missed.
 */
static struct sluice_member *__pool_pick_tight(struct sluice_pool *p)
{
	struct sluice_member *m, *best = NULL;

	list_for_each_entry(m, &p->members, node) {
		if (!m->c.backlogged || __member_loose(p, m))
			continue;
		if (!best || (long long)(m->c.wnode.key - best->c.wnode.key) < 0)
			best = m;
	}
	return best;
}

/* The next bio to send, if there is room and one may go; NULL if none. */
static struct bio *__pool_next(struct sluice_pool *p, u64 now)
{
	struct sl_sched_client *c;
	struct sluice_member *m;
	bool by_res;

	if (!sl_heap_top(&p->s.w) ||
	    !sluice_lane_take_slot(&p->lane, __pool_limit(p)))
		return NULL;
	c = sl_sched_pick(&p->s, now, &by_res);
	m = container_of(c, struct sluice_member, c);
	if (__member_squeezed(p, m)) {
		m = __pool_pick_tight(p);
		if (!m) {
			atomic_dec(&p->lane.inflight);
			return NULL;
		}
		by_res = false;
	}
	return __pool_take(p, m, by_res, now);
}

/*
 * A slot is free, or a member started thinking: keep slots for the members
 * expected soon that would be served first (see sluice-think.h). The list
 * holds the members thinking, each until its window ends (dropped here once
 * it has); of many, the POOL_EXPECT_SCAN that started first are looked at.
 *
 * No slot is kept against a waiter (the member the slot would go to) that
 * has only the one bio and is owed alike: it gives the slot back once
 * served, so keeping it only swaps the two, at the cost of an idle slot,
 * and of a bio sent by the worker instead of its submitter. Two volumes of
 * one bio each, on a fast device, would otherwise keep each other's slot
 * in turn and never run side by side.
 *
 * Only a kept slot arms the member's timer: a volume of one bio goes idle
 * at every completion, and a timer armed for each would cost more than
 * the bio on a fast device.
 */
static void __pool_keep_slots(struct sluice_pool *p, u64 now)
{
	struct sl_heap_node *top = sl_heap_top(&p->s.w);
	struct sluice_member *m, *tmp, *next;
	unsigned int scan = 0;
	bool lone;

	if (!top)
		return;
	next = container_of(top, struct sluice_member, c.wnode);
	lone = next->nr_queued <= 1 &&
	       next->nr_queued + member_inflight(next) == 1;
	list_for_each_entry_safe(m, tmp, &p->expected, expect_node) {
		if (now >= m->expect_until) {
			__member_end_expect(p, m);
			continue;
		}
		if (p->kept >= sl_think_slots(p->dc.depth) ||
		    scan++ == POOL_EXPECT_SCAN)
			return;
		if (m->anticipating || !sl_sched_would_lead(&p->s, &m->c) ||
		    (lone && sl_sched_alike(&next->c, &m->c)))
			continue;
		m->anticipating = true;
		p->kept++;
		/*
		 * A timer of an earlier window that is running now ends this
		 * one early: a slot given back too soon, never one kept too
		 * long.
		 */
		hrtimer_start(&m->antic_timer, ns_to_ktime(m->expect_until),
			      HRTIMER_MODE_ABS);
	}
}

/* m's last bio completed and nothing of it waits: expect its next one. */
static void __member_expect(struct sluice_pool *p, struct sluice_member *m,
			    u64 now)
{
	u64 window;

	sl_think_idle(&m->think, now);
	if (m->closed || m->stalled || m->expected)
		return;
	window = sl_think_window(&m->think, sl_depth_lat0(&p->dc));
	if (!window)
		return;
	m->expected = true;
	m->expect_until = now + window;
	list_add_tail(&m->expect_node, &p->expected);
}

/* The squeeze changes: count only what is admitted from now on. */
static void __pool_squeeze(struct sluice_pool *p, unsigned int cap, u64 now)
{
	struct sluice_member *m;

	p->loose_cap = cap;
	p->squeeze_at = now;
	list_for_each_entry(m, &p->members, node) {
		m->lat_done = 0;
		m->lat_over = 0;
		m->lat_near = 0;
		m->lat_since = now;
	}
}

/*
 * Every POOL_LAT_WIN_NS: the targets missed and held, and the squeeze they
 * set on the others. A miss takes a quarter of the slots the looser members
 * may hold (half, if the median was over the target too); a window in which every target held with a fifth to spare gives
 * them an eighth more; one in between keeps the squeeze as it is. Each
 * change is judged only on bios admitted after it.
 */
static void __pool_latency_window(struct sluice_pool *p, u64 now)
{
	struct sluice_member *m;
	bool looked = false, spare = true, far = false;
	u64 missed = 0;
	unsigned int cap;

	if (!p->nr_targets) {
		p->squeeze_ns = 0;
		return;
	}
	if (now - p->lat_win_start < POOL_LAT_WIN_NS)
		return;
	p->lat_win_start = now;
	list_for_each_entry(m, &p->members, node) {
		if (!m->target_ns || !m->lat_done)
			continue;
		/* a slow member's completions add up over windows, to a limit */
		if (m->lat_done < POOL_LAT_MIN_DONE &&
		    now - m->lat_since < POOL_LAT_WIN_MAX_NS)
			continue;
		looked = true;
		/* of fewer than ten, p90 is the slowest: one over misses */
		if (m->lat_over * 10 > m->lat_done) {
			m->lat_missed++;
			if (!missed || m->target_ns < missed)
				missed = m->target_ns;
			/* its median over: far off, a bigger step */
			if (m->lat_over * 2 > m->lat_done)
				far = true;
		}
		if (m->lat_near * 10 > m->lat_done)
			spare = false;
		m->lat_done = 0;
		m->lat_over = 0;
		m->lat_near = 0;
		m->lat_since = now;
	}
	if (looked)
		p->lat_looked = now;
	if (missed) {
		if (!p->squeeze_ns) {
			p->loose_cap = p->dc.depth;
			p->squeeze_ns = missed;
		} else if (missed < p->squeeze_ns) {
			p->squeeze_ns = missed;
		}
		cap = p->loose_cap - p->loose_cap / (far ? 2 : 4);
		__pool_squeeze(p, cap && cap < p->loose_cap ? cap :
			       (p->loose_cap > 1 ? p->loose_cap - 1 : 1), now);
		return;
	}
	if (!p->squeeze_ns)
		return;
	/*
	 * Nothing to go by: the squeeze stays as it is, for a while; members
	 * with targets that went idle do not hold the others back for good.
	 */
	if (!looked && now - p->lat_looked < POOL_LAT_WIN_MAX_NS)
		return;
	if (looked && !spare)
		return;
	cap = p->loose_cap + (p->loose_cap / 8 ? p->loose_cap / 8 : 1);
	if (cap >= p->dc.depth)
		p->squeeze_ns = 0;
	else
		__pool_squeeze(p, cap, now);
}

/*
 * With no room and bios waiting: excuse the members whose bios in flight
 * have not progressed for POOL_STALL_MS (O(members), and only then).
 */
static void __pool_find_stalls(struct sluice_pool *p)
{
	struct sluice_member *m;
	unsigned int n;

	list_for_each_entry(m, &p->members, node) {
		if (m->stalled ||
		    time_before(jiffies, READ_ONCE(m->lm.progress) +
					 msecs_to_jiffies(POOL_STALL_MS)))
			continue;
		/*
		 * The lane is closed: a completion that did not see it closed
		 * gave its slot back before, and is counted out here.
		 */
		n = member_inflight(m);
		if (!n)
			continue;
		m->stalled = true;
		m->stalls++;
		m->excused = n;
		p->excused += n;
		/* its queue waits until one of its bios completes */
		sl_sched_deactivate(&p->s, &m->c);
		__member_end_expect(p, m);
	}
}

static void pool_stall_timer_fn(struct timer_list *t)
{
	struct sluice_pool *p = from_timer(p, t, stall_timer);

	queue_work(weight_wq, &p->dispatch);
}

/* Completions kick dispatch; this is for when none come. */
static void pool_arm_stall_check(struct sluice_pool *p)
{
	if (!timer_pending(&p->stall_timer))
		mod_timer(&p->stall_timer,
			  jiffies + msecs_to_jiffies(POOL_STALL_CHECK_MS));
}

static void pool_dispatch_fn(struct work_struct *w)
{
	struct sluice_pool *p = container_of(w, struct sluice_pool, dispatch);
	struct bio_list out = BIO_EMPTY_LIST;
	struct bio *bio;
	unsigned long flags;
	u64 now = ktime_get_ns();
	bool blocked;

	spin_lock_irqsave(&p->lock, flags);
	if (!__pool_room(p) && sl_heap_top(&p->s.w))
		__pool_find_stalls(p);
	while ((bio = __pool_next(p, now)))
		bio_list_add(&out, bio);
	blocked = sl_heap_top(&p->s.w) != NULL;
	__pool_open_lane(p);
	spin_unlock_irqrestore(&p->lock, flags);
	if (blocked)
		pool_arm_stall_check(p);
	while ((bio = bio_list_pop(&out))) {
		/* its submitter waits no longer: a full device may make it wait */
		bio->bi_opf &= ~REQ_NOWAIT;
		dm_submit_bio_remap(bio, NULL);
		cond_resched();
	}
}

static enum hrtimer_restart member_antic_timer_fn(struct hrtimer *t)
{
	struct sluice_member *m = container_of(t, struct sluice_member,
					       antic_timer);
	struct sluice_pool *p = m->pool;
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&p->lock, flags);
	kick = m->anticipating;
	__member_end_expect(p, m);
	kick = kick && sl_heap_top(&p->s.w);
	__pool_open_lane(p);
	spin_unlock_irqrestore(&p->lock, flags);
	if (kick)
		queue_work(weight_wq, &p->dispatch);
	return HRTIMER_NORESTART;
}

static struct sluice_pool *pool_find(const char *name)
{
	struct sluice_pool *p;

	list_for_each_entry(p, &sluice_pools, list)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

/* Make room in the heaps for one more member; under sluice_pools_lock. */
static int pool_grow(struct sluice_pool *p)
{
	struct sl_heap_node **wv, **rv, **oldw, **oldr;
	u32 cap;

	if (p->nr_members < p->cap)
		return 0;
	cap = p->cap ? 2 * p->cap : 8;
	wv = kvcalloc(cap, sizeof(*wv), GFP_KERNEL);
	rv = kvcalloc(cap, sizeof(*rv), GFP_KERNEL);
	if (!wv || !rv) {
		kvfree(wv);
		kvfree(rv);
		return -ENOMEM;
	}
	spin_lock_irq(&p->lock);
	oldw = p->wv;
	oldr = p->rv;
	sl_sched_move(&p->s, wv, rv, cap);
	p->wv = wv;
	p->rv = rv;
	p->cap = cap;
	spin_unlock_irq(&p->lock);
	kvfree(oldw);
	kvfree(oldr);
	return 0;
}

static struct sluice_member *weight_attach(const char *name,
					   const struct sluice_member_params *mp,
					   const char **error)
{
	struct sluice_member *m;
	struct sluice_pool *p;
	bool created = false;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (m)
		m->lm.pcpu = alloc_percpu(struct sluice_lane_member_cpu);
	if (!m || !m->lm.pcpu) {
		kfree(m);
		*error = "pool: cannot allocate member";
		return NULL;
	}
	bio_list_init(&m->queue);
	INIT_LIST_HEAD(&m->node);
	INIT_LIST_HEAD(&m->expect_node);
	sl_sched_client_init(&m->c, mp->weight, mp->reserve_iops, mp->reserve_bps);
	hrtimer_init(&m->antic_timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	m->antic_timer.function = member_antic_timer_fn;
	m->target_ns = mp->latency_us * NSEC_PER_USEC;

	mutex_lock(&sluice_pools_lock);
	p = pool_find(name);
	if (!p) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (p)
			p->lane.pcpu = alloc_percpu(struct sluice_lane_cpu);
		if (!p || !p->lane.pcpu) {
			kfree(p);
			goto nomem;
		}
		strscpy(p->name, name, sizeof(p->name));
		spin_lock_init(&p->lock);
		INIT_WORK(&p->dispatch, pool_dispatch_fn);
		timer_setup(&p->stall_timer, pool_stall_timer_fn, 0);
		INIT_LIST_HEAD(&p->members);
		INIT_LIST_HEAD(&p->expected);
		sl_sched_init(&p->s, NULL, NULL, 0);
		sl_depth_init(&p->dc, 0, ktime_get_ns());
		p->lane.depth = p->dc.depth;
		p->lane.credit_cap = pool_credit_cap(p->dc.depth);
		created = true;
	}
	if (pool_grow(p)) {
		if (created) {
			free_percpu(p->lane.pcpu);
			kfree(p);
		}
		goto nomem;
	}
	if (created)
		list_add(&p->list, &sluice_pools);
	p->nr_members++;
	m->pool = p;
	m->lm.lane = &p->lane;
	spin_lock_irq(&p->lock);
	list_add_tail(&m->node, &p->members);
	if (m->target_ns)
		p->nr_targets++;
	/* a new pool's lane opens here */
	__pool_targets_changed(p);
	spin_unlock_irq(&p->lock);
	mutex_unlock(&sluice_pools_lock);
	return m;

nomem:
	mutex_unlock(&sluice_pools_lock);
	free_percpu(m->lm.pcpu);
	kfree(m);
	*error = "pool: cannot allocate pool";
	return NULL;
}

static void weight_detach(struct sluice_member *m)
{
	struct sluice_pool *p = m->pool;

	mutex_lock(&sluice_pools_lock);
	spin_lock_irq(&p->lock);
	/* the target drained the queue on presuspend; dm waited for the rest */
	WARN_ON_ONCE(m->nr_queued || member_inflight(m));
	sl_sched_deactivate(&p->s, &m->c);
	__member_end_expect(p, m);
	if (m->target_ns)
		p->nr_targets--;
	list_del(&m->node);
	spin_unlock_irq(&p->lock);
	hrtimer_cancel(&m->antic_timer);
	if (--p->nr_members) {
		mutex_unlock(&sluice_pools_lock);
		free_percpu(m->lm.pcpu);
		kfree(m);
		return;
	}
	list_del(&p->list);
	mutex_unlock(&sluice_pools_lock);
	/* the work re-arms the timer only while bios wait: none are left */
	timer_delete_sync(&p->stall_timer);
	cancel_work_sync(&p->dispatch);
	timer_delete_sync(&p->stall_timer);
	__pool_reclaim_credits(p);
	WARN_ON_ONCE(atomic_read(&p->lane.inflight));
	kvfree(p->wv);
	kvfree(p->rv);
	free_percpu(p->lane.pcpu);
	kfree(p);
	free_percpu(m->lm.pcpu);
	kfree(m);
}

static void weight_set(struct sluice_member *m,
		       const struct sluice_member_params *mp)
{
	struct sluice_pool *p = m->pool;

	spin_lock_irq(&p->lock);
	sl_sched_client_set(&p->s, &m->c, mp->weight, mp->reserve_iops,
			    mp->reserve_bps, ktime_get_ns());
	if (!m->target_ns != !mp->latency_us)
		p->nr_targets += mp->latency_us ? 1 : -1;
	m->target_ns = mp->latency_us * NSEC_PER_USEC;
	m->lat_done = 0;
	m->lat_over = 0;
	m->lat_near = 0;
	m->lat_since = ktime_get_ns();
	__pool_targets_changed(p);
	spin_unlock_irq(&p->lock);
}

/* A bio of m came: end its think time and its expectation. */
static void __member_busy(struct sluice_pool *p, struct sluice_member *m,
			  u64 now)
{
	/*
	 * Its bios passed the lane since it went idle: what came now is not
	 * the end of that think time. Racing the lane at worst loses a sample.
	 */
	if (READ_ONCE(m->lm.used)) {
		WRITE_ONCE(m->lm.used, false);
		m->think.idle_since = 0;
	}
	sl_think_busy(&m->think, now);
	/* its kept slot is free for whoever the scheduler picks: likely it */
	if (m->anticipating)
		m->anticipated++;
	__member_end_expect(p, m);
}

static bool weight_admit(struct sluice_member *m, struct bio *bio,
			 struct sluice_pool_stamp *stamp, u64 now)
{
	struct sluice_pool *p = m->pool;
	u64 bytes;
	unsigned long flags;
	bool kick, waiting;

	stamp->admitted_ns = now;
	/* map may be called with interrupts off: keep their state */
	spin_lock_irqsave(&p->lock, flags);
	/* suspending: the pool must hold nothing for this member */
	if (m->closed) {
		atomic_inc(&p->lane.inflight);
		__pool_count_sent(p, m, stamp, now);
		spin_unlock_irqrestore(&p->lock, flags);
		return true;
	}
	__member_busy(p, m, now);
	/* room, and nobody waiting: send it, keeping the tags in step */
	if (!sl_heap_top(&p->s.w) && !m->stalled && !__member_squeezed(p, m) &&
	    __pool_take_locked(p)) {
		bytes = bio_cost_bytes(bio);
		sl_sched_pass(&p->s, &m->c, sl_sched_cost(&p->s, bytes), bytes,
			      now);
		__pool_count_sent(p, m, stamp, now);
		__pool_open_lane(p);
		spin_unlock_irqrestore(&p->lock, flags);
		return true;
	}
	__pool_close_lane(p);
	bio_list_add(&m->queue, bio);
	/* a stalled member's queue joins the scheduler when it progresses */
	if (!m->nr_queued++ && !m->stalled)
		sl_sched_activate(&p->s, &m->c, now);
	/*
	 * Others wait: the worker sends, in the scheduler's order, even a bio
	 * that is next. Sent from here, it would race the worker for the
	 * device's tags whenever the depth is above the device's parallelism
	 * (a probe of depth=auto, or a depth set by hand), and a submitter
	 * that sleeps for a tag loses it to one already running: a reader of
	 * one bio waited 6 ms at a disk of 0.6 ms beside a flood.
	 */
	waiting = sl_heap_top(&p->s.w) != NULL;
	kick = waiting && __pool_room(p);
	spin_unlock_irqrestore(&p->lock, flags);
	if (kick)
		queue_work(weight_wq, &p->dispatch);
	else if (waiting)
		pool_arm_stall_check(p);
	return false;
}

/* This CPU's lane completions into the depth controller. */
static void __pool_fold_cpu(struct sluice_pool *p, u64 now)
{
	struct sluice_lane_cpu *pc = this_cpu_ptr(p->lane.pcpu);

	pc->folded_at = jiffies;
	if (!pc->done)
		return;
	if (sl_depth_done_many(&p->dc, pc->done, pc->timed, pc->svc_ns,
			       pc->wait_ns, 0, now))
		__pool_depth_changed(p);
	pc->done = 0;
	pc->timed = 0;
	pc->wait_ns = 0;
	pc->svc_ns = 0;
}

static noinline void pool_fold_now(struct sluice_pool *p)
{
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&p->lock, flags);
	/* the depth's windows are rates: the fine clock */
	__pool_fold_cpu(p, ktime_get_ns());
	/* the lane closed since, and the depth grew: room for a waiter */
	kick = sl_heap_top(&p->s.w) && __pool_room(p);
	spin_unlock_irqrestore(&p->lock, flags);
	if (kick)
		queue_work(weight_wq, &p->dispatch);
}

/* The locked part of a completion: the lane is closed, or was. */
static noinline void pool_complete_locked(struct sluice_pool *p,
					  struct sluice_member *m,
					  struct sluice_pool_stamp *stamp,
					  bool timed, u64 wait, u64 svc)
{
	unsigned long flags;
	bool kick, bound;
	u64 now = ktime_get_ns();

	spin_lock_irqsave(&p->lock, flags);
	if (stamp->flags & POOL_BIO_LOOSE)
		p->loose_inflight--;
	if (m->stalled) {
		/* progress: what it still has in flight counts again */
		m->stalled = false;
		p->excused -= m->excused;
		m->excused = 0;
		if (m->nr_queued)
			sl_sched_activate(&p->s, &m->c, now);
	}
	bound = sl_heap_top(&p->s.w) != NULL;
	__pool_fold_cpu(p, now);
	/*
	 * A slot kept idle for a thinking member lowers the rate; depth=auto
	 * must not grow to fill it, or the member's bio would wait in the
	 * device: such a completion does not count as one the depth bound.
	 */
	if (sl_depth_done_many(&p->dc, 1, timed, svc, wait, bound && !p->kept,
			       now))
		__pool_depth_changed(p);
	/* against its target, if it came after the squeeze last changed */
	if (m->target_ns && timed &&
	    stamp->admitted_ns - p->squeeze_at < (1ULL << 63)) {
		u64 lat = now - stamp->admitted_ns;

		m->lat_done++;
		if (lat > m->target_ns)
			m->lat_over++;
		if (lat > m->target_ns - m->target_ns / 5)
			m->lat_near++;
	}
	__pool_latency_window(p, now);
	/* reopened by another CPU: its next bio may pass the lane unseen */
	if (!m->nr_queued && !p->lane.open && !member_inflight(m))
		__member_expect(p, m, now);
	__pool_keep_slots(p, now);
	__pool_open_lane(p);
	kick = bound && __pool_room(p);
	spin_unlock_irqrestore(&p->lock, flags);
	if (kick)
		queue_work(weight_wq, &p->dispatch);
}

/* What a lane step leaves to the lock (see sluice-lane.h). */
static void pool_lane_step(struct sluice_member *m, enum sluice_lane_step step,
			   struct sluice_pool_stamp *stamp, bool timed, u64 wait,
			   u64 svc)
{
	struct sluice_pool *p = m->pool;

	switch (step) {
	case SLUICE_LANE_RACED:
		pool_give_back(p);
		break;
	case SLUICE_LANE_CLOSED:
		pool_complete_locked(p, m, stamp, timed, wait, svc);
		break;
	case SLUICE_LANE_FOLD:
		pool_fold_now(p);
		break;
	default:
		break;
	}
}

static struct sluice_lane_member *weight_lane(struct sluice_member *m)
{
	return &m->lm;
}

/* A bio of the lane: sent at once, so admitted and sent at its start. */
static void weight_lane_slow(struct sluice_member *m,
			     enum sluice_lane_step step, u64 start, u64 svc)
{
	struct sluice_pool_stamp stamp = {
		.admitted_ns = start,
		.sent_ns = start,
	};

	pool_lane_step(m, step, &stamp, start != 0, 0, svc);
}

static void weight_complete(struct sluice_member *m, struct bio *bio,
			    struct sluice_pool_stamp *stamp, u64 now)
{
	bool timed = now && stamp->sent_ns;
	u64 wait = 0, svc = 0;
	enum sluice_lane_step step;

	if (timed) {
		wait = stamp->sent_ns - stamp->admitted_ns;
		svc = now - stamp->sent_ns;
		sluice_lane_count_timed(&m->lm, wait, svc);
	}
	step = sluice_lane_done(&m->lm, false, stamp->flags & POOL_BIO_LOOSE,
				timed, wait, svc);
	if (step != SLUICE_LANE_OK)
		pool_lane_step(m, step, stamp, timed, wait, svc);
}

static void weight_drain(struct sluice_member *m, struct bio_list *out)
{
	struct sluice_pool *p = m->pool;
	bool kick;

	spin_lock_irq(&p->lock);
	bio_list_merge(out, &m->queue);
	bio_list_init(&m->queue);
	m->nr_queued = 0;
	m->closed = true;
	sl_sched_deactivate(&p->s, &m->c);
	__member_end_expect(p, m);
	/* a slot it kept is free: the others' waiters need not wait a check */
	kick = sl_heap_top(&p->s.w) && __pool_room(p);
	spin_unlock_irq(&p->lock);
	if (kick)
		queue_work(weight_wq, &p->dispatch);
}

static void weight_reopen(struct sluice_member *m)
{
	struct sluice_pool *p = m->pool;

	spin_lock_irq(&p->lock);
	m->closed = false;
	spin_unlock_irq(&p->lock);
}

/*
 * pool depth=<1..4096|auto> cost=<iops|bytes>: all or nothing, for the
 * whole pool, from any member.
 */
static int weight_message(struct sluice_member *m, unsigned int argc,
			  char **argv)
{
	struct sluice_pool *p = m->pool;
	unsigned int depth = 0, i;
	bool set_depth = false;
	int cost = -1;

	if (!argc) {
		DMWARN("pool: needs depth=<n|auto> or cost=<iops|bytes>");
		return -EINVAL;
	}
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "depth=auto")) {
			set_depth = true;
			depth = 0;
		} else if (!strncmp(argv[i], "depth=", 6)) {
			if (kstrtouint(argv[i] + 6, 10, &depth) || !depth ||
			    depth > POOL_DEPTH_MAX) {
				DMWARN("pool: depth must be 1..%u or auto",
				       POOL_DEPTH_MAX);
				return -EINVAL;
			}
			set_depth = true;
		} else if (!strcmp(argv[i], "cost=iops")) {
			cost = SL_COST_IOPS;
		} else if (!strcmp(argv[i], "cost=bytes")) {
			cost = SL_COST_BYTES;
		} else {
			DMWARN("pool: unknown argument '%s'", argv[i]);
			return -EINVAL;
		}
	}
	spin_lock_irq(&p->lock);
	if (set_depth) {
		sl_depth_set_fixed(&p->dc, depth, ktime_get_ns());
		__pool_depth_changed(p);
	}
	if (cost >= 0)
		p->s.cost_model = cost;
	spin_unlock_irq(&p->lock);
	/* a deeper pool may send held bios now */
	queue_work(weight_wq, &p->dispatch);
	return 0;
}

static void weight_status(struct sluice_member *m, char *result,
			  unsigned int maxlen, unsigned int *szp)
{
	struct sluice_pool *p = m->pool;
	unsigned int sz = *szp, queued, inflight, depth, m_inflight;
	u64 sent = 0, by_res, stalls, lat0, think, anticipated, target, missed;
	u64 timed = 0, wait_ns = 0, svc_ns = 0, lane_sent = 0, done;
	bool stalled, depth_auto, lane;
	const char *why;
	int cost, cpu, credits = 0;

	for_each_possible_cpu(cpu) {
		struct sluice_lane_member_cpu *mc = per_cpu_ptr(m->lm.pcpu, cpu);

		credits += atomic_read(&per_cpu_ptr(p->lane.pcpu, cpu)->credit);
		sent += READ_ONCE(mc->sent);
		lane_sent += READ_ONCE(mc->lane_sent);
		timed += READ_ONCE(mc->timed);
		wait_ns += READ_ONCE(mc->wait_ns);
		svc_ns += READ_ONCE(mc->svc_ns);
	}
	spin_lock_irq(&p->lock);
	queued = m->nr_queued;
	by_res = m->by_reservation;
	m_inflight = member_inflight(m);
	stalled = m->stalled;
	stalls = m->stalls;
	/* a stalled member's completion gives its slot back before the lock */
	inflight = max(atomic_read(&p->lane.inflight) - (int)p->excused - credits,
		       0);
	depth = p->dc.depth;
	depth_auto = !p->dc.fixed;
	why = sl_depth_why_name(p->dc.why);
	lat0 = sl_depth_lat0(&p->dc);
	cost = p->s.cost_model;
	think = m->think.samples ? m->think.mean_ns : 0;
	anticipated = m->anticipated;
	target = m->target_ns;
	missed = m->lat_missed;
	lane = p->lane.open;
	spin_unlock_irq(&p->lock);
	sent += lane_sent;
	/* what was sent and is no longer in flight; exact when idle */
	done = sent > m_inflight ? sent - m_inflight : 0;
	DMEMIT(" pool_queued=%u pool_sent=%llu pool_by_reservation=%llu",
	       queued, sent, by_res);
	DMEMIT(" pool_inflight=%u pool_depth=%u pool_cost=%s", inflight, depth,
	       cost == SL_COST_BYTES ? "bytes" : "iops");
	DMEMIT(" pool_member_inflight=%u pool_stalled=%d pool_stalls=%llu",
	       m_inflight, stalled, stalls);
	DMEMIT(" pool_depth_auto=%d pool_depth_why=%s pool_lat0_us=%llu",
	       depth_auto, why, lat0 / NSEC_PER_USEC);
	DMEMIT(" pool_anticipated=%llu pool_think_us=%llu", anticipated,
	       think / NSEC_PER_USEC);
	DMEMIT(" pool_latency_us=%llu pool_latency_missed=%llu",
	       target / NSEC_PER_USEC, missed);
	DMEMIT(" pool_done=%llu pool_wait_ns=%llu pool_svc_ns=%llu", done,
	       wait_ns, svc_ns);
	DMEMIT(" pool_timed=%llu pool_lane=%d pool_lane_sent=%llu", timed, lane,
	       lane_sent);
	DMEMIT(" pool_lane_credits=%d", credits);
	*szp = sz;
}

static struct sluice_policy_type weight_policy = {
	.name = "weight",
	.version = {1, 0, 0},
	.owner = THIS_MODULE,
	.attach = weight_attach,
	.detach = weight_detach,
	.set = weight_set,
	.lane = weight_lane,
	.lane_slow = weight_lane_slow,
	.admit = weight_admit,
	.complete = weight_complete,
	.drain = weight_drain,
	.reopen = weight_reopen,
	.message = weight_message,
	.status = weight_status,
};

static int __init dm_sluice_weight_init(void)
{
	int r;

	weight_wq = alloc_workqueue("kdmsluice-weight",
				    WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!weight_wq)
		return -ENOMEM;
	r = sluice_policy_register(&weight_policy);
	if (r)
		destroy_workqueue(weight_wq);
	return r;
}

static void __exit dm_sluice_weight_exit(void)
{
	sluice_policy_unregister(&weight_policy);
	destroy_workqueue(weight_wq);
}

module_init(dm_sluice_weight_init);
module_exit(dm_sluice_weight_exit);

MODULE_DESCRIPTION(DM_NAME " sluice weight policy: shares and reservations in a pool");
MODULE_AUTHOR("The sluice developers");
MODULE_LICENSE("GPL");
