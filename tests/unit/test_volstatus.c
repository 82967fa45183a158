// SPDX-License-Identifier: GPL-2.0
/*
 * A volume's status line, typed: every figure the API shows, words a
 * target does not print yet (or any more) absent rather than 0, malformed
 * values taken as absent, and the parts of the stats and /metrics made of
 * them.
 */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../api/volstatus.h"

/* What the target printed before lat_ns, lat_hist and the pool's depth control. */
#define OLD_LINE                                                                           \
	"rd_ios=10 rd_bytes=40960 wr_ios=5 wr_bytes=20480 rd_throttled=1 wr_throttled=0"      \
	" queued=0 wait_ns=2000000 wait_max_ns=1500000 flushes=3 discards=0 wb_bytes=0"        \
	" rd_errors=0 wr_errors=0 wait_hist=0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
#define OLD_POOL                                                                           \
	" pool_queued=2 pool_sent=15 pool_by_reservation=4 pool_inflight=6 pool_depth=8"       \
	" pool_cost=iops pool_member_inflight=1 pool_stalled=0 pool_stalls=0"
#define LAT " lat_ns=150000000 lat_hist=1,2,3,4,5,0,0,0,0,0,0,0,0,0,0,6"
#define NEW_POOL                                                                           \
	" pool_depth_auto=1 pool_depth_why=latency pool_lat0_us=120 pool_anticipated=3"        \
	" pool_think_us=40 pool_latency_us=2000 pool_latency_missed=7"

static char *dump(json_t *j)
{
	static char out[2048];
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);

	snprintf(out, sizeof(out), "%s", s ? s : "(none)");
	free(s);
	json_decref(j);
	return out;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void a_line_of_before_shows_its_figures_and_no_latency(void)
{
	struct ap_volstatus s;

	ap_volstatus_parse(&s, OLD_LINE OLD_POOL);
	CHECK_EQ_U64(s.fig[AP_VS_RD_IOS], 10);
	CHECK_EQ_U64(s.fig[AP_VS_WAIT_MAX_NS], 1500000);
	CHECK_EQ_U64(s.fig[AP_VS_FLUSHES], 3);
	CHECK(ap_volstatus_has(&s, AP_VS_WR_ERRORS) && s.has_wait_hist && s.wait_hist[1] == 1);
	CHECK(!ap_volstatus_has(&s, AP_VS_LAT_NS) && !s.has_lat_hist);
	CHECK(!ap_volstatus_has(&s, AP_VS_POOL_DEPTH_AUTO) && !s.depth_why[0]);
	CHECK(!strcmp(dump(ap_volstatus_latency_json(&s)), "null"));
	CHECK(!strcmp(dump(ap_volstatus_latency_sum_json(&s)), "null"));
	CHECK(!strcmp(dump(ap_volstatus_pool_json(&s)),
		      "{\"queued\":2,\"sent\":15,\"by_reservation\":4,\"inflight\":6,\"depth\":8}"));
	CHECK(starts(dump(ap_volstatus_wait_json(&s)),
		     "[{\"count\":0,\"below_ms\":1},{\"count\":1,\"below_ms\":2},"));
	CHECK(strstr(dump(ap_volstatus_wait_json(&s)),
		     "{\"count\":0,\"below_ms\":16384},{\"count\":0}]"));
	/* no pool: no pool part; no line at all: nothing */
	ap_volstatus_parse(&s, OLD_LINE);
	CHECK(!strcmp(dump(ap_volstatus_pool_json(&s)), "null"));
	ap_volstatus_parse(&s, NULL);
	CHECK(!s.has && !s.has_wait_hist && !strcmp(dump(ap_volstatus_wait_json(&s)), "[]"));
}

static void completion_latency_and_the_pools_depth_control_are_shown(void)
{
	struct ap_volstatus s;
	const char *j;
	json_t *sum;

	ap_volstatus_parse(&s, OLD_LINE LAT OLD_POOL NEW_POOL "\n");
	CHECK(s.has_lat_hist && s.lat_hist[0] == 1 && s.lat_hist[15] == 6);
	CHECK_EQ_U64(s.fig[AP_VS_LAT_NS], 150000000);
	j = dump(ap_volstatus_latency_json(&s));
	CHECK(starts(j, "[{\"count\":1,\"below_us\":16},{\"count\":2,\"below_us\":32},"
		     "{\"count\":3,\"below_us\":64},"));
	CHECK(strstr(j, ",{\"count\":0,\"below_us\":131072},{\"count\":0,\"below_us\":262144},"
		     "{\"count\":6}]"));
	sum = ap_volstatus_latency_sum_json(&s);
	CHECK(json_is_real(sum) && json_real_value(sum) > 0.1499999 && json_real_value(sum) < 0.1500001);
	json_decref(sum);
	CHECK(!strcmp(dump(ap_volstatus_pool_json(&s)),
		      "{\"queued\":2,\"sent\":15,\"by_reservation\":4,\"inflight\":6,\"depth\":8,"
		      "\"depth_auto\":true,\"depth_why\":\"latency\",\"lat0_us\":120,"
		      "\"anticipated\":3,\"think_us\":40,\"latency_target_us\":2000,"
		      "\"latency_missed\":7}"));
	/* only those the line has */
	ap_volstatus_parse(&s, OLD_LINE OLD_POOL " pool_depth_auto=0 pool_latency_missed=0");
	CHECK(!strcmp(dump(ap_volstatus_pool_json(&s)),
		      "{\"queued\":2,\"sent\":15,\"by_reservation\":4,\"inflight\":6,\"depth\":8,"
		      "\"depth_auto\":false,\"latency_missed\":0}"));
}

/* Each malformed word is absent, and does not spill into the others. */
static void malformed_words_are_absent(void)
{
	static const char *const bad_hist[] = {
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",		/* 15 */
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",	/* 17 */
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,",
		",1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,,15",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,-1",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,+1",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,1x",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,18446744073709551616",
		"1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,123456789012345678901234567890123",
		"", "x",
	};
	char line[512];
	struct ap_volstatus s;
	size_t i;

	for (i = 0; i < sizeof(bad_hist) / sizeof(bad_hist[0]); i++) {
		snprintf(line, sizeof(line), "lat_hist=%s wait_hist=%s rd_ios=7", bad_hist[i],
			 bad_hist[i]);
		ap_volstatus_parse(&s, line);
		CHECK(!s.has_lat_hist && !s.has_wait_hist);
		CHECK(!strcmp(dump(ap_volstatus_latency_json(&s)), "null"));
		CHECK(s.fig[AP_VS_RD_IOS] == 7 && ap_volstatus_has(&s, AP_VS_RD_IOS));
	}
	ap_volstatus_parse(&s, "lat_ns=-1 rd_ios=1x wr_ios= pool_depth=8 pool_depth_auto=2"
			   " pool_lat0_us=18446744073709551616 pool_think_us=+5 queued=0x10"
			   " pool_depth_why=Latency lat0_us=5 =3 rd_bytes lat_hist");
	CHECK(!ap_volstatus_has(&s, AP_VS_LAT_NS) && !ap_volstatus_has(&s, AP_VS_RD_IOS));
	CHECK(!ap_volstatus_has(&s, AP_VS_WR_IOS) && !ap_volstatus_has(&s, AP_VS_QUEUED));
	CHECK(!ap_volstatus_has(&s, AP_VS_POOL_DEPTH_AUTO) && !ap_volstatus_has(&s, AP_VS_POOL_LAT0_US));
	CHECK(!ap_volstatus_has(&s, AP_VS_POOL_THINK_US) && !s.depth_why[0]);
	CHECK(!strcmp(dump(ap_volstatus_latency_sum_json(&s)), "null"));
	CHECK(!strcmp(dump(ap_volstatus_pool_json(&s)),
		      "{\"queued\":0,\"sent\":0,\"by_reservation\":0,\"inflight\":0,\"depth\":8}"));
	/* a why that is not one short word: quotes, too long, empty */
	ap_volstatus_parse(&s, "pool_depth=1 pool_depth_why=a\"b");
	CHECK(!s.depth_why[0]);
	ap_volstatus_parse(&s, "pool_depth=1 pool_depth_why=abcdefghijklmnop");
	CHECK(!s.depth_why[0]);
	ap_volstatus_parse(&s, "pool_depth=1 pool_depth_why=");
	CHECK(!s.depth_why[0]);
	ap_volstatus_parse(&s, "pool_depth=1 pool_depth_why=abcdefghijklmno");
	CHECK(!strcmp(s.depth_why, "abcdefghijklmno"));
	/* a word again: the last one counts, a bad one unsets */
	ap_volstatus_parse(&s, "rd_ios=1 rd_ios=2 wr_ios=3 wr_ios=x pool_depth_why=steady pool_depth_why=?");
	CHECK(s.fig[AP_VS_RD_IOS] == 2 && !ap_volstatus_has(&s, AP_VS_WR_IOS) && !s.depth_why[0]);
	/* the largest count there is */
	ap_volstatus_parse(&s, "rd_ios=18446744073709551615");
	CHECK(s.fig[AP_VS_RD_IOS] == UINT64_MAX);
}

/* The metrics text of rows, in a static buffer. */
static const char *metrics_of(const struct ap_volstatus_row *rows, size_t n)
{
	static char text[16384];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return "";
	ap_volstatus_metrics(f, rows, n);
	fclose(f);
	snprintf(text, sizeof(text), "%s", buf);
	free(buf);
	return text;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (; (text = strstr(text, what)); text++)
		n++;
	return n;
}

/*
 * sluice_volume_completion_latency_seconds: a histogram of the volumes
 * whose line has lat_hist, buckets cumulative under 16 us * 2^i, +Inf the
 * count, the sum in seconds; none for a volume without it.
 */
static void metrics_show_the_completion_latency_histogram(void)
{
	struct ap_volstatus with, without;
	const char *L = "sluice_volume_completion_latency_seconds";
	struct ap_volstatus_row rows[] = {
		{ "volume=\"t.a\",tenant=\"t\",pool=\"p0\"", &with },
		{ "volume=\"t.b\",tenant=\"t\",pool=\"p0\"", &without },
		{ "volume=\"t.c\",tenant=\"t\",pool=\"p0\"", NULL },
	};
	const char *m;
	char line[256];

	ap_volstatus_parse(&with, OLD_LINE LAT OLD_POOL NEW_POOL);
	ap_volstatus_parse(&without, OLD_LINE OLD_POOL);
	m = metrics_of(rows, 3);
	CHECK(count_of(m, "# TYPE sluice_volume_completion_latency_seconds histogram\n") == 1);
	CHECK(count_of(m, "# HELP sluice_volume_completion_latency_seconds ") == 1);
	CHECK(strstr(m, "sluice_volume_completion_latency_seconds_bucket{volume=\"t.a\",tenant=\"t\","
		     "pool=\"p0\",le=\"1.6e-05\"} 1\n"));
	snprintf(line, sizeof(line), "%s_bucket{volume=\"t.a\",tenant=\"t\",pool=\"p0\",le=\"3.2e-05\"} 3\n", L);
	CHECK(strstr(m, line));
	snprintf(line, sizeof(line), "%s_bucket{volume=\"t.a\",tenant=\"t\",pool=\"p0\",le=\"0.000256\"} 15\n", L);
	CHECK(strstr(m, line));
	snprintf(line, sizeof(line), "%s_bucket{volume=\"t.a\",tenant=\"t\",pool=\"p0\",le=\"0.262144\"} 15\n", L);
	CHECK(strstr(m, line));
	snprintf(line, sizeof(line), "%s_bucket{volume=\"t.a\",tenant=\"t\",pool=\"p0\",le=\"+Inf\"} 21\n", L);
	CHECK(strstr(m, line));
	snprintf(line, sizeof(line), "%s_sum{volume=\"t.a\",tenant=\"t\",pool=\"p0\"} 0.150000000\n", L);
	CHECK(strstr(m, line));
	snprintf(line, sizeof(line), "%s_count{volume=\"t.a\",tenant=\"t\",pool=\"p0\"} 21\n", L);
	CHECK(strstr(m, line));
	CHECK(count_of(m, "sluice_volume_completion_latency_seconds_bucket{volume=\"t.a\"") == 16);
	CHECK(!strstr(m, "sluice_volume_completion_latency_seconds_bucket{volume=\"t.b\""));
	CHECK(!strstr(m, "volume=\"t.c\""));
	/* the others as before: the wait histogram in ms bounds, counters as integers */
	CHECK(strstr(m, "sluice_volume_throttle_wait_seconds_bucket{volume=\"t.b\",tenant=\"t\","
		     "pool=\"p0\",le=\"0.002\"} 1\n"));
	CHECK(strstr(m, "sluice_volume_throttle_wait_seconds_bucket{volume=\"t.b\",tenant=\"t\","
		     "pool=\"p0\",le=\"16.384\"} 1\n"));
	CHECK(strstr(m, "sluice_volume_throttle_wait_seconds_sum{volume=\"t.b\",tenant=\"t\","
		     "pool=\"p0\"} 0.002000000\n"));
	CHECK(strstr(m, "sluice_volume_throttle_wait_max_seconds{volume=\"t.a\",tenant=\"t\","
		     "pool=\"p0\"} 0.001500000\n"));
	CHECK(strstr(m, "sluice_volume_read_ios_total{volume=\"t.b\",tenant=\"t\",pool=\"p0\"} 10\n"));
	CHECK(strstr(m, "sluice_volume_pool_sent_ios_total{volume=\"t.a\",tenant=\"t\",pool=\"p0\"} 15\n"));
	CHECK(strstr(m, "sluice_volume_pool_latency_missed_total{volume=\"t.a\",tenant=\"t\","
		     "pool=\"p0\"} 7\n"));
	CHECK(!strstr(m, "sluice_volume_pool_latency_missed_total{volume=\"t.b\""));
	/* a figure the line lacks has no sample */
	ap_volstatus_parse(&without, "rd_ios=1");
	m = metrics_of(rows + 1, 1);
	CHECK(strstr(m, "sluice_volume_read_ios_total{volume=\"t.b\",tenant=\"t\",pool=\"p0\"} 1\n"));
	CHECK(!strstr(m, "sluice_volume_write_ios_total{"));
	CHECK(!strstr(m, "_bucket{"));
	CHECK(strstr(m, "# TYPE sluice_volume_write_ios_total counter\n"));
}

static const struct unit_test tests[] = {
	UNIT_TEST(a_line_of_before_shows_its_figures_and_no_latency),
	UNIT_TEST(completion_latency_and_the_pools_depth_control_are_shown),
	UNIT_TEST(malformed_words_are_absent),
	UNIT_TEST(metrics_show_the_completion_latency_histogram),
};

UNIT_MAIN("volstatus", tests)
