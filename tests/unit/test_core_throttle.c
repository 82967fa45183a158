// SPDX-License-Identifier: GPL-2.0
/* The throttle arithmetic of sluice-core, driven by a closed-loop simulator. */
#include <string.h>

#include "unit.h"
#include "../../dmtarget/sluice-core.h"

#define NS 1000000000ULL

static void limits(struct sl_limits *lim, const char *line)
{
	static char buf[1024];
	char *argv[32], *p;
	unsigned int n = 0;
	struct sl_config cfg;
	const char *err, *bad;

	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok(buf, " "); p; p = strtok(NULL, " "))
		argv[n++] = p;
	sl_config_init(&cfg);
	if (sl_config_parse(&cfg, SL_PARSE_TABLE, n, argv, &err, &bad))
		unit_fail(__FILE__, __LINE__, err);
	sl_limits_from_config(lim, &cfg);
}

/*
 * A client keeps depth IOs of size bytes in flight, each taking latency_ns on
 * the device once started; held IOs start in order when the throttle allows.
 * Returns the bytes completed within [start_ns, end_ns) of simulated time.
 */
struct sim {
	u64 bytes_done, ios_done;
};

static struct sim simulate(const struct sl_limits *lim, struct sl_throttle *t,
			   u64 t0, u64 duration_ns, unsigned int depth, u64 bytes,
			   enum sl_dir dir, u64 latency_ns)
{
	u64 done_at[64];
	struct sim s = { 0, 0 };
	u64 now = t0, end = t0 + duration_ns;
	unsigned int i;

	/* All slots are free at t0; a slot is an IO waiting to start. */
	for (i = 0; i < depth; i++)
		done_at[i] = t0;
	for (;;) {
		unsigned int k = 0;
		u64 wait;

		for (i = 1; i < depth; i++)
			if (done_at[i] < done_at[k])
				k = i;
		if (done_at[k] > now)
			now = done_at[k];
		if (now >= end)
			break;
		wait = sl_throttle_wait(t, lim, now, dir, true);
		now += wait;
		if (now >= end)
			break;
		sl_throttle_charge(t, lim, now, dir, bytes, true);
		done_at[k] = now + latency_ns;
		if (done_at[k] <= end) {
			s.bytes_done += bytes;
			s.ios_done++;
		}
	}
	return s;
}

static int within(double got, double want, double pct)
{
	double d = got - want;

	return (d < 0 ? -d : d) <= want * pct / 100.0;
}

static void unlimited_never_waits(void)
{
	struct sl_limits lim;
	struct sl_throttle t;

	limits(&lim, "");
	sl_throttle_init(&t);
	CHECK(!lim.any);
	for (int i = 0; i < 1000; i++) {
		CHECK(sl_throttle_wait(&t, &lim, 5, SL_WRITE, true) == 0);
		sl_throttle_charge(&t, &lim, 5, SL_WRITE, 1 << 20, true);
	}
}

static void iops_limit_at_depth_1_and_32(void)
{
	static const unsigned int depths[] = { 1, 32 };

	for (int i = 0; i < 2; i++) {
		struct sl_limits lim;
		struct sl_throttle t;
		struct sim s;

		limits(&lim, "iops=200");
		sl_throttle_init(&t);
		/* warm up: empty the initial burst of avg/10 */
		simulate(&lim, &t, NS, 2 * NS, depths[i], 4096, SL_READ, 50000);
		s = simulate(&lim, &t, 3 * NS, 10 * NS, depths[i], 4096, SL_READ, 50000);
		CHECK(within((double)s.ios_done, 2000, 0.5));
	}
}

static void bps_limit_with_large_and_small_ios(void)
{
	static const u64 sizes[] = { 512, 4096, 65536, 1 << 20 };

	for (int i = 0; i < 4; i++) {
		struct sl_limits lim;
		struct sl_throttle t;
		struct sim s;

		limits(&lim, "wbps=4194304");
		sl_throttle_init(&t);
		simulate(&lim, &t, NS, 2 * NS, 32, sizes[i], SL_WRITE, 100000);
		s = simulate(&lim, &t, 3 * NS, 20 * NS, 32, sizes[i], SL_WRITE, 100000);
		CHECK(within((double)s.bytes_done, 20.0 * 4194304, 1.0));
	}
}

static void direction_limits_apply_to_their_direction_only(void)
{
	struct sl_limits lim;
	struct sl_throttle t;
	struct sim s;

	limits(&lim, "rbps=1048576");
	sl_throttle_init(&t);
	s = simulate(&lim, &t, NS, NS, 4, 65536, SL_WRITE, 1000000);
	/* writes run at device speed: 4 IOs per ms */
	CHECK(s.ios_done > 3900);
	s = simulate(&lim, &t, 2 * NS, 10 * NS, 4, 65536, SL_READ, 1000000);
	CHECK(within((double)s.bytes_done, 10.0 * 1048576 + 1048576 / 10, 2.0));
}

/*
 * QEMU burst: bps=1MiB bps_max=8MiB burst_s=2 after idling runs at 8 MiB/s
 * (after the burst bucket's own max/10) until the main bucket (max * burst_s
 * = 16 MiB) is full, then at 1 MiB/s. Whatever the shape, what was admitted
 * by time T is the main bucket's depth plus avg * T.
 */
static void burst_after_idle_follows_qemu(void)
{
	struct sl_limits lim;
	struct sl_throttle t;
	struct sim s;
	double mib = 1048576, want = 16 * mib + 10 * mib;

	limits(&lim, "bps=1048576 bps_max=8388608 burst_s=2");
	sl_throttle_init(&t);
	s = simulate(&lim, &t, 100 * NS, 10 * NS, 16, 4096, SL_WRITE, 10000);
	CHECK(within((double)s.bytes_done, want, 1.0));
	/* and the first second runs at the burst rate, not above */
	sl_throttle_init(&t);
	s = simulate(&lim, &t, 100 * NS, NS, 16, 4096, SL_WRITE, 10000);
	CHECK(within((double)s.bytes_done, 8.8 * mib, 1.0));
}

static void iops_size_counts_large_ios_as_several(void)
{
	struct sl_limits lim;
	struct sl_throttle t;
	struct sim s;

	limits(&lim, "iops=100 iops_size=4096");
	sl_throttle_init(&t);
	simulate(&lim, &t, NS, 2 * NS, 8, 65536, SL_READ, 1000);
	s = simulate(&lim, &t, 3 * NS, 16 * NS, 8, 65536, SL_READ, 1000);
	/* 64 KiB = 16 IOs: 100 IOPS -> 6.25 such IOs/s */
	CHECK(within((double)s.ios_done, 100.0, 2.0));
}

static void discards_cost_an_io_but_no_bytes(void)
{
	struct sl_limits lim;
	struct sl_throttle t;

	limits(&lim, "wbps=1");
	sl_throttle_init(&t);
	for (int i = 0; i < 100; i++) {
		CHECK(sl_throttle_wait(&t, &lim, NS, SL_WRITE, false) == 0);
		sl_throttle_charge(&t, &lim, NS, SL_WRITE, 1 << 30, false);
	}
	limits(&lim, "wiops=10");
	sl_throttle_init(&t);
	sl_throttle_charge(&t, &lim, NS, SL_WRITE, 0, false);
	sl_throttle_charge(&t, &lim, NS, SL_WRITE, 0, false);
	/* two IOs at 10/s: 200 ms of work, 100 ms of bucket */
	CHECK_EQ_U64(sl_throttle_wait(&t, &lim, NS, SL_WRITE, false), NS / 10);
}

static void limits_near_2_pow_64_do_not_overflow(void)
{
	struct sl_limits lim;
	struct sl_throttle t;

	limits(&lim, "bps=18446744073709551615 bps_max=18446744073709551615 burst_s=86400 "
		     "iops=18446744073709551615 iops_max=18446744073709551615 iops_size=512");
	sl_throttle_init(&t);
	for (int i = 0; i < 100000; i++) {
		CHECK(sl_throttle_wait(&t, &lim, NS + i, SL_READ, true) == 0);
		sl_throttle_charge(&t, &lim, NS + i, SL_READ, 0xffffffffULL, true);
	}
	/* and the slowest limit with the largest IO saturates, not wraps */
	limits(&lim, "bps=1");
	sl_throttle_init(&t);
	for (int i = 0; i < 10000; i++)
		sl_throttle_charge(&t, &lim, NS, SL_READ, 0xffffffffULL, true);
	CHECK(t.tat[SL_BPS] == UINT64_MAX);
	CHECK_EQ_U64(sl_throttle_wait(&t, &lim, NS, SL_READ, true), UINT64_MAX - NS - NS / 10);
}

static void long_idle_does_not_store_more_than_the_bucket(void)
{
	struct sl_limits lim;
	struct sl_throttle t;
	u64 now = NS;
	int started = 0;

	limits(&lim, "iops=100");
	sl_throttle_init(&t);
	sl_throttle_charge(&t, &lim, now, SL_READ, 4096, true);
	now = (u64)1 << 62;	/* about 146 years later */
	while (sl_throttle_wait(&t, &lim, now, SL_READ, true) == 0 && started < 1000) {
		sl_throttle_charge(&t, &lim, now, SL_READ, 4096, true);
		started++;
	}
	/* avg/10 = 10 IOs of bucket, plus the one that overshoots */
	CHECK_EQ_U64(started, 11);
}

static void rescale_keeps_the_level_in_units(void)
{
	struct sl_limits a, b;
	struct sl_throttle t;

	limits(&a, "iops=1000");
	limits(&b, "iops=500");
	sl_throttle_init(&t);
	for (int i = 0; i < 40; i++)
		sl_throttle_charge(&t, &a, NS, SL_READ, 4096, true);
	CHECK_EQ_U64(t.tat[SL_IOPS], NS + NS / 25);
	/* 40 IOs at 500/s are 80 ms of bucket */
	sl_throttle_rescale(&t, &a, &b, NS);
	CHECK_EQ_U64(t.tat[SL_IOPS], NS + 2 * NS / 25);
	/* a bucket that was off starts empty; one that goes off is cleared */
	limits(&a, "iops=500 wbps=10");
	sl_throttle_rescale(&t, &b, &a, NS);
	CHECK_EQ_U64(t.tat[SL_WBPS], 0);
	CHECK_EQ_U64(t.tat[SL_IOPS], NS + 2 * NS / 25);
	limits(&b, "wbps=10");
	sl_throttle_rescale(&t, &a, &b, NS);
	CHECK_EQ_U64(t.tat[SL_IOPS], 0);
}

static void rescale_to_a_lower_limit_holds_at_most_one_bucket(void)
{
	struct sl_limits a, b;
	struct sl_throttle t;

	limits(&a, "iops=2000");
	limits(&b, "iops=100");
	sl_throttle_init(&t);
	for (int i = 0; i < 200; i++)
		sl_throttle_charge(&t, &a, NS, SL_READ, 4096, true);
	/* a full bucket, 200 IOs, would be 2 s at 100/s; the new one holds 100 ms */
	sl_throttle_rescale(&t, &a, &b, NS);
	CHECK_EQ_U64(t.tat[SL_IOPS], NS + NS / 10);
	CHECK_EQ_U64(sl_throttle_wait(&t, &b, NS, SL_READ, true), 0);
	sl_throttle_charge(&t, &b, NS, SL_READ, 4096, true);
	CHECK_EQ_U64(sl_throttle_wait(&t, &b, NS, SL_READ, true), NS / 100);
}

/*
 * A suspend sends what is held at once, charged: the buckets run past their
 * depth. Resuming the same limits (a reload of the same table) keeps that
 * debt; a new limit carries it over in units. Only the level within the
 * bucket is clamped.
 */
static void rescale_keeps_debt_past_the_bucket(void)
{
	struct sl_limits a, b;
	struct sl_throttle t;

	limits(&a, "wiops=2");
	sl_throttle_init(&t);
	for (int i = 0; i < 64; i++)
		sl_throttle_charge(&t, &a, NS, SL_WRITE, 4096, true);
	CHECK_EQ_U64(t.tat[SL_WIOPS], 33 * NS);
	sl_throttle_rescale(&t, &a, &a, NS);
	CHECK_EQ_U64(t.tat[SL_WIOPS], 33 * NS);
	CHECK_EQ_U64(sl_throttle_wait(&t, &a, NS, SL_WRITE, true), 32 * NS - NS / 10);
	/* 63.8 IOs of debt and 0.2 in the bucket, at 4/s: 15.95 s and 50 ms */
	limits(&b, "wiops=4");
	sl_throttle_rescale(&t, &a, &b, NS);
	CHECK_EQ_U64(t.tat[SL_WIOPS], NS + 16 * NS);
}

/* A refund undoes a charge, and never leaves credit behind now. */
static void refund_undoes_a_charge(void)
{
	struct sl_limits a;
	struct sl_throttle t;

	limits(&a, "wiops=10 wbps=4096000");
	sl_throttle_init(&t);
	for (int i = 0; i < 5; i++)
		sl_throttle_charge(&t, &a, NS, SL_WRITE, 4096, true);
	CHECK_EQ_U64(t.tat[SL_WIOPS], NS + NS / 2);
	sl_throttle_refund(&t, &a, NS, SL_WRITE, 4096, true);
	CHECK_EQ_U64(t.tat[SL_WIOPS], NS + 2 * NS / 5);
	CHECK_EQ_U64(t.tat[SL_WBPS], NS + 4 * NS / 1000);
	for (int i = 0; i < 10; i++)
		sl_throttle_refund(&t, &a, NS, SL_WRITE, 4096, true);
	CHECK_EQ_U64(t.tat[SL_WIOPS], NS);
	CHECK_EQ_U64(t.tat[SL_WBPS], NS);
}

static void mul_div_matches_wide_arithmetic(void)
{
	u64 x = 88172645463325252ULL;

	for (int i = 0; i < 100000; i++) {
		u64 a, b, c;
		unsigned __int128 q;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = x >> (x & 63);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b = x >> ((x >> 8) & 63);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		c = (x >> ((x >> 16) & 63)) | 1;
		q = (unsigned __int128)a * b / c;
		CHECK_EQ_U64(sl_mul_div(a, b, c), q >> 64 ? UINT64_MAX : (u64)q);
	}
	CHECK_EQ_U64(sl_mul_div(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
	CHECK_EQ_U64(sl_mul_div(UINT64_MAX, 2, 3), (u64)(((unsigned __int128)UINT64_MAX * 2) / 3));
}

static void hist_buckets_are_log2_ms(void)
{
	CHECK_EQ_U64(sl_hist_bucket(0), 0);
	CHECK_EQ_U64(sl_hist_bucket(999999), 0);
	CHECK_EQ_U64(sl_hist_bucket(1000000), 1);
	CHECK_EQ_U64(sl_hist_bucket(2999999), 2);
	CHECK_EQ_U64(sl_hist_bucket(4000000), 3);
	CHECK_EQ_U64(sl_hist_bucket(16384ULL * 1000000), SL_HIST_BUCKETS - 1);
	CHECK_EQ_U64(sl_hist_bucket(UINT64_MAX), SL_HIST_BUCKETS - 1);
}

static void lat_buckets_are_log2_of_16us(void)
{
	CHECK_EQ_U64(sl_lat_bucket(0), 0);
	CHECK_EQ_U64(sl_lat_bucket(15999), 0);
	CHECK_EQ_U64(sl_lat_bucket(16000), 1);
	CHECK_EQ_U64(sl_lat_bucket(31999), 1);
	CHECK_EQ_U64(sl_lat_bucket(32000), 2);
	CHECK_EQ_U64(sl_lat_bucket(2000000), 7);	/* 2 ms: [1024, 2048) us */
	CHECK_EQ_U64(sl_lat_bucket(262143999), 14);
	CHECK_EQ_U64(sl_lat_bucket(262144000), SL_LAT_BUCKETS - 1);
	CHECK_EQ_U64(sl_lat_bucket(UINT64_MAX), SL_LAT_BUCKETS - 1);
}

/*
 * The per-bio functions walk only the buckets that apply to an IO (the
 * lists sl_limits_from_config() builds). Against a walk of all six with the
 * rules spelled out here, over random limits and IOs, both must give the
 * same waits and leave the same buckets.
 */
static bool ref_applies(int b, enum sl_dir dir, bool count_bytes)
{
	if (b < SL_IOPS && !count_bytes)
		return false;
	if (b == SL_RBPS || b == SL_RIOPS)
		return dir == SL_READ;
	if (b == SL_WBPS || b == SL_WIOPS)
		return dir == SL_WRITE;
	return true;
}

static u64 ref_cost(const struct sl_limits *lim, int b, u64 rate, u64 bytes, bool count_bytes)
{
	u64 size = count_bytes ? lim->iops_size : 0;

	if (b >= SL_IOPS) {
		if (size && bytes > size)
			return (u64)(((unsigned __int128)bytes * NS + (unsigned __int128)size * rate - 1) /
				     ((unsigned __int128)size * rate));
		return (NS + rate - 1) / rate;
	}
	return bytes ? (u64)(((unsigned __int128)bytes * NS + rate - 1) / rate) : 0;
}

static u64 ref_admit(struct sl_throttle *t, const struct sl_limits *lim, u64 now,
		     enum sl_dir dir, u64 bytes, bool count_bytes)
{
	u64 wait = 0;
	int b;

	for (b = 0; b < SL_NR_BUCKETS; b++) {
		const struct sl_bucket_cfg *bc = &lim->b[b];
		u64 tats[2] = { t->tat[b], t->burst_tat[b] }, taus[2] = { bc->tau_ns, bc->burst_tau_ns };
		int k;

		if (!bc->rate || !ref_applies(b, dir, count_bytes))
			continue;
		for (k = 0; k < (bc->burst_rate ? 2 : 1); k++)
			if (tats[k] > now && tats[k] - now > taus[k] && tats[k] - now - taus[k] > wait)
				wait = tats[k] - now - taus[k];
	}
	if (wait)
		return wait;
	for (b = 0; b < SL_NR_BUCKETS; b++) {
		const struct sl_bucket_cfg *bc = &lim->b[b];

		if (!bc->rate || !ref_applies(b, dir, count_bytes))
			continue;
		t->tat[b] = (t->tat[b] > now ? t->tat[b] : now) +
			    ref_cost(lim, b, bc->rate, bytes, count_bytes);
		if (bc->burst_rate)
			t->burst_tat[b] = (t->burst_tat[b] > now ? t->burst_tat[b] : now) +
					  ref_cost(lim, b, bc->burst_rate, bytes, count_bytes);
	}
	return 0;
}

static void admit_walks_only_the_buckets_that_apply(void)
{
	static const char *const keys[] = { "bps", "rbps", "wbps", "iops", "riops", "wiops" };
	unsigned int seed = 12345, round, i;

	for (round = 0; round < 200; round++) {
		char line[512];
		size_t len = 0;
		struct sl_limits lim;
		struct sl_throttle a, r;
		u64 now = NS;

		bool has_max = false;

		line[0] = 0;
		for (i = 0; i < SL_NR_BUCKETS; i++) {
			/* per family: none, a total, or limits per direction */
			unsigned int mode;

			seed = seed * 1103515245 + 12345;
			mode = (seed >> 24) % 3;
			if (i % 3 == 0 && mode != 1) {
				if (mode == 0)
					i += 2;
				continue;
			}
			if (i % 3 == 0)
				mode = 3;	/* the total is on: skip the other two */
			if (i % 3 && (seed >> 18) % 2)
				continue;
			len += snprintf(line + len, sizeof(line) - len, "%s%s=%u", len ? " " : "", keys[i],
					i < SL_IOPS ? 1000000 + (seed >> 8) % 100000000 : 50 + (seed >> 8) % 100000);
			if ((seed >> 4) % 3 == 0) {
				len += snprintf(line + len, sizeof(line) - len, " %s_max=%u", keys[i],
						i < SL_IOPS ? 200000000 : 200000);
				has_max = true;
			}
			if (mode == 3)
				i += 2;
		}
		if (has_max && (seed >> 12) % 2)
			len += snprintf(line + len, sizeof(line) - len, " burst_s=5");
		if (strstr(line, "iops=") && (seed >> 13) % 2)
			len += snprintf(line + len, sizeof(line) - len, " iops_size=8192");
		if (!len)
			continue;
		limits(&lim, line);
		sl_throttle_init(&a);
		sl_throttle_init(&r);
		for (i = 0; i < 500; i++) {
			enum sl_dir dir;
			bool cb;
			u64 bytes, wa, wr;

			seed = seed * 1103515245 + 12345;
			dir = (seed >> 16) & 1 ? SL_WRITE : SL_READ;
			cb = (seed >> 17) % 8 != 0;
			bytes = cb ? 512ULL << ((seed >> 20) % 12) : 0;
			now += (seed >> 8) % 3000000;
			wa = sl_throttle_admit(&a, &lim, now, dir, bytes, cb);
			wr = ref_admit(&r, &lim, now, dir, bytes, cb);
			CHECK_EQ_U64(wa, wr);
			CHECK(!memcmp(&a, &r, sizeof(a)));
			if (wa)
				now += wa;
		}
	}
}

/*
 * Batched charges: nr IOs charged at once cost each IOPS bucket exactly
 * what nr single charges do, and each bytes bucket at most that, and no
 * less by more than a nanosecond an IO (the single charges round each IO
 * up, the batch rounds the sum once). Limit sets from a fixed list, with
 * bursts and iops_size; IOs no larger than iops_size, as the target sends
 * them.
 */
static void charge_many_matches_single_charges(void)
{
	static const char *const lines[] = {
		"iops=1000", "riops=333 wbps=1048577", "bps=1000000007 iops=99991",
		"iops=5000 iops_max=20000 burst_s=5 bps=7000000 bps_max=9000000",
		"iops=200 iops_size=65536", "rbps=1 wiops=1", "iops=18446744073709551615",
		"bps=3 bps_max=5 burst_s=86400 iops=7 iops_max=11",
	};
	unsigned int seed = 777, i, k;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		struct sl_limits lim;

		limits(&lim, lines[i]);
		for (k = 0; k < 50; k++) {
			struct sl_throttle one, many;
			u64 now = NS + k * 12345678ULL, bytes = 0, nr, j;
			enum sl_dir dir = k % 2 ? SL_WRITE : SL_READ;
			int b;

			sl_throttle_init(&one);
			seed = seed * 1103515245 + 12345;
			nr = 1 + (seed >> 8) % 64;
			/* a bucket partly used before */
			sl_throttle_charge(&one, &lim, now - 1000, dir, 4096, true);
			many = one;
			for (j = 0; j < nr; j++) {
				u64 sz;

				seed = seed * 1103515245 + 12345;
				sz = 512ULL << ((seed >> 20) % 8);
				if (lim.iops_size && sz > lim.iops_size)
					sz = lim.iops_size;
				bytes += sz;
				sl_throttle_charge(&one, &lim, now, dir, sz, true);
			}
			sl_throttle_charge_many(&many, &lim, now, dir, nr, bytes);
			for (b = 0; b < SL_NR_BUCKETS; b++) {
				u64 o = one.tat[b], m = many.tat[b];
				u64 ob = one.burst_tat[b], mb = many.burst_tat[b];

				if (b >= SL_IOPS) {
					CHECK_EQ_U64(m, o);
					CHECK_EQ_U64(mb, ob);
				} else {
					CHECK(m <= o && (o == UINT64_MAX || o - m < nr));
					CHECK(mb <= ob && (ob == UINT64_MAX || ob - mb < nr));
				}
			}
		}
	}
}

/*
 * sl_throttle_has_room(nr, bytes) says yes exactly when charging that much
 * to every bucket on, of either direction, would leave both directions
 * free to start an IO (no bucket past its depth). Random limits and
 * states; the charge is made to each direction's buckets in turn, a total
 * bucket once.
 */
static void has_room_agrees_with_wait(void)
{
	static const char *const lines[] = {
		"iops=1000", "riops=333 wbps=1048577", "bps=1000000 iops=2000",
		"iops=5000 iops_max=20000 burst_s=5 bps=7000000 bps_max=9000000",
		"rbps=4096000 wbps=8192000 riops=1000 wiops=2000",
	};
	unsigned int seed = 4242, i, k, yes = 0, no = 0;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		struct sl_limits lim, rd, wr;

		limits(&lim, lines[i]);
		/* the write-only buckets, so that a total is charged once */
		rd = lim;
		wr = lim;
		for (k = 0; k < 300; k++) {
			struct sl_throttle t, c;
			u64 now = NS + k * 1000003ULL, nr, bytes, j, used;
			bool room, free;
			int b;

			sl_throttle_init(&t);
			seed = seed * 1103515245 + 12345;
			used = (seed >> 8) % 150;
			for (j = 0; j < used; j++)
				sl_throttle_charge(&t, &lim, now - 100000, j % 2, 4096, true);
			seed = seed * 1103515245 + 12345;
			nr = 1 + (seed >> 8) % 120;
			bytes = nr * (512 << ((seed >> 20) % 4));
			room = sl_throttle_has_room(&t, &lim, now, nr, bytes);
			c = t;
			sl_throttle_charge_many(&c, &rd, now, SL_READ, nr, bytes);
			/* the write buckets not charged as read ones */
			memset(&wr.on, 0, sizeof(wr.on));
			memset(&wr.nr_on, 0, sizeof(wr.nr_on));
			for (b = 0; b < lim.nr_on[SL_WRITE][1]; b++) {
				u8 x = lim.on[SL_WRITE][1][b];

				if (!memchr(lim.on[SL_READ][1], x, lim.nr_on[SL_READ][1]))
					wr.on[SL_WRITE][1][wr.nr_on[SL_WRITE][1]++] = x;
			}
			sl_throttle_charge_many(&c, &wr, now, SL_WRITE, nr, bytes);
			free = !sl_throttle_wait(&c, &lim, now, SL_READ, true) &&
			       !sl_throttle_wait(&c, &lim, now, SL_WRITE, true);
			CHECK(room == free);
			if (room)
				yes++;
			else
				no++;
		}
	}
	printf("has_room: %u with room, %u without\n", yes, no);
	CHECK(yes > 100 && no > 100);
}

static const struct unit_test tests[] = {
	UNIT_TEST(unlimited_never_waits),
	UNIT_TEST(admit_walks_only_the_buckets_that_apply),
	UNIT_TEST(charge_many_matches_single_charges),
	UNIT_TEST(has_room_agrees_with_wait),
	UNIT_TEST(lat_buckets_are_log2_of_16us),
	UNIT_TEST(iops_limit_at_depth_1_and_32),
	UNIT_TEST(bps_limit_with_large_and_small_ios),
	UNIT_TEST(direction_limits_apply_to_their_direction_only),
	UNIT_TEST(burst_after_idle_follows_qemu),
	UNIT_TEST(iops_size_counts_large_ios_as_several),
	UNIT_TEST(discards_cost_an_io_but_no_bytes),
	UNIT_TEST(limits_near_2_pow_64_do_not_overflow),
	UNIT_TEST(long_idle_does_not_store_more_than_the_bucket),
	UNIT_TEST(rescale_keeps_the_level_in_units),
	UNIT_TEST(rescale_keeps_debt_past_the_bucket),
	UNIT_TEST(refund_undoes_a_charge),
	UNIT_TEST(rescale_to_a_lower_limit_holds_at_most_one_bucket),
	UNIT_TEST(mul_div_matches_wide_arithmetic),
	UNIT_TEST(hist_buckets_are_log2_ms),
};

UNIT_MAIN("core-throttle", tests)
