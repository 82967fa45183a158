// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's self-set depth; see sluice-depth.h for the model.
 */
#include "sluice-depth.h"

static const char * const sl_depth_why_names[SL_DEPTH_WHY_NR] = {
	[SL_DEPTH_WHY_START] = "start",
	[SL_DEPTH_WHY_FIXED] = "fixed",
	[SL_DEPTH_WHY_SHRUNK] = "shrunk",
	[SL_DEPTH_WHY_GROWN] = "grown",
	[SL_DEPTH_WHY_PROBE] = "probe",
	[SL_DEPTH_WHY_STEADY] = "steady",
};

const char *sl_depth_why_name(u8 why)
{
	return why < SL_DEPTH_WHY_NR ? sl_depth_why_names[why] : "?";
}

static void sl_depth_window_reset(struct sl_depth *d, u64 now)
{
	d->win_start = now;
	d->win_lat_sum = 0;
	d->win_wait_sum = 0;
	d->win_done = 0;
	d->win_timed = 0;
	d->win_bound = 0;
}

void sl_depth_init(struct sl_depth *d, u32 fixed, u64 now)
{
	*d = (struct sl_depth){ 0 };
	d->epoch_start = now;
	sl_depth_set_fixed(d, fixed, now);
}

void sl_depth_set_fixed(struct sl_depth *d, u32 fixed, u64 now)
{
	if (fixed > SL_DEPTH_MAX)
		fixed = SL_DEPTH_MAX;
	d->fixed = fixed;
	if (fixed) {
		d->depth = fixed;
		d->base = fixed;
		d->why = SL_DEPTH_WHY_FIXED;
	} else if (d->why == SL_DEPTH_WHY_FIXED || !d->depth) {
		/* auto (again): climb from the start; L0 learnt is kept */
		d->depth = SL_DEPTH_START;
		d->base = SL_DEPTH_START;
		d->base_rate = 0;
		d->doubling = true;
		d->up = true;
		d->settled = 0;
		d->settle = SL_DEPTH_SETTLE_MIN;
		d->why = SL_DEPTH_WHY_START;
	}
	sl_depth_window_reset(d, now);
}

static u64 sl_min_set(u64 a, u64 b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

u64 sl_depth_lat0(const struct sl_depth *d)
{
	return sl_min_set(d->lat0[0], d->lat0[1]);
}

/* Every SL_DEPTH_EPOCH_NS the unloaded service time's estimate ages. */
static void sl_depth_epoch(struct sl_depth *d, u64 now)
{
	if (now - d->epoch_start < SL_DEPTH_EPOCH_NS)
		return;
	d->epoch_start = now;
	d->lat0[1] = d->lat0[0];
	d->lat0[0] = 0;
}

/* Whether a moved from b by more than num/den of b, either way. */
static bool sl_depth_moved(u64 a, u64 b, u32 num, u32 den)
{
	return a * den > b * (den + num) || a * den < b * (den - num);
}

/*
 * A probe's windows ended, with their mean rate and time in pool and
 * device: keep its depth, or go back to base.
 */
static void sl_depth_judge(struct sl_depth *d, u64 rate, u64 time)
{
	bool up = d->depth > d->base;
	u64 step = up ? d->depth - d->base : d->base - d->depth;
	u64 twice = 2ULL * d->base;
	u32 cap;
	bool keep;

	/*
	 * The threshold is half of step / base, at most a tenth: up, the
	 * rate rose by it; down, it fell by less. A climb that raised the
	 * rate is kept even if the new depth no longer binds: that is the
	 * depth the demand needed.
	 */
	if (up)
		keep = rate * twice >= d->base_rate * (twice + step) ||
		       rate * 10 >= d->base_rate * 11;
	else
		keep = rate * twice >= d->base_rate * (twice - step) &&
		       rate * 10 >= d->base_rate * 9 &&
		       (!d->base_time || !time || time * 2 < d->base_time * 3);
	d->settled = 0;
	if (keep) {
		d->base = d->depth;
		d->base_rate = rate;
		if (time)
			d->base_time = time;
		d->settle = SL_DEPTH_SETTLE_MIN;
		d->why = up ? SL_DEPTH_WHY_GROWN : SL_DEPTH_WHY_SHRUNK;
		return;
	}
	d->depth = d->base;
	if (up)
		d->doubling = false;
	d->up = !d->up;
	cap = SL_DEPTH_SETTLE_MAX;
	if (!up && !d->bound) {
		cap = SL_DEPTH_SETTLE_IDLE_MAX;
		d->idle_rate = d->base_rate;
		d->idle_time = d->base_time;
	}
	d->settle = d->settle * 2 < cap ? d->settle * 2 : cap;
	d->why = SL_DEPTH_WHY_STEADY;
}

/*
 * A step down whose bios plainly wait for the worker: SL_DEPTH_EARLY_TIMED
 * of them timed, at SL_DEPTH_EARLY_TIMES their time in pool and device at
 * base. Judged then, not at the window's end: with fast submitters on a
 * fast device each such step held the pool at the lower depth for a whole
 * SL_DEPTH_WIN_NS, a twentieth of the time while probes came every
 * SL_DEPTH_SETTLE_MAX windows.
 */
static bool sl_depth_down_failing(const struct sl_depth *d)
{
	return d->depth < d->base && d->base_time &&
	       d->win_timed >= SL_DEPTH_EARLY_TIMED &&
	       d->win_lat_sum + d->win_wait_sum >=
	       SL_DEPTH_EARLY_TIMES * d->base_time * d->win_timed;
}

/* A window at base: average its rate and time in, and start a probe when due. */
static void sl_depth_settle(struct sl_depth *d, u64 rate, u64 time, bool bound)
{
	u64 step, to;

	d->base_rate = d->base_rate ? (3 * d->base_rate + rate) / 4 : rate;
	if (time)
		d->base_time = d->base_time ? (3 * d->base_time + time) / 4 : time;
	d->bound = bound;
	/* backing off from an unbound pool's steps down: has the load moved? */
	if (d->settle > SL_DEPTH_SETTLE_MAX &&
	    (bound || sl_depth_moved(d->base_rate, d->idle_rate, 1, 4) ||
	     (d->idle_time && sl_depth_moved(d->base_time, d->idle_time, 1, 2))))
		d->settle = SL_DEPTH_SETTLE_MAX;
	if (++d->settled < d->settle)
		return;
	/* a climb needs a depth that binds; a descent needs room below */
	if ((d->up && !bound) || (!d->up && d->base == 1))
		d->up = !d->up;
	if ((d->up && !bound) || (!d->up && d->base == 1)) {
		d->settled = 0;
		return;
	}
	step = d->base / 8 ? d->base / 8 : 1;
	if (d->up && d->doubling)
		step = d->base;
	if (!d->up && step >= d->base)
		step = d->base - 1;
	to = d->up ? d->base + step : d->base - step;
	if (to > SL_DEPTH_MAX)
		to = SL_DEPTH_MAX;
	if (to == d->base) {
		d->settled = 0;
		return;
	}
	d->depth = (u32)to;
	d->probe_windows = 0;
	d->probe_rate = 0;
	d->probe_time = 0;
	d->probe_timed = 0;
	d->why = SL_DEPTH_WHY_PROBE;
}

bool sl_depth_done(struct sl_depth *d, u64 svc_ns, u64 wait_ns, bool bound,
		   u64 now)
{
	return sl_depth_done_many(d, 1, 1, svc_ns, wait_ns, bound, now);
}

bool sl_depth_done_many(struct sl_depth *d, u32 done, u32 timed, u64 svc_sum,
			u64 wait_sum, u32 bound, u64 now)
{
	u64 elapsed = now - d->win_start, lat, rate, time;
	u32 old = d->depth;
	bool full, binds;

	if (!done)
		return false;
	d->win_done += done;
	d->win_timed += timed;
	d->win_lat_sum += svc_sum;
	d->win_wait_sum += wait_sum;
	d->win_bound += bound;
	full = d->win_done >= SL_DEPTH_WIN_DONE;
	if (!full || (elapsed < SL_DEPTH_WIN_NS && !sl_depth_down_failing(d))) {
		if (elapsed < SL_DEPTH_WIN_MAX_NS)
			return false;
		/* a slow window: its service time counts, its rate says little */
		if (d->win_timed >= 4) {
			sl_depth_epoch(d, now);
			d->lat0[0] = sl_min_set(d->lat0[0],
						d->win_lat_sum / d->win_timed);
		}
		sl_depth_window_reset(d, now);
		return false;
	}
	d->windows++;
	sl_depth_epoch(d, now);
	time = 0;
	if (d->win_timed) {
		lat = d->win_lat_sum / d->win_timed;
		d->lat0[0] = sl_min_set(d->lat0[0], lat ? lat : 1);
		time = (d->win_lat_sum + d->win_wait_sum) / d->win_timed;
	}
	rate = (u64)d->win_done * SL_NSEC_PER_SEC / (elapsed ? elapsed : 1);
	/*
	 * The depth decided the rate: bios waited in the pool for three
	 * completions in four, or they waited there at least half as long as
	 * the device took to serve them (a fast device, whose submitters
	 * seldom meet, but each bio that waits for the worker's wake-up loses
	 * many services' time).
	 */
	binds = d->win_bound * 4 >= d->win_done * 3 ||
		(d->win_timed && d->win_wait_sum >= d->win_lat_sum / 2);
	sl_depth_window_reset(d, now);
	if (d->fixed)
		return false;
	if (d->depth == d->base) {
		sl_depth_settle(d, rate, time, binds);
		return d->depth != old;
	}
	/* a probe is judged on the mean of its windows: one is too noisy */
	d->probe_rate += rate;
	if (time) {
		d->probe_time += time;
		d->probe_timed++;
	}
	/*
	 * One window is enough for a step down that is plainly worse (half
	 * the rate, or twice the time): on a fast device with several
	 * submitters, the second window would cost as much again.
	 */
	if (++d->probe_windows < SL_DEPTH_PROBE_WINDOWS &&
	    !(d->depth < d->base &&
	      (rate * 2 < d->base_rate ||
	       (time && d->base_time && time >= 2 * d->base_time))))
		return false;
	/* time 0: none timed, judged on the rate alone */
	sl_depth_judge(d, d->probe_rate / d->probe_windows,
		       d->probe_timed ? d->probe_time / d->probe_timed : 0);
	return d->depth != old;
}
