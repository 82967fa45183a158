// SPDX-License-Identifier: GPL-2.0
/*
 * The counters of a volume or a shared limit group. What every bio adds to
 * is per CPU (struct sluice_pcpu_stats): map and end_io add to their own
 * CPU's copy with one this_cpu instruction, no lock and no cache line shared
 * with another CPU, and status sums the copies. What only a bio that waits
 * adds to, or a rare one (an error, a discard), is a shared atomic.
 *
 * A reset does not write the other CPUs' copies, which their owners may be
 * adding to at that moment: it keeps the sums it saw as a base, and status
 * shows what was added since.
 */
#include <linux/percpu.h>

#include "sluice-target.h"

int sluice_stats_init(struct sluice_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->pcpu = alloc_percpu(struct sluice_pcpu_stats);
	return st->pcpu ? 0 : -ENOMEM;
}

void sluice_stats_free(struct sluice_stats *st)
{
	free_percpu(st->pcpu);
	st->pcpu = NULL;
}

/* The sums of every CPU's copy, as they are now. */
static void sluice_stats_add_up(struct sluice_stats *st, struct sluice_pcpu_stats *sum)
{
	const unsigned int n = sizeof(*sum) / sizeof(u64);
	u64 *out = (u64 *)sum;
	unsigned int i;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const u64 *c = (const u64 *)per_cpu_ptr(st->pcpu, cpu);

		/* one load each: the owner may be adding to it */
		for (i = 0; i < n; i++)
			out[i] += READ_ONCE(c[i]);
	}
}

/*
 * What was added since the last reset. A bio counted on one CPU and taken
 * back on another leaves each copy off, but not their sum; a sum never goes
 * below its base (the target takes back only what it counted since), and
 * should a race make it look so, it shows 0.
 */
void sluice_stats_read(struct sluice_stats *st, struct sluice_pcpu_stats *now)
{
	const unsigned int n = sizeof(*now) / sizeof(u64);
	const u64 *base = (const u64 *)&st->base;
	u64 *out = (u64 *)now;
	unsigned int i;

	sluice_stats_add_up(st, now);
	for (i = 0; i < n; i++)
		out[i] = (s64)(out[i] - base[i]) > 0 ? out[i] - base[i] : 0;
}

/* Under the owner's s.lock, as reads of the base are. */
void sluice_stats_zero(struct sluice_stats *st)
{
	int i;

	sluice_stats_add_up(st, &st->base);
	for (i = 0; i < 2; i++) {
		atomic64_set(&st->throttled[i], 0);
		atomic64_set(&st->errors[i], 0);
	}
	atomic64_set(&st->discards, 0);
	atomic64_set(&st->wait_ns, 0);
	atomic64_set(&st->wait_max_ns, 0);
	for (i = 0; i < SL_HIST_BUCKETS; i++)
		atomic64_set(&st->hist[i], 0);
}

/* A bio that stage held waited wait ns: counted, and noted in the bio. */
void sluice_stats_wait(struct sluice_stats *st, struct sluice_io *io, u8 stage, u64 wait)
{
	s64 max = atomic64_read(&st->wait_max_ns);

	io->waited |= stage;
	io->wait_ns[stage == SLUICE_CHARGED_GROUP] = wait;
	atomic64_add(wait, &st->wait_ns);
	atomic64_inc(&st->hist[sl_hist_bucket(wait)]);
	while ((u64)max < wait) {
		s64 old = atomic64_cmpxchg(&st->wait_max_ns, max, wait);

		if (old == max)
			break;
		max = old;
	}
}

/*
 * dm submits the bio again: the wait it had is taken back, so that each
 * bio a stage held is in its histogram once (wait_max_ns keeps its peak).
 */
void sluice_stats_unwait(struct sluice_stats *st, struct sluice_io *io, u8 stage)
{
	u64 wait = io->wait_ns[stage == SLUICE_CHARGED_GROUP];

	if (!(io->waited & stage))
		return;
	io->waited &= ~stage;
	atomic64_sub(wait, &st->wait_ns);
	atomic64_dec(&st->hist[sl_hist_bucket(wait)]);
}

/* " <prefix>rd_ios=... <prefix>wait_max_ns=...": what a group reports. */
void sluice_emit_counters(struct sluice_stats *st, const char *prefix, char *result,
			  unsigned int maxlen, unsigned int *szp)
{
	struct sluice_pcpu_stats c;
	unsigned int sz = *szp;

	sluice_stats_read(st, &c);
	DMEMIT(" %srd_ios=%llu %srd_bytes=%llu %swr_ios=%llu %swr_bytes=%llu",
	       prefix, c.ios[SL_READ], prefix, c.bytes[SL_READ],
	       prefix, c.ios[SL_WRITE], prefix, c.bytes[SL_WRITE]);
	DMEMIT(" %srd_throttled=%lld %swr_throttled=%lld %swait_ns=%lld %swait_max_ns=%lld",
	       prefix, atomic64_read(&st->throttled[SL_READ]),
	       prefix, atomic64_read(&st->throttled[SL_WRITE]),
	       prefix, atomic64_read(&st->wait_ns),
	       prefix, atomic64_read(&st->wait_max_ns));
	*szp = sz;
}
