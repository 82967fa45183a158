// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's self-set depth; see sluice-depth.h for the model.
 */
#include "sluice-depth.h"

static const char * const sl_depth_why_names[SL_DEPTH_WHY_NR] = {
	[SL_DEPTH_WHY_START] = "start",
	[SL_DEPTH_WHY_FIXED] = "fixed",
	[SL_DEPTH_WHY_LATENCY] = "latency",
	[SL_DEPTH_WHY_THROUGHPUT] = "throughput",
	[SL_DEPTH_WHY_PROBE] = "probe",
	[SL_DEPTH_WHY_STEADY] = "steady",
	[SL_DEPTH_WHY_IDLE] = "idle",
};

const char *sl_depth_why_name(u8 why)
{
	return why < SL_DEPTH_WHY_NR ? sl_depth_why_names[why] : "?";
}

static void sl_depth_window_reset(struct sl_depth *d, u64 now)
{
	d->win_start = now;
	d->win_lat_sum = 0;
	d->win_sq_sum = 0;
	d->win_done = 0;
	d->win_bound = 0;
}

void sl_depth_init(struct sl_depth *d, u32 fixed, u64 now)
{
	*d = (struct sl_depth){ 0 };
	d->epoch_start = now;
	d->last_probe = now;
	sl_depth_window_reset(d, now);
	sl_depth_set_fixed(d, fixed, now);
}

void sl_depth_set_fixed(struct sl_depth *d, u32 fixed, u64 now)
{
	if (fixed > SL_DEPTH_MAX)
		fixed = SL_DEPTH_MAX;
	d->fixed = fixed;
	d->undo_depth = 0;
	if (fixed) {
		d->depth = fixed;
		d->why = SL_DEPTH_WHY_FIXED;
	} else if (d->why == SL_DEPTH_WHY_FIXED || !d->depth) {
		/* auto again: from the start, with what was learnt kept */
		d->depth = SL_DEPTH_START;
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

static u32 sl_depth_clamp(u64 depth)
{
	if (depth < 1)
		return 1;
	return depth > SL_DEPTH_MAX ? SL_DEPTH_MAX : (u32)depth;
}

static u64 sl_sub_sat(u64 a, u64 b)
{
	return a > b ? a - b : 0;
}

/* floor(sqrt(x)), a bit at a time */
static u64 sl_depth_sqrt(u64 x)
{
	u64 r = 0, bit = 1ULL << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/* The spread (standard deviation) of the window's service times, ns. */
static u64 sl_depth_spread(const struct sl_depth *d, u64 lat)
{
	u64 off = lat > d->win_pivot ? lat - d->win_pivot : d->win_pivot - lat;

	if (off > SL_DEPTH_DEV_MAX)
		off = SL_DEPTH_DEV_MAX;
	/* sum (x - pivot)^2 = sum (x - mean)^2 + n (mean - pivot)^2 */
	return sl_depth_sqrt(sl_sub_sat(d->win_sq_sum / d->win_done,
					off * off));
}

/* Start a new epoch: the old estimates age by one, the floor goes. */
static void sl_depth_epoch(struct sl_depth *d, u64 now)
{
	if (now - d->epoch_start < SL_DEPTH_EPOCH_NS)
		return;
	d->epoch_start = now;
	d->lat0[1] = d->lat0[0];
	d->rate[1] = d->rate[0];
	d->lat0[0] = 0;
	d->rate[0] = 0;
	d->floor = 0;
	d->shrunk = false;
	d->remeasure = true;
}

/*
 * One window, in which the depth bound: what the depth should be now. lat
 * and rate are the window's, each give or take its noise (lat_n, rate_n):
 * a change is acted on only when it is larger than that.
 */
static u32 sl_depth_decide(struct sl_depth *d, u64 lat, u64 lat_n, u64 rate,
			   u64 rate_n, u64 now)
{
	u64 lat0 = sl_depth_lat0(d);
	u64 rate_max = d->rate[0] > d->rate[1] ? d->rate[0] : d->rate[1];
	u64 lat_lo = sl_sub_sat(lat, lat_n), rate_hi = rate + rate_n;
	u32 depth = d->depth, undo = d->undo_depth;

	d->undo_depth = 0;
	/* the last shrink cost throughput: undo it, and go no lower */
	if (undo > depth && rate_hi * 100 < d->undo_rate * 95) {
		d->floor = undo;
		d->why = SL_DEPTH_WHY_THROUGHPUT;
		return undo;
	}
	/* an epoch began: see the unloaded service time again */
	if (d->remeasure) {
		d->remeasure = false;
		if (depth > 1) {
			d->undo_depth = depth;
			d->undo_rate = sl_sub_sat(rate, rate_n);
			d->why = SL_DEPTH_WHY_PROBE;
			return depth - (depth / 8 ? depth / 8 : 1);
		}
	}
	if (lat_lo * 100 > lat0 * 110) {
		u64 want = (u64)depth * 105 * lat0 / (lat_lo * 100);

		if (want >= depth)
			want = depth - 1;
		if (want < d->floor)
			want = d->floor;
		if (want < 1)
			want = 1;
		if (want >= depth) {
			d->why = SL_DEPTH_WHY_STEADY;
			return depth;
		}
		d->shrunk = true;
		d->undo_depth = depth;
		d->undo_rate = sl_sub_sat(rate, rate_n);
		d->why = SL_DEPTH_WHY_LATENCY;
		return (u32)want;
	}
	if (rate_hi * 100 < rate_max * 95) {
		d->why = SL_DEPTH_WHY_THROUGHPUT;
		return sl_depth_clamp((u64)depth + (depth / 4 ? depth / 4 : 1));
	}
	if (lat_lo * 100 <= lat0 * 105) {
		if (!d->shrunk) {
			d->why = SL_DEPTH_WHY_PROBE;
			return sl_depth_clamp((u64)depth + (depth / 8 ? depth / 8 : 1));
		}
		if (now - d->last_probe >= SL_DEPTH_PROBE_NS) {
			d->last_probe = now;
			d->why = SL_DEPTH_WHY_PROBE;
			return sl_depth_clamp((u64)depth + 1);
		}
	}
	d->why = SL_DEPTH_WHY_STEADY;
	return depth;
}

bool sl_depth_done(struct sl_depth *d, u64 svc_ns, bool bound, u64 now)
{
	u64 elapsed = now - d->win_start, lat, rate, lat_n, rate_n, dev;
	u64 spread, root, rel;
	u32 old = d->depth;

	d->win_done++;
	d->win_lat_sum += svc_ns;
	dev = svc_ns > d->win_pivot ? svc_ns - d->win_pivot :
				      d->win_pivot - svc_ns;
	if (dev > SL_DEPTH_DEV_MAX)
		dev = SL_DEPTH_DEV_MAX;
	/* saturated, the noise only looks larger: no decision is made on it */
	d->win_sq_sum = U64_MAX - d->win_sq_sum < dev * dev ? U64_MAX :
			d->win_sq_sum + dev * dev;
	if (bound)
		d->win_bound++;
	if (d->win_done < SL_DEPTH_WIN_DONE || elapsed < SL_DEPTH_WIN_NS) {
		if (elapsed < SL_DEPTH_WIN_MAX_NS)
			return false;
		/* a slow window: too few completions to say anything */
		if (d->win_done < 4) {
			sl_depth_window_reset(d, now);
			return false;
		}
	}
	d->windows++;
	sl_depth_epoch(d, now);
	lat = d->win_lat_sum / d->win_done;
	if (!lat)
		lat = 1;
	rate = (u64)d->win_done * SL_NSEC_PER_SEC / (elapsed ? elapsed : 1);
	spread = sl_depth_spread(d, lat);
	root = sl_depth_sqrt(d->win_done);
	/* two standard errors of this window's mean */
	lat_n = 2 * spread / root;
	if (lat_n > lat)
		lat_n = lat;
	/*
	 * A rate is as noisy as the service times that make it, and more:
	 * each of the bios in flight completes a whole number of times in
	 * the window, give or take one.
	 */
	rate_n = rate * lat_n / lat +
		 rate * sl_depth_sqrt(d->depth) / d->win_done;
	if (rate_n > rate)
		rate_n = rate;
	d->win_pivot = lat;
	/*
	 * The estimates are the least and the most of many noisy windows:
	 * each window counts for what it shows at worst, so that an unlucky
	 * one does not set them beyond what the device does.
	 */
	d->lat0[0] = sl_min_set(d->lat0[0], lat + lat_n);
	/* the device's own spread, from the windows that ran unloaded */
	rel = spread * 1024 / lat;
	if (d->windows == 1)
		d->spread = rel;
	else if (lat * 100 <= sl_depth_lat0(d) * 105)
		d->spread = (7 * d->spread + rel) / 8;
	/* bound in three of four completions: the depth decided the rate */
	if (d->win_bound * 4 < d->win_done * 3) {
		if (!d->fixed && d->why != SL_DEPTH_WHY_START)
			d->why = SL_DEPTH_WHY_IDLE;
		d->undo_depth = 0;
		sl_depth_window_reset(d, now);
		return false;
	}
	if (rate - rate_n > d->rate[0])
		d->rate[0] = rate - rate_n;
	/* judged against that: the spread queueing adds is no noise */
	lat_n = 2 * d->spread * lat / 1024 / root;
	if (lat_n > lat)
		lat_n = lat;
	if (!d->fixed)
		d->depth = sl_depth_decide(d, lat, lat_n, rate, rate_n, now);
	sl_depth_window_reset(d, now);
	return d->depth != old;
}
