/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portable core of the sluice target: the table/message argument parser, the
 * throttle arithmetic and the wait histogram. It includes no kernel headers
 * beyond the basic integer types, so that the same file is compiled into
 * dm-sluice.ko and into the host unit tests and fuzzers.
 */
#ifndef SLUICE_CORE_H
#define SLUICE_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/limits.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint64_t u64;
typedef uint32_t u32;
typedef uint8_t u8;
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#ifndef U32_MAX
#define U32_MAX UINT32_MAX
#endif
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* 128-bit products; only multiplication is used, never 128-bit division. */
#define sl_u128 unsigned __int128

#define SL_NSEC_PER_SEC 1000000000ULL

/* The six limit buckets, in the order they are printed. */
enum sl_bucket_id {
	SL_BPS, SL_RBPS, SL_WBPS, SL_IOPS, SL_RIOPS, SL_WIOPS, SL_NR_BUCKETS
};

enum sl_dir { SL_READ = 0, SL_WRITE = 1 };

#define SL_LABEL_MAX 63
#define SL_BURST_S_MAX 86400
#define SL_WEIGHT_MIN 1
#define SL_WEIGHT_MAX 10000
#define SL_WEIGHT_DEFAULT 100
/*
 * Reservations above any device's rate: past these a reservation tag's step
 * (10^9 / reserve_iops ns, bytes * 10^9 / reserve_bps ns) would round to 0
 * and the volume would take every pick.
 */
#define SL_RESERVE_IOPS_MAX 10000000ULL
#define SL_RESERVE_BPS_MAX (1ULL << 40)
/* A completion-latency target beyond any disk's: 10 s. */
#define SL_LATENCY_US_MAX 10000000ULL
/* The longest canonical argument list sl_config_format() can produce. */
#define SL_FORMAT_MAX 1600

struct sl_config {
	u64 avg[SL_NR_BUCKETS];		/* bytes/s or IO/s; 0 = unlimited */
	u64 max[SL_NR_BUCKETS];		/* burst rate; 0 = none */
	u32 burst_s;			/* burst length in seconds, >= 1 */
	u64 iops_size;			/* bytes per counted IO; 0 = every IO is 1 */
	char tenant[SL_LABEL_MAX + 1];
	char pool[SL_LABEL_MAX + 1];
	u32 weight;
	u64 reserve_iops;
	u64 reserve_bps;
	u64 latency_us;			/* the pool's p90 target; 0 = none */
	u32 dirty_strict;		/* 1: the bdi's dirty pages to its own share */
	/*
	 * A shared limit group: its limits apply to every table naming it,
	 * together (group_bps= ... group_wiops_max=, group_burst_s=).
	 */
	char group[SL_LABEL_MAX + 1];
	u64 group_avg[SL_NR_BUCKETS];
	u64 group_max[SL_NR_BUCKETS];
	u32 group_burst_s;
	bool group_given;		/* the words named a group limit */
	unsigned char group_key;	/* the first of them, for the error */
};

/* Which parse: a table line may set every key, a "set" message a subset. */
enum sl_parse_mode { SL_PARSE_TABLE, SL_PARSE_SET };

void sl_config_init(struct sl_config *cfg);

/*
 * Parse argc "key=value" words into *cfg (which holds the starting values),
 * then validate the result. On failure *err names the argument, *cfg is left
 * in an unspecified state (parse into a copy) and -1 is returned; *bad_arg
 * points at the offending word where there is one.
 */
int sl_config_parse(struct sl_config *cfg, enum sl_parse_mode mode,
		    unsigned int argc, char **argv,
		    const char **err, const char **bad_arg);

/* QEMU throttle_is_valid rules, plus the pool keys. 0 or -1 with *err. */
int sl_config_validate(const struct sl_config *cfg, const char **err);

/* True when any of the six limits is set. */
bool sl_config_limited(const struct sl_config *cfg);

/* Copy the group's limits (group_avg, group_max, group_burst_s) of src. */
void sl_config_copy_group(struct sl_config *dst, const struct sl_config *src);

/*
 * Canonical "key=value ..." form of *cfg: keys in a fixed order, defaults
 * left out, so that parsing the output gives back an equal config. Returns
 * the number of words written into buf (NUL-terminated), or -1 if buf is too
 * small.
 */
int sl_config_format(const struct sl_config *cfg, char *buf, size_t len);

/*
 * The arguments of a "set" message that makes a volume's config equal to
 * *cfg whatever it was: every key a set may change, zeros and defaults
 * included (labels only when set: a label cannot be cleared by set).
 */
int sl_config_format_set(const struct sl_config *cfg, char *buf, size_t len);

/*
 * Throttling as virtual time (GCRA). Each bucket keeps the time at which it
 * would be empty ("tat"). Charging an IO of cost c pushes tat by c/rate. The
 * bucket holds up to tau nanoseconds of work, so an IO may start when
 * tat - now <= tau; otherwise it waits tat - tau - now. This is exactly
 * QEMU's leaky bucket (level = (tat - now) * rate), in integers, without
 * overflow for any 64-bit limit and any idle time:
 *
 *      level                       bucket size = rate * tau
 *        ^  ____________________  <- an IO may start only below this line
 *        | /|   /|   /|
 *        |/ |  / |  / |  each IO adds its cost, the level leaks at rate
 *        +--+-/--+-/--+------------> time
 *
 * With a _max burst rate and burst_s > 1 a second bucket leaking at the
 * burst rate holds the rate at max while the main bucket (max * burst_s
 * deep) fills: the QEMU/libvirt burst semantics.
 */
struct sl_bucket_cfg {
	u64 rate;	/* avg in units/s; 0 = this bucket is off */
	u64 tau_ns;	/* depth of the main bucket in ns of rate */
	u64 burst_rate;	/* max, when the burst bucket is on, else 0 */
	u64 burst_tau_ns;
	/* what one IO costs an IOPS bucket at rate and at burst_rate, ns */
	u64 io_ns, burst_io_ns;
};

struct sl_limits {
	struct sl_bucket_cfg b[SL_NR_BUCKETS];
	u64 iops_size;
	bool any;
	/*
	 * The buckets on that apply to an IO, by direction and by whether it
	 * counts bytes (a discard does not): what the per-bio functions walk,
	 * so that a bio looks at the two to four buckets that concern it.
	 */
	u8 nr_on[2][2];
	u8 on[2][2][SL_NR_BUCKETS];
};

struct sl_throttle {
	u64 tat[SL_NR_BUCKETS];
	u64 burst_tat[SL_NR_BUCKETS];
};

void sl_limits_from_config(struct sl_limits *lim, const struct sl_config *cfg);
/* The group's buckets: every IO counts as one against its IOPS limits. */
void sl_limits_from_group(struct sl_limits *lim, const struct sl_config *cfg);
void sl_throttle_init(struct sl_throttle *t);

/*
 * Nanoseconds an IO of dir must wait from now before it may start under lim;
 * 0 means it may start now. As in QEMU, whether an IO may start does not
 * depend on its size, only what it is charged does; so a large IO is never
 * starved, and the bucket runs over by at most one IO.
 */
u64 sl_throttle_wait(const struct sl_throttle *t, const struct sl_limits *lim,
		     u64 now, enum sl_dir dir, bool count_bytes);

/*
 * sl_throttle_wait(), then sl_throttle_charge() if the wait is 0: the IO
 * starts now. In one call, for the path every limited bio takes.
 */
u64 sl_throttle_admit(struct sl_throttle *t, const struct sl_limits *lim,
		      u64 now, enum sl_dir dir, u64 bytes, bool count_bytes);

/* Charge a started IO. count_bytes is false for discards and write-zeroes. */
void sl_throttle_charge(struct sl_throttle *t, const struct sl_limits *lim,
			u64 now, enum sl_dir dir, u64 bytes, bool count_bytes);

/*
 * Charge nr IOs of dir that count bytes, bytes in all, each no larger than
 * lim->iops_size (if set), all at now: what nr sl_throttle_charge() calls
 * would charge, the bytes rounded up once rather than per IO. For IOs the
 * target passed without looking at the buckets (see sl_throttle_has_room()).
 */
void sl_throttle_charge_many(struct sl_throttle *t, const struct sl_limits *lim,
			     u64 now, enum sl_dir dir, u64 nr, u64 bytes);

/*
 * Whether every bucket that applies to IOs with bytes, of either direction,
 * would still be within its depth with nr more IOs of bytes in all charged
 * at now: IOs of that much could start now, whenever they are charged
 * before the bucket next changes.
 */
bool sl_throttle_has_room(const struct sl_throttle *t, const struct sl_limits *lim,
			  u64 now, u64 nr, u64 bytes);

/* Take back the charge of an IO that will be charged again. */
void sl_throttle_refund(struct sl_throttle *t, const struct sl_limits *lim,
			u64 now, enum sl_dir dir, u64 bytes, bool count_bytes);

/*
 * Carry each bucket over a limit change, in units: its level (up to the old
 * depth) at most the new bucket's depth, so that a lower limit does not
 * charge the past again at the new rate; and its debt beyond that (IO a
 * suspend sent early, charged) whole, so that no reload forgives it. Equal
 * limits leave every bucket as it was.
 */
void sl_throttle_rescale(struct sl_throttle *t, const struct sl_limits *old,
			 const struct sl_limits *new, u64 now);

/* Wait histogram: bucket 0 is < 1 ms, bucket i is [2^(i-1), 2^i) ms. */
#define SL_HIST_BUCKETS 16
unsigned int sl_hist_bucket(u64 wait_ns);

/*
 * Completion-latency histogram: bucket 0 is < 16 us, bucket i (1..14) is
 * [16 * 2^(i-1), 16 * 2^i) us, bucket 15 is 262144 us and above.
 */
#define SL_LAT_BUCKETS 16
#define SL_LAT_BUCKET0_NS 16000ULL
unsigned int sl_lat_bucket(u64 lat_ns);

/* floor(a * b / c), saturated to U64_MAX; c != 0. */
u64 sl_mul_div(u64 a, u64 b, u64 c);

#endif /* SLUICE_CORE_H */
