// SPDX-License-Identifier: GPL-2.0
/*
 * The throttle stage of dm-sluice: buckets and the bios held for them, in
 * arrival order per direction, released by a worker woken by an hrtimer.
 * A volume has one for its own limits, a shared limit group one for the
 * group's. Callers hold s->lock for the __ functions.
 *
 * Batch mode. A bio that passes its buckets at once costs the lock, a read
 * of the clock and the bucket arithmetic, as much as the rest of its path;
 * with limits far above what the volume does, every bio pays that for a
 * wait that never comes. So while every bucket has room for what all CPUs
 * could pass before they are next charged (the guard), a volume's stage is
 * in batch mode: its bios pass without the lock or the clock, each CPU
 * counts them (struct sluice_batch), and a CPU that has passed
 * SLUICE_BATCH_IOS bios or SLUICE_BATCH_BYTES of a direction since the last
 * fold charges every CPU's to the buckets at once
 * (sl_throttle_charge_many()). The stage leaves batch mode when a fold
 * finds less room than the guard; it enters it, on the locked path, when a
 * bio passed, nothing is held, and there is room for twice the guard. The
 * guard counts every online CPU with one bio more than its bound in each
 * direction, so the buckets are charged everything before any could run
 * past its depth: batch mode passes only what the locked path would have
 * passed at once, charged a little later. Bios larger than batch_max, and
 * discards, take the locked path.
 */
#include <linux/ktime.h>
#include <linux/percpu.h>

#include "sluice-target.h"

static enum hrtimer_restart sluice_stage_timer_fn(struct hrtimer *t)
{
	struct sluice_stage *s = container_of(t, struct sluice_stage, timer);

	queue_work(sluice_wq, &s->dispatch);
	return HRTIMER_NORESTART;
}

void sluice_stage_init(struct sluice_stage *s, work_func_t dispatch)
{
	int d;

	spin_lock_init(&s->lock);
	for (d = 0; d < 2; d++)
		INIT_LIST_HEAD(&s->queue[d]);
	hrtimer_init(&s->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	s->timer.function = sluice_stage_timer_fn;
	INIT_WORK(&s->dispatch, dispatch);
}

/* A volume's stage may go into batch mode. */
int sluice_stage_batch_init(struct sluice_stage *s)
{
	s->pcpu = alloc_percpu(struct sluice_batch);
	return s->pcpu ? 0 : -ENOMEM;
}

/* When its last user goes: nothing is held, nothing may run after. */
void sluice_stage_stop(struct sluice_stage *s)
{
	hrtimer_cancel(&s->timer);
	cancel_work_sync(&s->dispatch);
	WARN_ON_ONCE(s->nr_queued);
	free_percpu(s->pcpu);
	s->pcpu = NULL;
}

/* Make lim the stage's limits, carrying the buckets over (see core). */
void sluice_stage_install(struct sluice_stage *s, const struct sl_limits *lim)
{
	u64 now = ktime_get_ns();

	spin_lock(&s->lock);
	/* what passed under the old limits is charged at them */
	__sluice_stage_end_batch(s, now);
	sl_throttle_rescale(&s->thr, &s->lim, lim, now);
	s->lim = *lim;
	s->batch_max = lim->iops_size && lim->iops_size < SLUICE_BATCH_BYTES ?
		       lim->iops_size : SLUICE_BATCH_BYTES;
	WRITE_ONCE(s->limited, lim->any);
	spin_unlock(&s->lock);
}

/* What every CPU may pass in batch mode before its bios are charged. */
static void sluice_stage_guard(const struct sluice_stage *s, u64 *nr, u64 *bytes)
{
	u64 cpus = num_online_cpus();

	/* both directions; one bio past the bound, one after a migration */
	*nr = 2 * cpus * (SLUICE_BATCH_IOS + 2);
	*bytes = 2 * cpus * (SLUICE_BATCH_BYTES + 2ULL * s->batch_max);
}

/* Charge the buckets what every CPU passed in batch mode since the last. */
void __sluice_stage_fold(struct sluice_stage *s, u64 now)
{
	u64 ios[2] = { 0, 0 }, bytes[2] = { 0, 0 }, gnr, gbytes;
	int cpu, d;

	if (!s->pcpu)
		return;
	for_each_possible_cpu(cpu) {
		struct sluice_batch *b = per_cpu_ptr(s->pcpu, cpu);

		for (d = 0; d < 2; d++) {
			/* the owner may be adding: what it added later is next */
			u64 n = READ_ONCE(b->ios[d]), by = READ_ONCE(b->bytes[d]);

			ios[d] += n - b->folded_ios[d];
			bytes[d] += by - b->folded_bytes[d];
			WRITE_ONCE(b->folded_ios[d], n);
			WRITE_ONCE(b->folded_bytes[d], by);
		}
	}
	for (d = 0; d < 2; d++)
		sl_throttle_charge_many(&s->thr, &s->lim, now, d, ios[d], bytes[d]);
	if (!s->batch)
		return;
	sluice_stage_guard(s, &gnr, &gbytes);
	if (!sl_throttle_has_room(&s->thr, &s->lim, now, gnr, gbytes))
		WRITE_ONCE(s->batch, false);
}

/*
 * A bio passed on the locked path: go into batch mode if nothing is held
 * and there is room for twice the guard (looked at once a millisecond).
 */
void __sluice_stage_try_batch(struct sluice_stage *s, u64 now)
{
	u64 gnr, gbytes;

	if (s->batch || !s->pcpu || s->nr_queued || !s->lim.any ||
	    now - s->batch_tried < NSEC_PER_MSEC)
		return;
	s->batch_tried = now;
	sluice_stage_guard(s, &gnr, &gbytes);
	if (sl_throttle_has_room(&s->thr, &s->lim, now, 2 * gnr, 2 * gbytes))
		WRITE_ONCE(s->batch, true);
}

/* Leave batch mode, charging what it passed (a bio may still be passing). */
void __sluice_stage_end_batch(struct sluice_stage *s, u64 now)
{
	WRITE_ONCE(s->batch, false);
	__sluice_stage_fold(s, now);
}

/* Arm the timer for expires unless it is already due earlier. */
void __sluice_stage_arm(struct sluice_stage *s, u64 expires)
{
	ktime_t when = ns_to_ktime(expires);

	if (hrtimer_is_queued(&s->timer) &&
	    ktime_compare(hrtimer_get_expires(&s->timer), when) <= 0)
		return;
	hrtimer_start_range_ns(&s->timer, when, 20 * NSEC_PER_USEC,
			       HRTIMER_MODE_ABS);
}

/* Which of io's stages s is: SLUICE_CHARGED_VOL or SLUICE_CHARGED_GROUP. */
static u8 sluice_stage_bit(const struct sluice_stage *s, const struct sluice_io *io)
{
	return s == &io->vol->s ? SLUICE_CHARGED_VOL : SLUICE_CHARGED_GROUP;
}

void __sluice_stage_charge(struct sluice_stage *s, struct sluice_io *io, u64 now)
{
	sl_throttle_charge(&s->thr, &s->lim, now, io->dir, io->bytes,
			   io->count_bytes);
	io->charged |= sluice_stage_bit(s, io);
}

/*
 * A bio this stage charged goes back to dm, to be charged again: take the
 * charge back (at the limits in force now).
 */
void sluice_stage_refund(struct sluice_stage *s, struct sluice_io *io)
{
	u8 bit = sluice_stage_bit(s, io);

	if (!(io->charged & bit))
		return;
	io->charged &= ~bit;
	spin_lock(&s->lock);
	sl_throttle_refund(&s->thr, &s->lim, ktime_get_ns(), io->dir, io->bytes,
			   io->count_bytes);
	spin_unlock(&s->lock);
}

/*
 * Charge io and return 0 if it may go now: nothing of its direction waits
 * before it and the buckets allow it. Otherwise the ns it must wait, or
 * U64_MAX when others of its direction wait before it (the timer is armed
 * for them already).
 */
u64 __sluice_stage_admit(struct sluice_stage *s, struct sluice_io *io, u64 now)
{
	u64 wait;

	if (!list_empty(&s->queue[io->dir]))
		return U64_MAX;
	wait = sl_throttle_admit(&s->thr, &s->lim, now, io->dir, io->bytes,
				 io->count_bytes);
	if (!wait)
		io->charged |= sluice_stage_bit(s, io);
	return wait;
}

void __sluice_stage_hold(struct sluice_stage *s, struct sluice_io *io, u64 now)
{
	io->arrival_ns = now;
	io->seq = s->seq++;
	WRITE_ONCE(s->batch, false);
	list_add_tail(&io->entry, &s->queue[io->dir]);
	s->nr_queued++;
}

/*
 * Move held bios onto out, oldest first across both directions, charging
 * each (and counting its wait in st) unless it is being returned to dm,
 * which a REQ_NOWAIT bio never is (sluice_presuspend()). A bio held
 * max_hold_ns goes whatever the limits say (U64_MAX: no bound).
 */
void __sluice_stage_release(struct sluice_stage *s, struct sluice_stats *st,
			    struct bio_list *out, u64 now, enum sluice_release how,
			    u64 max_hold_ns)
{
	for (;;) {
		struct sluice_io *head[2] = { NULL, NULL }, *io;
		u64 wait[2] = { U64_MAX, U64_MAX };
		int d, pick = -1;

		for (d = 0; d < 2; d++) {
			if (list_empty(&s->queue[d]))
				continue;
			head[d] = list_first_entry(&s->queue[d], struct sluice_io, entry);
			wait[d] = how != SLUICE_DUE ? 0 :
				  sl_throttle_wait(&s->thr, &s->lim, now, d,
						   head[d]->count_bytes);
			if (max_hold_ns != U64_MAX) {
				u64 held = now - head[d]->arrival_ns;

				wait[d] = held >= max_hold_ns ? 0 :
					  min(wait[d], max_hold_ns - held);
			}
			if (!wait[d] && (pick < 0 || head[d]->seq < head[pick]->seq))
				pick = d;
		}
		if (pick < 0) {
			u64 next = min(wait[0], wait[1]);

			if (next != U64_MAX)
				__sluice_stage_arm(s, now + next);
			return;
		}
		io = head[pick];
		list_del(&io->entry);
		s->nr_queued--;
		if (how != SLUICE_RETURN || io->nowait) {
			__sluice_stage_charge(s, io, now);
			sluice_stats_wait(st, io, sluice_stage_bit(s, io), now - io->arrival_ns);
		}
		bio_list_add(out, sluice_io_bio(io));
	}
}

void sluice_merge_by_seq(struct bio_list *a, struct bio_list *b)
{
	struct bio_list out = BIO_EMPTY_LIST;
	struct bio *x = bio_list_pop(a), *y = bio_list_pop(b);

	while (x || y) {
		if (!y || (x && sluice_bio_io(x)->seq < sluice_bio_io(y)->seq)) {
			bio_list_add(&out, x);
			x = bio_list_pop(a);
		} else {
			bio_list_add(&out, y);
			y = bio_list_pop(b);
		}
	}
	*a = out;
}
