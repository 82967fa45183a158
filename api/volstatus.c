// SPDX-License-Identifier: GPL-2.0
/* A volume's status line, typed, and shown; see volstatus.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "volstatus.h"

const char *const ap_vs_word[AP_VS_NR_FIGS] = {
	[AP_VS_RD_IOS] = "rd_ios", [AP_VS_RD_BYTES] = "rd_bytes",
	[AP_VS_WR_IOS] = "wr_ios", [AP_VS_WR_BYTES] = "wr_bytes",
	[AP_VS_RD_THROTTLED] = "rd_throttled", [AP_VS_WR_THROTTLED] = "wr_throttled",
	[AP_VS_QUEUED] = "queued", [AP_VS_WAIT_NS] = "wait_ns", [AP_VS_WAIT_MAX_NS] = "wait_max_ns",
	[AP_VS_FLUSHES] = "flushes", [AP_VS_DISCARDS] = "discards", [AP_VS_WB_BYTES] = "wb_bytes",
	[AP_VS_RD_ERRORS] = "rd_errors", [AP_VS_WR_ERRORS] = "wr_errors",
	[AP_VS_LAT_NS] = "lat_ns",
	[AP_VS_POOL_QUEUED] = "pool_queued", [AP_VS_POOL_SENT] = "pool_sent",
	[AP_VS_POOL_BY_RESERVATION] = "pool_by_reservation",
	[AP_VS_POOL_INFLIGHT] = "pool_inflight", [AP_VS_POOL_DEPTH] = "pool_depth",
	[AP_VS_POOL_DEPTH_AUTO] = "pool_depth_auto", [AP_VS_POOL_LAT0_US] = "pool_lat0_us",
	[AP_VS_POOL_ANTICIPATED] = "pool_anticipated", [AP_VS_POOL_THINK_US] = "pool_think_us",
	[AP_VS_POOL_LATENCY_US] = "pool_latency_us",
	[AP_VS_POOL_LATENCY_MISSED] = "pool_latency_missed",
};

/* A decimal integer, the whole of text: no sign, no junk, no overflow. */
static bool number(const char *text, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*text < '0' || *text > '9')
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* A histogram of exactly n counts, joined by commas; out is untouched unless whole. */
static bool counts(const char *text, uint64_t *out, size_t n)
{
	uint64_t v[SL_HIST_BUCKETS > SL_LAT_BUCKETS ? SL_HIST_BUCKETS : SL_LAT_BUCKETS];
	char buf[32];
	size_t i = 0, len;

	for (;;) {
		len = strcspn(text, ",");
		if (i == n || !len || len >= sizeof(buf))
			return false;
		memcpy(buf, text, len);
		buf[len] = '\0';
		if (!number(buf, &v[i++]))
			return false;
		if (!text[len])
			break;
		text += len + 1;
	}
	if (i != n)
		return false;
	memcpy(out, v, n * sizeof(*out));
	return true;
}

/* pool_depth_why: why the pool's depth is what it is, one short word. */
static bool why_word(const char *text, char *out)
{
	size_t len = strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_-");

	if (!len || text[len] || len >= AP_VS_WHY_MAX)
		return false;
	memcpy(out, text, len + 1);
	return true;
}

static void word(struct ap_volstatus *s, const char *key, const char *value)
{
	unsigned int i;
	uint64_t v;

	if (!strcmp(key, "wait_hist")) {
		s->has_wait_hist = counts(value, s->wait_hist, SL_HIST_BUCKETS);
		return;
	}
	if (!strcmp(key, "lat_hist")) {
		s->has_lat_hist = counts(value, s->lat_hist, SL_LAT_BUCKETS);
		return;
	}
	if (!strcmp(key, "pool_depth_why")) {
		if (!why_word(value, s->depth_why))
			s->depth_why[0] = '\0';
		return;
	}
	for (i = 0; i < AP_VS_NR_FIGS; i++) {
		if (strcmp(key, ap_vs_word[i]))
			continue;
		/* a flag is 0 or 1; anything else is not understood */
		if (number(value, &v) && (i != AP_VS_POOL_DEPTH_AUTO || v <= 1)) {
			s->fig[i] = v;
			s->has |= 1ULL << i;
		} else {
			s->fig[i] = 0;
			s->has &= ~(1ULL << i);
		}
		return;
	}
}

void ap_volstatus_parse(struct ap_volstatus *s, const char *line)
{
	char *copy, *w, *save = NULL;

	memset(s, 0, sizeof(*s));
	if (!line || !(copy = strdup(line)))
		return;
	for (w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		char *eq = strchr(w, '=');

		if (!eq)
			continue;
		*eq = '\0';
		word(s, w, eq + 1);
	}
	free(copy);
}

bool ap_volstatus_has(const struct ap_volstatus *s, enum ap_vs_fig f)
{
	return s->has & (1ULL << f);
}

/* [{"count": c, "<unit>": bound}, ...]: bucket i below bound(i), the last open. */
static json_t *buckets(const uint64_t *h, size_t n, const char *unit, uint64_t first)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++) {
		json_t *b = json_pack("{s:I}", "count", (json_int_t)h[i]);

		if (i + 1 < n)
			json_object_set_new(b, unit, json_integer((json_int_t)(first << i)));
		json_array_append_new(a, b);
	}
	return a;
}

json_t *ap_volstatus_wait_json(const struct ap_volstatus *s)
{
	if (!s->has_wait_hist)
		return json_array();
	return buckets(s->wait_hist, SL_HIST_BUCKETS, "below_ms", 1);
}

json_t *ap_volstatus_latency_json(const struct ap_volstatus *s)
{
	if (!s->has_lat_hist)
		return json_null();
	return buckets(s->lat_hist, SL_LAT_BUCKETS, "below_us", SL_LAT_BUCKET0_NS / 1000);
}

json_t *ap_volstatus_latency_sum_json(const struct ap_volstatus *s)
{
	if (!ap_volstatus_has(s, AP_VS_LAT_NS))
		return json_null();
	return json_real((double)s->fig[AP_VS_LAT_NS] * 1e-9);
}

json_t *ap_volstatus_pool_json(const struct ap_volstatus *s)
{
	static const struct { const char *name; enum ap_vs_fig fig; } optional[] = {
		{ "lat0_us", AP_VS_POOL_LAT0_US }, { "anticipated", AP_VS_POOL_ANTICIPATED },
		{ "think_us", AP_VS_POOL_THINK_US }, { "latency_target_us", AP_VS_POOL_LATENCY_US },
		{ "latency_missed", AP_VS_POOL_LATENCY_MISSED },
	};
	const uint64_t *v = s->fig;
	json_t *pool;
	size_t i;

	if (!ap_volstatus_has(s, AP_VS_POOL_DEPTH))
		return json_null();
	pool = json_pack("{s:I, s:I, s:I, s:I, s:I}", "queued", (json_int_t)v[AP_VS_POOL_QUEUED],
			 "sent", (json_int_t)v[AP_VS_POOL_SENT],
			 "by_reservation", (json_int_t)v[AP_VS_POOL_BY_RESERVATION],
			 "inflight", (json_int_t)v[AP_VS_POOL_INFLIGHT],
			 "depth", (json_int_t)v[AP_VS_POOL_DEPTH]);
	if (!pool)
		return json_null();
	if (ap_volstatus_has(s, AP_VS_POOL_DEPTH_AUTO))
		json_object_set_new(pool, "depth_auto", json_boolean(v[AP_VS_POOL_DEPTH_AUTO]));
	if (s->depth_why[0])
		json_object_set_new(pool, "depth_why", json_string(s->depth_why));
	for (i = 0; i < sizeof(optional) / sizeof(optional[0]); i++)
		if (ap_volstatus_has(s, optional[i].fig))
			json_object_set_new(pool, optional[i].name,
					    json_integer((json_int_t)v[optional[i].fig]));
	return pool;
}

/* A metric of every volume, from one figure (or a histogram). */
enum kind { COUNTER, GAUGE, WAIT_HIST, LATENCY_HIST };

struct metric {
	const char *name;
	enum kind kind;
	const char *help;
	enum ap_vs_fig fig;	/* its figure; a histogram's: its sum */
	double scale;		/* to the metric's unit; 1: the integer as it is */
};

static const struct metric metrics[] = {
	{ "sluice_volume_read_ios_total", COUNTER, "Reads completed.", AP_VS_RD_IOS, 1 },
	{ "sluice_volume_read_bytes_total", COUNTER, "Bytes read.", AP_VS_RD_BYTES, 1 },
	{ "sluice_volume_write_ios_total", COUNTER, "Writes completed.", AP_VS_WR_IOS, 1 },
	{ "sluice_volume_write_bytes_total", COUNTER, "Bytes written.", AP_VS_WR_BYTES, 1 },
	{ "sluice_volume_read_throttled_ios_total", COUNTER, "Reads held by a limit.",
	  AP_VS_RD_THROTTLED, 1 },
	{ "sluice_volume_write_throttled_ios_total", COUNTER, "Writes held by a limit.",
	  AP_VS_WR_THROTTLED, 1 },
	{ "sluice_volume_queued_ios", GAUGE, "IOs held by a limit now.", AP_VS_QUEUED, 1 },
	{ "sluice_volume_throttle_wait_max_seconds", GAUGE, "Longest wait of an IO held by a limit.",
	  AP_VS_WAIT_MAX_NS, 1e-9 },
	{ "sluice_volume_throttle_wait_seconds", WAIT_HIST, "Wait of the IOs held by a limit.",
	  AP_VS_WAIT_NS, 1e-9 },
	{ "sluice_volume_completion_latency_seconds", LATENCY_HIST,
	  "Time from an IO's arrival at the volume to its completion, of a sample: one IO in 16.",
	  AP_VS_LAT_NS, 1e-9 },
	{ "sluice_volume_flushes_total", COUNTER, "Flushes passed down.", AP_VS_FLUSHES, 1 },
	{ "sluice_volume_discards_total", COUNTER, "Discards passed down.", AP_VS_DISCARDS, 1 },
	{ "sluice_volume_writeback_bytes_total", COUNTER, "Bytes written by writeback.",
	  AP_VS_WB_BYTES, 1 },
	{ "sluice_volume_read_errors_total", COUNTER, "Reads that failed below.", AP_VS_RD_ERRORS, 1 },
	{ "sluice_volume_write_errors_total", COUNTER, "Writes that failed below.",
	  AP_VS_WR_ERRORS, 1 },
	{ "sluice_volume_pool_queued_ios", GAUGE, "IOs waiting in the pool's scheduler.",
	  AP_VS_POOL_QUEUED, 1 },
	{ "sluice_volume_pool_sent_ios_total", COUNTER, "IOs the pool's scheduler sent.",
	  AP_VS_POOL_SENT, 1 },
	{ "sluice_volume_pool_reservation_ios_total", COUNTER,
	  "IOs the pool's scheduler sent under the reservation.", AP_VS_POOL_BY_RESERVATION, 1 },
	{ "sluice_volume_pool_latency_missed_total", COUNTER,
	  "Windows in which more than a tenth of the volume's IOs took longer than its latency target.",
	  AP_VS_POOL_LATENCY_MISSED, 1 },
};

/*
 * Buckets cumulative, bucket i under (first << i) / per_second seconds (an
 * exact decimal in %g), +Inf, sum and count.
 */
static void histogram(FILE *f, const char *name, const char *labels, const uint64_t *h, size_t n,
		      uint64_t first, double per_second, double sum)
{
	unsigned long long cum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		cum += h[i];
		if (i + 1 < n)
			fprintf(f, "%s_bucket{%s,le=\"%g\"} %llu\n", name, labels,
				(double)(first << i) / per_second, cum);
	}
	fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, labels, cum);
	fprintf(f, "%s_sum{%s} %.9f\n", name, labels, sum);
	fprintf(f, "%s_count{%s} %llu\n", name, labels, cum);
}

static void sample(FILE *f, const struct metric *m, const char *labels,
		   const struct ap_volstatus *s)
{
	uint64_t v = s->fig[m->fig];

	switch (m->kind) {
	case WAIT_HIST:
		if (s->has_wait_hist)
			histogram(f, m->name, labels, s->wait_hist, SL_HIST_BUCKETS, 1, 1e3,
				  (double)v * m->scale);
		return;
	case LATENCY_HIST:
		if (s->has_lat_hist)
			histogram(f, m->name, labels, s->lat_hist, SL_LAT_BUCKETS,
				  SL_LAT_BUCKET0_NS / 1000, 1e6, (double)v * m->scale);
		return;
	case COUNTER:
	case GAUGE:
		if (!ap_volstatus_has(s, m->fig))
			return;
		if (m->scale == 1)
			fprintf(f, "%s{%s} %llu\n", m->name, labels, (unsigned long long)v);
		else
			fprintf(f, "%s{%s} %.9f\n", m->name, labels, (double)v * m->scale);
		return;
	}
}

void ap_volstatus_metrics(FILE *f, const struct ap_volstatus_row *rows, size_t n)
{
	static const char *const type[] = { "counter", "gauge", "histogram", "histogram" };
	size_t m, i;

	for (m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		const struct metric *mt = &metrics[m];

		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", mt->name, mt->help, mt->name,
			type[mt->kind]);
		for (i = 0; i < n; i++)
			if (rows[i].st)
				sample(f, mt, rows[i].labels, rows[i].st);
	}
}
