/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pool's depth, set by the pool itself (depth=auto): the fewest bios in
 * flight to the device that keep its throughput within 5% of the most it
 * delivers.
 *
 * A pool deeper than the device's own parallelism hands the choice of who
 * goes next to the device's queue, and the pool's weights stop counting: a
 * volume that keeps one bio outstanding waits behind everyone's. A pool
 * shallower than it leaves the device idle. So the pool measures, over
 * windows of at least SL_DEPTH_WIN_DONE completions and SL_DEPTH_WIN_NS,
 * the mean service time L of its bios (sent to completed) and its rate X,
 * and keeps:
 *
 *   L0    the unloaded service time: the least window mean over the last
 *         two epochs (SL_DEPTH_EPOCH_NS each), so that it follows a device
 *         that becomes slower;
 *   Xmax  the most completions per second a window saw while the depth was
 *         binding (bios waited in the pool), likewise over two epochs.
 *
 * Service times vary, and each window's L and X with them: L by e, two
 * standard errors of its mean (the spread of its service times over the
 * square root of their number), X by as much relatively and by the whole
 * completions each bio in flight makes in the window, give or take one.
 * The least of a hundred such window means is some three standard errors
 * below the device's own, the most of their rates as far above, and a
 * bare comparison with them finds most windows slow. So a window offers
 * L + e to L0 and X - e to Xmax, and below L stands for L - e and X for
 * X + e: a change within a window's noise is none. Compared, L's e comes
 * from the device's own spread (a moving average over the windows within
 * 5% of L0), not the window's: what queueing in the device adds to the
 * spread is what the rules look for, not noise.
 *
 * Beyond the device's parallelism P, bios queue in the device: L grows with
 * the depth and X does not (Little's law: depth = X * L). So, in a window
 * where the depth was binding:
 *
 *   L > 1.10 * L0          latency: shrink towards depth * 1.05 * L0 / L,
 *                          the depth that would keep L near L0; never below
 *                          a floor found this epoch (below);
 *   X < 0.95 * Xmax and L <= 1.10 * L0
 *                          throughput: the device has idle parallelism;
 *                          grow by a quarter;
 *   after a shrink, X < 0.95 * the rate before it
 *                          throughput: undo it, and make that depth the
 *                          floor until the epoch ends (a device whose
 *                          latency rises before its throughput stops);
 *   the first of an epoch  remeasure: an eighth lower for a window, undone
 *                          as a shrink is if it costs throughput. L0 ages
 *                          out, and a depth just over P, which the rules
 *                          leave alone up to 1.10 * L0, would otherwise
 *                          make the next L0, from which the next probe
 *                          climbs: the depth crept up an epoch at a time;
 *   L <= 1.05 * L0         probe: grow by an eighth while no shrink was
 *                          needed this epoch, else by one bio once per
 *                          SL_DEPTH_PROBE_NS, to find a device that became
 *                          faster or more parallel;
 *   otherwise              steady.
 *
 * A window where the depth did not bind says nothing about the device's
 * limit, and only updates L0. The controller is integer arithmetic on the
 * caller's clock, so that the host tests drive it through a simulated disk.
 */
#ifndef SLUICE_DEPTH_H
#define SLUICE_DEPTH_H

#include "sluice-core.h"

#define SL_DEPTH_MAX 4096
/*
 * Where depth=auto starts: one bio, whose service time is the unloaded one
 * (a deeper start on a disk of less parallelism would never see it), then
 * grown by an eighth a window while the service time holds.
 */
#define SL_DEPTH_START 1
#define SL_DEPTH_WIN_DONE 16
#define SL_DEPTH_WIN_NS (20ULL * 1000 * 1000)
/* A window of fewer completions than SL_DEPTH_WIN_DONE ends here. */
#define SL_DEPTH_WIN_MAX_NS (1000ULL * 1000 * 1000)
#define SL_DEPTH_EPOCH_NS (5000ULL * 1000 * 1000)
#define SL_DEPTH_PROBE_NS (1000ULL * 1000 * 1000)
/* A service time's distance from the pivot counts up to this: 2^31 ns. */
#define SL_DEPTH_DEV_MAX (1ULL << 31)

enum sl_depth_why {
	SL_DEPTH_WHY_START,	/* not measured yet */
	SL_DEPTH_WHY_FIXED,	/* set by hand */
	SL_DEPTH_WHY_LATENCY,	/* shrunk: bios queued in the device */
	SL_DEPTH_WHY_THROUGHPUT,	/* grown: the device had room */
	SL_DEPTH_WHY_PROBE,	/* grown to look for more room, or lowered
				 * for a window to measure L0 again
				 */
	SL_DEPTH_WHY_STEADY,	/* measured, and right */
	SL_DEPTH_WHY_IDLE,	/* the depth has not bound lately */
	SL_DEPTH_WHY_NR
};

struct sl_depth {
	u32 depth;		/* in force */
	u32 fixed;		/* set by hand; 0: auto */
	u8 why;			/* enum sl_depth_why */
	bool shrunk;		/* a shrink this epoch: probe one by one */
	bool remeasure;		/* an epoch began: a window lower, for L0 */
	u32 floor;		/* no shrink below this, this epoch */
	u32 undo_depth;		/* the depth before the last shrink; 0: none */
	u64 undo_rate;		/* the rate before it */
	/* the window */
	u64 win_start, win_lat_sum;
	u64 win_pivot;		/* the last window's mean service time, ns */
	u64 win_sq_sum;		/* sum of (service time - pivot)^2, ns^2 */
	u32 win_done, win_bound;
	/* the estimates: [0] this epoch, [1] the one before; 0 = none */
	u64 lat0[2];		/* ns */
	u64 rate[2];		/* completions per second */
	u64 spread;		/* of service times unloaded, 1/1024 of mean */
	u64 epoch_start, last_probe;
	u64 windows;		/* windows evaluated, for status */
};

void sl_depth_init(struct sl_depth *d, u32 fixed, u64 now);
/* depth=<n> (1..SL_DEPTH_MAX) by hand, or 0 for auto. */
void sl_depth_set_fixed(struct sl_depth *d, u32 fixed, u64 now);
/*
 * A bio completed svc_ns after it was sent; bound says the depth was
 * binding (other bios were waiting in the pool). True when the depth in
 * force changed.
 */
bool sl_depth_done(struct sl_depth *d, u64 svc_ns, bool bound, u64 now);
/* The unloaded service time, ns; 0 before the first window. */
u64 sl_depth_lat0(const struct sl_depth *d);
const char *sl_depth_why_name(u8 why);

#endif
