/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A volume's status: the sluice target's status line (dmtarget/sluice.rst,
 * "Status"), parsed once into typed figures, and shown as the parts of
 * /v1/volumes/{id}/stats it gives and as the volume series of /metrics.
 *
 * The line is words key=value: a number is a decimal integer, a histogram
 * its buckets' counts joined by commas. A figure is present only when the
 * line had it whole: a word this does not know is skipped, and one whose
 * value does not parse is taken as absent, as is a word the target does
 * not print (an older target's line has no lat_ns or lat_hist, a volume in
 * no pool no pool_*). Absent is shown as absent (or null), never as 0.
 *
 * The completion-latency histogram (lat_hist) has SL_LAT_BUCKETS buckets:
 * bucket 0 under 16 us, bucket i under 16 * 2^i us, the last open; the
 * throttle-wait one (wait_hist) SL_HIST_BUCKETS: bucket i under 2^i ms.
 */
#ifndef SLUICE_API_VOLSTATUS_H
#define SLUICE_API_VOLSTATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../dmtarget/sluice-core.h"

/* The numbers of the line, each by its word (ap_vs_word). */
enum ap_vs_fig {
	AP_VS_RD_IOS, AP_VS_RD_BYTES, AP_VS_WR_IOS, AP_VS_WR_BYTES,
	AP_VS_RD_THROTTLED, AP_VS_WR_THROTTLED, AP_VS_QUEUED, AP_VS_WAIT_NS, AP_VS_WAIT_MAX_NS,
	AP_VS_FLUSHES, AP_VS_DISCARDS, AP_VS_WB_BYTES, AP_VS_RD_ERRORS, AP_VS_WR_ERRORS,
	AP_VS_LAT_NS,
	AP_VS_POOL_QUEUED, AP_VS_POOL_SENT, AP_VS_POOL_BY_RESERVATION, AP_VS_POOL_INFLIGHT,
	AP_VS_POOL_DEPTH, AP_VS_POOL_DEPTH_AUTO, AP_VS_POOL_LAT0_US, AP_VS_POOL_ANTICIPATED,
	AP_VS_POOL_THINK_US, AP_VS_POOL_LATENCY_US, AP_VS_POOL_LATENCY_MISSED,
	AP_VS_NR_FIGS
};

extern const char *const ap_vs_word[AP_VS_NR_FIGS];

#define AP_VS_WHY_MAX 16	/* pool_depth_why: a word of [a-z0-9_-], NUL included */

struct ap_volstatus {
	uint64_t fig[AP_VS_NR_FIGS];
	uint64_t has;			/* bit i: fig[i] was in the line */
	uint64_t wait_hist[SL_HIST_BUCKETS];
	uint64_t lat_hist[SL_LAT_BUCKETS];
	bool has_wait_hist, has_lat_hist;
	char depth_why[AP_VS_WHY_MAX];	/* "" when absent */
};

/* The figures of a status line (NULL or "": none). */
void ap_volstatus_parse(struct ap_volstatus *s, const char *line);

bool ap_volstatus_has(const struct ap_volstatus *s, enum ap_vs_fig f);

/* throttle_wait_histogram: [{"count", "below_ms"}, ...], the last without a bound; [] when absent. */
json_t *ap_volstatus_wait_json(const struct ap_volstatus *s);

/* completion_latency_histogram: [{"count", "below_us"}, ...] as the above; null when absent. */
json_t *ap_volstatus_latency_json(const struct ap_volstatus *s);

/* completion_latency_sum_seconds: a real; null when absent. */
json_t *ap_volstatus_latency_sum_json(const struct ap_volstatus *s);

/*
 * The pool's part, for a volume in a pool (its line has pool_depth), else
 * null: queued, sent, by_reservation, inflight and depth, and of depth_auto
 * (a boolean), depth_why, lat0_us, anticipated, think_us, latency_target_us
 * and latency_missed those the line has.
 */
json_t *ap_volstatus_pool_json(const struct ap_volstatus *s);

/* A volume's row for /metrics: its labels, and its status (NULL: none was read). */
struct ap_volstatus_row {
	const char *labels;		/* volume="...",tenant="...",pool="..." */
	const struct ap_volstatus *st;
};

/*
 * The volume series of the status, in the Prometheus text format: each
 * metric's HELP and TYPE, then a sample of each row that has its figure.
 * The histograms: sluice_volume_throttle_wait_seconds and
 * sluice_volume_completion_latency_seconds (buckets cumulative, +Inf, _sum
 * and _count). Of the pool's latency control,
 * sluice_volume_pool_latency_missed_total.
 */
void ap_volstatus_metrics(FILE *f, const struct ap_volstatus_row *rows, size_t n);

#endif
