/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pool's depth, set by the pool itself (depth=auto): the fewest bios in
 * flight to the device that keep its throughput.
 *
 * A pool deeper than the device's own parallelism hands the choice of who
 * goes next to the device's queue, and the pool's weights stop counting: a
 * volume that keeps one bio outstanding waits behind everyone's. A pool
 * shallower than it leaves the device idle. Where the knee lies is not
 * known, and service times do not find it: they also grow with the CPU's
 * load and with whatever else uses the device. Throughput does, so the
 * controller climbs it, as a hill: it measures the rate (completions per
 * second) over windows of at least SL_DEPTH_WIN_DONE completions and
 * SL_DEPTH_WIN_NS, keeps a moving average of it at the depth in force, and
 * every few windows tries another depth for two windows, judged on their
 * mean rate:
 *
 *   up by step     kept if the rate rose by at least half of step / depth
 *                  (half of what a device with room to spare would give),
 *                  or by a tenth;
 *   down by step   kept if the rate fell by less than both, and the time
 *                  a bio spends in the pool and the device together grew
 *                  by less than half.
 *
 * The time is for a fast device served by several submitters, where a bio
 * the pool holds waits for the worker's wake-up, many services long: one
 * bio fewer than there are submitters makes half of them wait so, and the
 * rate shows it less clearly than the time does (on a busy or virtual CPU
 * its noise hides it). On a slower device a step down moves queueing from
 * the device to the pool, and the time stays as it was. A step down whose
 * bios plainly wait (see sl_depth_down_failing()) is judged before its
 * first window ends.
 *
 * So it settles at the smallest depth past which more depth adds less than
 * half its share of throughput, and less than a tenth: the tenth is for a
 * step from one bio to two, where a device of parallelism one still gains
 * from a bio waiting at it (it starts the moment the last completes,
 * without waiting for the pool's dispatch). step is an eighth of the depth (at least
 * one), or the whole depth while every climb so far succeeded (a doubling
 * start). A probe that is kept is followed by another the same way; one
 * that is not turns the direction, and doubles the windows until the next
 * probe (up to SL_DEPTH_SETTLE_MAX), so a settled pool spends few windows
 * off its depth. A pool its volumes do not fill (the depth does not bind)
 * keeps doubling them after each failed step down, up to
 * SL_DEPTH_SETTLE_IDLE_MAX, for as long as its rate and time stay where
 * they were at that step: each such step makes bios wait that would not
 * have, and with fast submitters on a fast device two windows at one bio
 * fewer every 32 cost about 2% of the rate. A change of load, or a window
 * in which the depth binds, brings the probes back to SL_DEPTH_SETTLE_MAX
 * apart. Climbs are tried only after a window in which the depth
 * bound (bios waited in the pool for three completions in four, or for half
 * as long as their service on average): more depth cannot raise a rate the
 * volumes' own demand sets.
 *
 * The unloaded service time L0 (the least window mean over the last two
 * epochs of SL_DEPTH_EPOCH_NS) is kept for the anticipation window
 * (sluice-think.h). The controller is integer arithmetic on the caller's
 * clock, so that the host tests drive it through a simulated disk.
 */
#ifndef SLUICE_DEPTH_H
#define SLUICE_DEPTH_H

#include "sluice-core.h"

#define SL_DEPTH_MAX 4096
/*
 * Where depth=auto starts: one bio, then doubled while each doubling
 * raises the rate.
 */
#define SL_DEPTH_START 1
#define SL_DEPTH_WIN_DONE 32
#define SL_DEPTH_WIN_NS (40ULL * 1000 * 1000)
/* A window of fewer completions than SL_DEPTH_WIN_DONE ends here. */
#define SL_DEPTH_WIN_MAX_NS (1000ULL * 1000 * 1000)
#define SL_DEPTH_EPOCH_NS (5000ULL * 1000 * 1000)
/* Windows at the depth in force before a probe: at first, and at most. */
#define SL_DEPTH_SETTLE_MIN 2
#define SL_DEPTH_SETTLE_MAX 32
/*
 * At most, between steps down that failed while the depth did not bind and
 * the load stayed as it was (rate within a quarter, time within a half).
 */
#define SL_DEPTH_SETTLE_IDLE_MAX 256
/* Windows a probe lasts. */
#define SL_DEPTH_PROBE_WINDOWS 2
/*
 * A step down is judged before its window ends once this many of its bios
 * are timed at this many times base's time (see sl_depth_down_failing()).
 */
#define SL_DEPTH_EARLY_TIMED 8
#define SL_DEPTH_EARLY_TIMES 4

enum sl_depth_why {
	SL_DEPTH_WHY_START,	/* not measured yet */
	SL_DEPTH_WHY_FIXED,	/* set by hand */
	SL_DEPTH_WHY_SHRUNK,	/* less depth kept the rate */
	SL_DEPTH_WHY_GROWN,	/* more depth raised the rate */
	SL_DEPTH_WHY_PROBE,	/* trying another depth for a window */
	SL_DEPTH_WHY_STEADY,	/* neither way helped at the last probe */
	SL_DEPTH_WHY_NR
};

struct sl_depth {
	u32 depth;		/* in force: base, or a probe's */
	u32 fixed;		/* set by hand; 0: auto */
	u8 why;			/* enum sl_depth_why */
	bool doubling;		/* every climb so far raised the rate */
	bool up;		/* the next probe goes up, else down */
	u32 base;		/* the depth settled on */
	u64 base_rate;		/* its rate, averaged (3/4 old); 0: none yet */
	/* a bio's time in pool and device, likewise; 0: none timed yet */
	u64 base_time;
	u32 settled;		/* windows at base since the last probe */
	u32 settle;		/* windows to wait before the next */
	/* base_rate and base_time when a step down last failed unbound */
	u64 idle_rate, idle_time;
	bool bound;		/* the depth bound in the last window at base */
	/* the probe under way: its windows so far, their rates and times */
	u32 probe_windows, probe_timed;	/* timed: windows with a time */
	u64 probe_rate, probe_time;
	/* the window: its service and pool-wait times, summed over timed */
	u64 win_start, win_lat_sum, win_wait_sum;
	u32 win_done, win_timed, win_bound;
	/* the unloaded service time: [0] this epoch, [1] the last; 0 = none */
	u64 lat0[2];
	u64 epoch_start;
	u64 windows;		/* evaluated, for the tests */
};

void sl_depth_init(struct sl_depth *d, u32 fixed, u64 now);
/* depth=<n> (1..SL_DEPTH_MAX) by hand, or 0 for auto. */
void sl_depth_set_fixed(struct sl_depth *d, u32 fixed, u64 now);
/*
 * A bio completed svc_ns after it was sent, having waited wait_ns in the
 * pool before; bound says the depth was binding (other bios were waiting
 * in the pool). True when the depth in force changed.
 */
bool sl_depth_done(struct sl_depth *d, u64 svc_ns, u64 wait_ns, bool bound,
		   u64 now);
/*
 * done completions at once, bound of them with the depth binding, timed of
 * them with their service and pool-wait times summed (the rate counts them
 * all, the times are means over the timed): completions counted where no
 * lock is taken and folded in later, and timed by a sample (the pool's
 * lane, see sluice-weight.c). A window ends at the batch that fills it,
 * so it may hold up to a batch more than SL_DEPTH_WIN_DONE; one with
 * nothing timed leaves the times alone.
 */
bool sl_depth_done_many(struct sl_depth *d, u32 done, u32 timed, u64 svc_sum,
			u64 wait_sum, u32 bound, u64 now);
/* The unloaded service time, ns; 0 before the first window. */
u64 sl_depth_lat0(const struct sl_depth *d);
const char *sl_depth_why_name(u8 why);

#endif
