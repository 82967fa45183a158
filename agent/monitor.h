/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dirty monitor: every tick it reads, through io_uring (a submission
 * for each batch of 64 files, each file opened, read and closed by the ring
 * into its own table: the monitor holds no descriptor per volume, 4 in all;
 * at most 1,024 files a tick, volumes with a dirty bound first and the
 * others in turn, so that its work is bounded at any number of volumes),
 * - /proc/vmstat: nr_dirty, nr_writeback and the global thresholds
 *   (nr_dirty_threshold, nr_dirty_background_threshold);
 * - for every volume, its bdi's figures in debugfs
 *   (<debugfs>/bdi/<maj:min>/stats: BdiReclaimable is its dirty pages,
 *   BdiWriteback those under writeback, BdiDirtyThresh its share of the
 *   threshold). Without debugfs mounted there is no per-volume figure on
 *   6.1 and they are reported as unknown (null);
 * - for every tenant mapped to a cgroup (tenant_cgroup, a path with %s for
 *   the tenant), its memory.stat file_dirty and file_writeback.
 * The tick itself is an io_uring timeout. The target's counters are read by
 * the API when asked (an ioctl, not a file a ring can read).
 *
 * Control: a volume with dirty_bytes_max D gets the bdi max_ratio
 * floor(100 * D / T), at least 1, T the global dirty threshold in bytes,
 * recomputed every tick and written when it changes; its table has the
 * target's dirty_strict=1 (model.c puts it in the policy), so the kernel
 * holds the bdi's dirty and writeback pages near max_ratio% of T at all
 * times, not only once the global count passes the free-run point. The
 * error of the ratio is under 1% of T, below D.
 */
#ifndef SLUICE_AGENT_MONITOR_H
#define SLUICE_AGENT_MONITOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct ag_monitor_config {
	unsigned int interval_ms;	/* the tick; 0: no monitor */
	bool control;			/* enforce dirty_bytes_max */
	char debugfs[128];		/* where debugfs is mounted */
	char tenant_cgroup[256];	/* e.g. /sys/fs/cgroup/tenants/%s; "" none */
};

void ag_monitor_config_defaults(struct ag_monitor_config *c);

struct ag_monitor;

struct ag_state;

/* A monitor of the volumes of st (which outlives it). 0, or -1 with err. */
int ag_monitor_open(struct ag_monitor **m, struct ag_state *st,
		    const struct ag_monitor_config *cfg, char *err, size_t errlen);

/*
 * One tick: wait for the timeout (none when wait is false), then read,
 * control and publish. 0, or -1 with err (the monitor goes on).
 */
int ag_monitor_tick(struct ag_monitor *m, bool wait, char *err, size_t errlen);

/* Run ticks on a thread of its own until ag_monitor_close(). */
int ag_monitor_start(struct ag_monitor *m);
void ag_monitor_close(struct ag_monitor *m);

/*
 * The last tick's figures: a volume's (NULL if the monitor has none for
 * it), and everything (global, volumes, tenants).
 */
json_t *ag_monitor_volume_json(struct ag_monitor *m, const char *id);
json_t *ag_monitor_json(struct ag_monitor *m);

#endif
