// SPDX-License-Identifier: GPL-2.0
/*
 * Think time and the anticipation window; see sluice-think.h.
 */
#include "sluice-think.h"

void sl_think_busy(struct sl_think *t, u64 now)
{
	u64 sample;

	if (!t->idle_since)
		return;
	sample = now - t->idle_since;
	t->idle_since = 0;
	if (sample > SL_THINK_CAP_NS)
		sample = SL_THINK_CAP_NS;
	if (t->samples < SL_THINK_SAMPLES) {
		/* the plain mean of the first few */
		t->mean_ns = (t->mean_ns * t->samples + sample) / (t->samples + 1);
		t->samples++;
		return;
	}
	t->mean_ns = (t->mean_ns * 7 + sample) / 8;
}

u64 sl_think_window(const struct sl_think *t, u64 lat0)
{
	u64 w;

	if (t->samples < SL_THINK_SAMPLES || !lat0 ||
	    t->mean_ns > SL_THINK_LONG_NS || t->mean_ns > 4 * lat0)
		return 0;
	w = 2 * t->mean_ns + SL_THINK_SLACK_NS;
	return w < 2 * SL_THINK_LONG_NS ? w : 2 * SL_THINK_LONG_NS;
}
