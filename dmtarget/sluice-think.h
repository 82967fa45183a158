/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Anticipation for volumes that keep few bios outstanding.
 *
 * A volume that reads one block, looks at it, and reads the next keeps one
 * bio outstanding. When that bio completes, the volume has nothing queued
 * for the time it takes to submit the next (its think time), and a work-
 * conserving pool gives the freed slot to a neighbour that always has bios
 * waiting; the volume's next bio then waits for a slot, however far below
 * its share it is. CFQ and BFQ idle the disk for such a queue; the pool keeps
 * one slot of its depth free for it instead, for a bounded window, and lets
 * the others use the rest.
 *
 * Each member measures its think time: from the completion that left it
 * with nothing in flight or queued to its next bio, as a moving average (7/8
 * old, 1/8 new) of samples capped at SL_THINK_CAP_NS, so that one long pause
 * does not end anticipation for good. When its last bio completes, its next
 * is expected for a window if:
 *   - at least SL_THINK_SAMPLES samples were seen;
 *   - its mean think time is short: at most SL_THINK_LONG_NS, and at most
 *     four of the device's unloaded service times (a volume that thinks
 *     long is never waited for);
 * the window is twice the mean think time plus SL_THINK_SLACK_NS, at most
 * 2 * SL_THINK_LONG_NS. While it is expected, whenever a slot is free (a bio
 * completed), the pool keeps it for the member if it would be served next
 * were it backlogged (its finish tag is at or before every backlogged
 * volume's start tag: a volume at or above its share never holds a slot),
 * with at most max(1, depth / 8) slots kept at once. Its next bio, or the
 * window's end, gives the slot back.
 *
 * The cost: at most an eighth of the depth idles, each slot for at most one
 * window, and only for a volume owed service. At depth 1 (a disk that serves
 * one bio at a time) the whole disk idles for the window, as CFQ and BFQ
 * idle it for a queue whose turn it is.
 */
#ifndef SLUICE_THINK_H
#define SLUICE_THINK_H

#include "sluice-core.h"

#define SL_THINK_SAMPLES 4
#define SL_THINK_CAP_NS (8ULL * 1000 * 1000)
#define SL_THINK_LONG_NS (2ULL * 1000 * 1000)
#define SL_THINK_SLACK_NS (20ULL * 1000)

struct sl_think {
	u64 idle_since;		/* when it was left with nothing; 0: busy */
	u64 mean_ns;
	u32 samples;		/* up to SL_THINK_SAMPLES */
};

/* Its last bio completed, and nothing is queued. */
static inline void sl_think_idle(struct sl_think *t, u64 now)
{
	t->idle_since = now ? now : 1;
}

/* A bio arrived. */
void sl_think_busy(struct sl_think *t, u64 now);

/*
 * How long to expect its next bio now that it went idle, ns; 0: do not.
 * lat0 is the device's unloaded service time (0: not known yet).
 */
u64 sl_think_window(const struct sl_think *t, u64 lat0);

/* The slots a pool of depth may keep at once. */
static inline u32 sl_think_slots(u32 depth)
{
	return depth / 8 ? depth / 8 : 1;
}

#endif
