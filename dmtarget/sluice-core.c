// SPDX-License-Identifier: GPL-2.0
/*
 * Portable core of the sluice target: argument parsing, validation, the
 * canonical table form and the throttle arithmetic. See sluice-core.h.
 */
#include "sluice-core.h"

#define SL_OFF(field) __builtin_offsetof(struct sl_config, field)

enum sl_key_type {
	SL_K_U64, SL_K_BURST, SL_K_WEIGHT, SL_K_IOPS_SIZE, SL_K_LABEL, SL_K_BOOL,
	SL_K_GROUP, SL_K_GROUP_BURST	/* a group's limits: u64, burst_s */
};

struct sl_key {
	const char *name;
	u8 type;
	u8 table_only;		/* cannot be changed by a "set" message */
	unsigned short off;
	const char *e_value;	/* the value does not parse or is out of range */
	const char *e_dup;	/* the key was given twice */
	const char *e_group;	/* a group_* key without group */
};

#define SL_KEY(n, t, field, tbl) \
	{ #n, t, tbl, SL_OFF(field), #n ": invalid value", #n ": given more than once", \
	  #n ": needs group" }

/* Canonical order: sl_config_format() prints the keys in this order. */
static const struct sl_key sl_keys[] = {
	SL_KEY(bps, SL_K_U64, avg[SL_BPS], 0),
	SL_KEY(rbps, SL_K_U64, avg[SL_RBPS], 0),
	SL_KEY(wbps, SL_K_U64, avg[SL_WBPS], 0),
	SL_KEY(iops, SL_K_U64, avg[SL_IOPS], 0),
	SL_KEY(riops, SL_K_U64, avg[SL_RIOPS], 0),
	SL_KEY(wiops, SL_K_U64, avg[SL_WIOPS], 0),
	SL_KEY(bps_max, SL_K_U64, max[SL_BPS], 0),
	SL_KEY(rbps_max, SL_K_U64, max[SL_RBPS], 0),
	SL_KEY(wbps_max, SL_K_U64, max[SL_WBPS], 0),
	SL_KEY(iops_max, SL_K_U64, max[SL_IOPS], 0),
	SL_KEY(riops_max, SL_K_U64, max[SL_RIOPS], 0),
	SL_KEY(wiops_max, SL_K_U64, max[SL_WIOPS], 0),
	SL_KEY(burst_s, SL_K_BURST, burst_s, 0),
	SL_KEY(iops_size, SL_K_IOPS_SIZE, iops_size, 0),
	SL_KEY(pool, SL_K_LABEL, pool, 1),
	SL_KEY(weight, SL_K_WEIGHT, weight, 0),
	SL_KEY(reserve_iops, SL_K_U64, reserve_iops, 0),
	SL_KEY(reserve_bps, SL_K_U64, reserve_bps, 0),
	SL_KEY(latency_us, SL_K_U64, latency_us, 0),
	SL_KEY(dirty_strict, SL_K_BOOL, dirty_strict, 0),
	SL_KEY(group, SL_K_LABEL, group, 1),
	SL_KEY(group_bps, SL_K_GROUP, group_avg[SL_BPS], 0),
	SL_KEY(group_rbps, SL_K_GROUP, group_avg[SL_RBPS], 0),
	SL_KEY(group_wbps, SL_K_GROUP, group_avg[SL_WBPS], 0),
	SL_KEY(group_iops, SL_K_GROUP, group_avg[SL_IOPS], 0),
	SL_KEY(group_riops, SL_K_GROUP, group_avg[SL_RIOPS], 0),
	SL_KEY(group_wiops, SL_K_GROUP, group_avg[SL_WIOPS], 0),
	SL_KEY(group_bps_max, SL_K_GROUP, group_max[SL_BPS], 0),
	SL_KEY(group_rbps_max, SL_K_GROUP, group_max[SL_RBPS], 0),
	SL_KEY(group_wbps_max, SL_K_GROUP, group_max[SL_WBPS], 0),
	SL_KEY(group_iops_max, SL_K_GROUP, group_max[SL_IOPS], 0),
	SL_KEY(group_riops_max, SL_K_GROUP, group_max[SL_RIOPS], 0),
	SL_KEY(group_wiops_max, SL_K_GROUP, group_max[SL_WIOPS], 0),
	SL_KEY(group_burst_s, SL_K_GROUP_BURST, group_burst_s, 0),
	SL_KEY(tenant, SL_K_LABEL, tenant, 0),
};

#define SL_NR_KEYS ARRAY_SIZE(sl_keys)

/* The rules of one set of limits: a volume's own ([0]) or its group's ([1]). */
struct sl_rate_errors {
	const char *bps_combined, *iops_combined, *bps_max_combined, *iops_max_combined;
	const char *max_needs_avg[SL_NR_BUCKETS];
	const char *max_below_avg[SL_NR_BUCKETS];
	const char *burst_needs_max;
};

static const struct sl_rate_errors sl_rate_errors[2] = {
	{
		"bps: cannot be combined with rbps or wbps",
		"iops: cannot be combined with riops or wiops",
		"bps_max: cannot be combined with rbps_max or wbps_max",
		"iops_max: cannot be combined with riops_max or wiops_max",
		{ "bps_max: needs bps", "rbps_max: needs rbps", "wbps_max: needs wbps",
		  "iops_max: needs iops", "riops_max: needs riops", "wiops_max: needs wiops" },
		{ "bps_max: must not be below bps", "rbps_max: must not be below rbps",
		  "wbps_max: must not be below wbps", "iops_max: must not be below iops",
		  "riops_max: must not be below riops", "wiops_max: must not be below wiops" },
		"burst_s: needs a _max limit",
	}, {
		"group_bps: cannot be combined with group_rbps or group_wbps",
		"group_iops: cannot be combined with group_riops or group_wiops",
		"group_bps_max: cannot be combined with group_rbps_max or group_wbps_max",
		"group_iops_max: cannot be combined with group_riops_max or group_wiops_max",
		{ "group_bps_max: needs group_bps", "group_rbps_max: needs group_rbps",
		  "group_wbps_max: needs group_wbps", "group_iops_max: needs group_iops",
		  "group_riops_max: needs group_riops", "group_wiops_max: needs group_wiops" },
		{ "group_bps_max: must not be below group_bps",
		  "group_rbps_max: must not be below group_rbps",
		  "group_wbps_max: must not be below group_wbps",
		  "group_iops_max: must not be below group_iops",
		  "group_riops_max: must not be below group_riops",
		  "group_wiops_max: must not be below group_wiops" },
		"group_burst_s: needs a group _max limit",
	},
};

void sl_config_init(struct sl_config *cfg)
{
	__builtin_memset(cfg, 0, sizeof(*cfg));
	cfg->burst_s = 1;
	cfg->group_burst_s = 1;
	cfg->weight = SL_WEIGHT_DEFAULT;
}

void sl_config_copy_group(struct sl_config *dst, const struct sl_config *src)
{
	__builtin_memcpy(dst->group_avg, src->group_avg, sizeof(dst->group_avg));
	__builtin_memcpy(dst->group_max, src->group_max, sizeof(dst->group_max));
	dst->group_burst_s = src->group_burst_s;
}

/* Decimal u64, digits only: no sign, no spaces, no suffix, no overflow. */
static int sl_parse_u64(const char *s, u64 *out)
{
	u64 v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned int d;

		if (*s < '0' || *s > '9')
			return -1;
		d = *s - '0';
		if (v > (U64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static bool sl_label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int sl_parse_label(const char *s, char *out)
{
	unsigned int n;

	if (!*s || *s == '-' || *s == '.')
		return -1;
	for (n = 0; s[n]; n++) {
		if (n >= SL_LABEL_MAX || !sl_label_char(s[n]))
			return -1;
		out[n] = s[n];
	}
	out[n] = '\0';
	return 0;
}

/* Match "key=" at the start of word; returns the value or NULL. */
static const char *sl_match_key(const char *word, const char *key)
{
	while (*key && *word == *key) {
		word++;
		key++;
	}
	if (*key || *word != '=')
		return NULL;
	return word + 1;
}

static int sl_store(struct sl_config *cfg, const struct sl_key *k, const char *val)
{
	char *base = (char *)cfg + k->off;
	u64 v = 0;

	if (k->type == SL_K_LABEL)
		return sl_parse_label(val, base);
	if (sl_parse_u64(val, &v))
		return -1;
	switch (k->type) {
	case SL_K_GROUP_BURST:
	case SL_K_BURST:
		if (v < 1 || v > SL_BURST_S_MAX)
			return -1;
		*(u32 *)base = (u32)v;
		return 0;
	case SL_K_WEIGHT:
		if (v < SL_WEIGHT_MIN || v > SL_WEIGHT_MAX)
			return -1;
		*(u32 *)base = (u32)v;
		return 0;
	case SL_K_BOOL:
		if (v > 1)
			return -1;
		*(u32 *)base = (u32)v;
		return 0;
	case SL_K_IOPS_SIZE:
		if (v != 0 && (v < 512 || v > U32_MAX))
			return -1;
		*(u64 *)base = v;
		return 0;
	default:
		*(u64 *)base = v;
		return 0;
	}
}

int sl_config_parse(struct sl_config *cfg, enum sl_parse_mode mode,
		    unsigned int argc, char **argv,
		    const char **err, const char **bad_arg)
{
	unsigned char seen[SL_NR_KEYS] = { 0 };
	unsigned int i, k;

	*bad_arg = NULL;
	for (i = 0; i < argc; i++) {
		const char *val = NULL;

		for (k = 0; k < SL_NR_KEYS; k++) {
			val = sl_match_key(argv[i], sl_keys[k].name);
			if (val)
				break;
		}
		*bad_arg = argv[i];
		if (!val) {
			*err = "unknown argument (want key=value with a known key)";
			return -1;
		}
		if (seen[k]) {
			*err = sl_keys[k].e_dup;
			return -1;
		}
		seen[k] = 1;
		if (mode == SL_PARSE_SET && sl_keys[k].table_only) {
			*err = sl_keys[k].off == SL_OFF(group) ?
			       "group: cannot be changed by message (load a new table)" :
			       "pool: cannot be changed by message (load a new table)";
			return -1;
		}
		if (sl_keys[k].type == SL_K_GROUP || sl_keys[k].type == SL_K_GROUP_BURST) {
			if (!cfg->group_given)
				cfg->group_key = k;
			cfg->group_given = true;
		}
		if (sl_store(cfg, &sl_keys[k], val)) {
			*err = sl_keys[k].e_value;
			return -1;
		}
	}
	*bad_arg = NULL;
	return sl_config_validate(cfg, err);
}

/* Sum of two limits where both are set, else 0 (= no bound). */
static u64 sl_total_bound(const u64 *avg, int total, int r, int w)
{
	if (avg[total])
		return avg[total];
	if (avg[r] && avg[w])
		return avg[r] + avg[w] < avg[r] ? U64_MAX : avg[r] + avg[w];
	return 0;
}

static bool sl_any(const u64 *v)
{
	int b;

	for (b = 0; b < SL_NR_BUCKETS; b++)
		if (v[b])
			return true;
	return false;
}

/* QEMU's throttle_is_valid rules for one set of limits. */
static int sl_rates_validate(const u64 *avg, const u64 *max, u32 burst_s,
			     const struct sl_rate_errors *e, const char **err)
{
	bool any_max = false;
	int b;

	if (avg[SL_BPS] && (avg[SL_RBPS] || avg[SL_WBPS])) {
		*err = e->bps_combined;
		return -1;
	}
	if (avg[SL_IOPS] && (avg[SL_RIOPS] || avg[SL_WIOPS])) {
		*err = e->iops_combined;
		return -1;
	}
	if (max[SL_BPS] && (max[SL_RBPS] || max[SL_WBPS])) {
		*err = e->bps_max_combined;
		return -1;
	}
	if (max[SL_IOPS] && (max[SL_RIOPS] || max[SL_WIOPS])) {
		*err = e->iops_max_combined;
		return -1;
	}
	for (b = 0; b < SL_NR_BUCKETS; b++) {
		if (!max[b])
			continue;
		if (!avg[b]) {
			*err = e->max_needs_avg[b];
			return -1;
		}
		if (max[b] < avg[b]) {
			*err = e->max_below_avg[b];
			return -1;
		}
		any_max = true;
	}
	if (burst_s > 1 && !any_max) {
		*err = e->burst_needs_max;
		return -1;
	}
	return 0;
}

int sl_config_validate(const struct sl_config *cfg, const char **err)
{
	/*
	 * The parser checks these per word; a config built another way (the
	 * agent's typed policy) is held to the same ranges here.
	 */
	if (cfg->burst_s < 1 || cfg->burst_s > SL_BURST_S_MAX) {
		*err = "burst_s: invalid value";
		return -1;
	}
	if (cfg->group_burst_s < 1 || cfg->group_burst_s > SL_BURST_S_MAX) {
		*err = "group_burst_s: invalid value";
		return -1;
	}
	if (cfg->weight < SL_WEIGHT_MIN || cfg->weight > SL_WEIGHT_MAX) {
		*err = "weight: invalid value";
		return -1;
	}
	if (cfg->iops_size && (cfg->iops_size < 512 || cfg->iops_size > U32_MAX)) {
		*err = "iops_size: invalid value";
		return -1;
	}
	if (cfg->dirty_strict > 1) {
		*err = "dirty_strict: invalid value";
		return -1;
	}
	if (sl_rates_validate(cfg->avg, cfg->max, cfg->burst_s, &sl_rate_errors[0], err) ||
	    sl_rates_validate(cfg->group_avg, cfg->group_max, cfg->group_burst_s,
			      &sl_rate_errors[1], err))
		return -1;
	/* any group_* key, even one that says 0, needs the group it is for */
	if (!cfg->group[0] && cfg->group_given) {
		*err = sl_keys[cfg->group_key < SL_NR_KEYS ? cfg->group_key : 0].e_group;
		return -1;
	}
	if (!cfg->group[0] && sl_any(cfg->group_avg)) {
		*err = "group_*: needs group";
		return -1;
	}
	if (cfg->iops_size && !cfg->avg[SL_IOPS] && !cfg->avg[SL_RIOPS] &&
	    !cfg->avg[SL_WIOPS]) {
		*err = "iops_size: needs a limit of iops, riops or wiops";
		return -1;
	}
	if (!cfg->pool[0]) {
		if (cfg->weight != SL_WEIGHT_DEFAULT) {
			*err = "weight: needs pool";
			return -1;
		}
		if (cfg->reserve_iops) {
			*err = "reserve_iops: needs pool";
			return -1;
		}
		if (cfg->reserve_bps) {
			*err = "reserve_bps: needs pool";
			return -1;
		}
		if (cfg->latency_us) {
			*err = "latency_us: needs pool";
			return -1;
		}
	}
	if (cfg->latency_us > SL_LATENCY_US_MAX) {
		*err = "latency_us: above 10000000";
		return -1;
	}
	if (cfg->reserve_iops > SL_RESERVE_IOPS_MAX) {
		*err = "reserve_iops: above 10000000";
		return -1;
	}
	if (cfg->reserve_bps > SL_RESERVE_BPS_MAX) {
		*err = "reserve_bps: above 1099511627776";
		return -1;
	}
	if (cfg->reserve_iops &&
	    sl_total_bound(cfg->avg, SL_IOPS, SL_RIOPS, SL_WIOPS) &&
	    cfg->reserve_iops > sl_total_bound(cfg->avg, SL_IOPS, SL_RIOPS, SL_WIOPS)) {
		*err = "reserve_iops: exceeds the volume's iops limit";
		return -1;
	}
	if (cfg->reserve_bps &&
	    sl_total_bound(cfg->avg, SL_BPS, SL_RBPS, SL_WBPS) &&
	    cfg->reserve_bps > sl_total_bound(cfg->avg, SL_BPS, SL_RBPS, SL_WBPS)) {
		*err = "reserve_bps: exceeds the volume's bps limit";
		return -1;
	}
	return 0;
}

bool sl_config_limited(const struct sl_config *cfg)
{
	int b;

	for (b = 0; b < SL_NR_BUCKETS; b++)
		if (cfg->avg[b])
			return true;
	return false;
}

struct sl_out {
	char *buf;
	size_t len, pos;
	bool overflow;
};

static void sl_put(struct sl_out *o, const char *s)
{
	for (; *s; s++) {
		if (o->pos + 1 >= o->len) {
			o->overflow = true;
			return;
		}
		o->buf[o->pos++] = *s;
	}
	o->buf[o->pos] = '\0';
}

static void sl_put_u64(struct sl_out *o, u64 v)
{
	char tmp[21];
	int i = 20;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sl_put(o, tmp + i);
}

static int sl_format(const struct sl_config *cfg, char *buf, size_t len,
		     bool for_set)
{
	struct sl_out o = { buf, len, 0, false };
	unsigned int k;
	int words = 0;

	if (!len)
		return -1;
	buf[0] = '\0';
	for (k = 0; k < SL_NR_KEYS; k++) {
		const struct sl_key *key = &sl_keys[k];
		const char *base = (const char *)cfg + key->off;
		u64 v;

		if (for_set && key->table_only)
			continue;
		if (key->type == SL_K_LABEL) {
			if (!base[0])
				continue;
		} else {
			if (key->type == SL_K_BURST || key->type == SL_K_WEIGHT ||
			    key->type == SL_K_BOOL || key->type == SL_K_GROUP_BURST)
				v = *(const u32 *)base;
			else
				v = *(const u64 *)base;
			if (for_set && (key->type == SL_K_GROUP ||
					key->type == SL_K_GROUP_BURST))
				continue;	/* a set changes its group only when asked */
			else if (for_set)
				;	/* every value, so that the set leaves no old one */
			else if ((key->type == SL_K_BURST ||
				  key->type == SL_K_GROUP_BURST) && v == 1)
				continue;
			else if (key->type == SL_K_WEIGHT && v == SL_WEIGHT_DEFAULT)
				continue;
			else if (!v)
				continue;
		}
		if (words++)
			sl_put(&o, " ");
		sl_put(&o, key->name);
		sl_put(&o, "=");
		if (key->type == SL_K_LABEL)
			sl_put(&o, base);
		else
			sl_put_u64(&o, v);
	}
	return o.overflow ? -1 : words;
}

int sl_config_format(const struct sl_config *cfg, char *buf, size_t len)
{
	return sl_format(cfg, buf, len, false);
}

int sl_config_format_set(const struct sl_config *cfg, char *buf, size_t len)
{
	return sl_format(cfg, buf, len, true);
}

/* Arithmetic */

static u64 sl_sat_add(u64 a, u64 b)
{
	return a + b < a ? U64_MAX : a + b;
}

u64 sl_mul_div(u64 a, u64 b, u64 c)
{
	sl_u128 p = (sl_u128)a * b;
	u64 hi = (u64)(p >> 64), lo = (u64)p, q = 0;
	int i;

	if (hi >= c)
		return U64_MAX;
	/* Restoring division of hi:lo by c; the quotient fits in 64 bits. */
	for (i = 63; i >= 0; i--) {
		bool carry = hi >> 63;

		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		if (carry || hi >= c) {
			hi -= c;
			q |= 1ULL << i;
		}
	}
	return q;
}

/* ceil(num / den) for a 128-bit den; num, den > 0. */
static u64 sl_div_ceil_wide(u64 num, sl_u128 den)
{
	u64 d;

	if (den > num)
		return 1;
	d = (u64)den;
	return num / d + (num % d != 0);
}

static bool sl_bucket_applies(int b, enum sl_dir dir, bool count_bytes)
{
	if (b < SL_IOPS && !count_bytes)
		return false;
	switch (b) {
	case SL_RBPS:
	case SL_RIOPS:
		return dir == SL_READ;
	case SL_WBPS:
	case SL_WIOPS:
		return dir == SL_WRITE;
	default:
		return true;
	}
}

/*
 * Nanoseconds of bucket time an IO costs at rate; io_ns is what one IO costs
 * an IOPS bucket at that rate.
 */
static u64 sl_cost_ns(int bucket, u64 rate, u64 io_ns, u64 bytes, u64 iops_size)
{
	if (bucket >= SL_IOPS) {
		if (iops_size && bytes > iops_size)
			return sl_div_ceil_wide(bytes * SL_NSEC_PER_SEC,
						(sl_u128)iops_size * rate);
		return io_ns;
	}
	if (!bytes)
		return 0;
	return sl_div_ceil_wide(bytes * SL_NSEC_PER_SEC, rate);
}

static void sl_limits_from_rates(struct sl_limits *lim, const u64 *avg,
				 const u64 *max, u32 burst_s, u64 iops_size)
{
	int b, d, cb;

	__builtin_memset(lim, 0, sizeof(*lim));
	lim->iops_size = iops_size;
	for (b = 0; b < SL_NR_BUCKETS; b++) {
		struct sl_bucket_cfg *bc = &lim->b[b];

		if (!avg[b])
			continue;
		lim->any = true;
		bc->rate = avg[b];
		if (max[b]) {
			/* depth = max * burst_s units, in ns at rate avg */
			sl_u128 units = (sl_u128)max[b] * burst_s;

			if (units >> 64)
				bc->tau_ns = U64_MAX;
			else
				bc->tau_ns = sl_mul_div((u64)units, SL_NSEC_PER_SEC, avg[b]);
			if (burst_s > 1) {
				bc->burst_rate = max[b];
				bc->burst_tau_ns = SL_NSEC_PER_SEC / 10;
			}
		} else {
			/* QEMU: without a burst rate the bucket holds avg/10 */
			bc->tau_ns = SL_NSEC_PER_SEC / 10;
		}
		bc->io_ns = sl_div_ceil_wide(SL_NSEC_PER_SEC, bc->rate);
		if (bc->burst_rate)
			bc->burst_io_ns = sl_div_ceil_wide(SL_NSEC_PER_SEC, bc->burst_rate);
	}
	for (d = 0; d < 2; d++) {
		for (cb = 0; cb < 2; cb++) {
			for (b = 0; b < SL_NR_BUCKETS; b++)
				if (lim->b[b].rate && sl_bucket_applies(b, d, cb))
					lim->on[d][cb][lim->nr_on[d][cb]++] = b;
		}
	}
}

void sl_limits_from_config(struct sl_limits *lim, const struct sl_config *cfg)
{
	sl_limits_from_rates(lim, cfg->avg, cfg->max, cfg->burst_s, cfg->iops_size);
}

void sl_limits_from_group(struct sl_limits *lim, const struct sl_config *cfg)
{
	sl_limits_from_rates(lim, cfg->group_avg, cfg->group_max,
			     cfg->group_burst_s, 0);
}

void sl_throttle_init(struct sl_throttle *t)
{
	__builtin_memset(t, 0, sizeof(*t));
}

static u64 sl_over(u64 tat, u64 tau, u64 now)
{
	if (tat <= now || tat - now <= tau)
		return 0;
	return tat - now - tau;
}

u64 sl_throttle_wait(const struct sl_throttle *t, const struct sl_limits *lim,
		     u64 now, enum sl_dir dir, bool count_bytes)
{
	const u8 *on = lim->on[dir][count_bytes];
	u64 wait = 0, w;
	unsigned int i;

	for (i = 0; i < lim->nr_on[dir][count_bytes]; i++) {
		const struct sl_bucket_cfg *bc = &lim->b[on[i]];

		w = sl_over(t->tat[on[i]], bc->tau_ns, now);
		if (w > wait)
			wait = w;
		if (bc->burst_rate) {
			w = sl_over(t->burst_tat[on[i]], bc->burst_tau_ns, now);
			if (w > wait)
				wait = w;
		}
	}
	return wait;
}

void sl_throttle_charge(struct sl_throttle *t, const struct sl_limits *lim,
			u64 now, enum sl_dir dir, u64 bytes, bool count_bytes)
{
	const u8 *on = lim->on[dir][count_bytes];
	u64 iops_size = count_bytes ? lim->iops_size : 0;
	unsigned int i;

	for (i = 0; i < lim->nr_on[dir][count_bytes]; i++) {
		const struct sl_bucket_cfg *bc = &lim->b[on[i]];
		int b = on[i];
		u64 start;

		start = t->tat[b] > now ? t->tat[b] : now;
		t->tat[b] = sl_sat_add(start, sl_cost_ns(b, bc->rate, bc->io_ns, bytes,
							 iops_size));
		if (bc->burst_rate) {
			start = t->burst_tat[b] > now ? t->burst_tat[b] : now;
			t->burst_tat[b] = sl_sat_add(start,
				sl_cost_ns(b, bc->burst_rate, bc->burst_io_ns, bytes,
					   iops_size));
		}
	}
}

u64 sl_throttle_admit(struct sl_throttle *t, const struct sl_limits *lim,
		      u64 now, enum sl_dir dir, u64 bytes, bool count_bytes)
{
	u64 wait = sl_throttle_wait(t, lim, now, dir, count_bytes);

	if (!wait)
		sl_throttle_charge(t, lim, now, dir, bytes, count_bytes);
	return wait;
}

/* ceil(a * b / c), saturated to U64_MAX; c != 0. */
static u64 sl_mul_div_ceil(u64 a, u64 b, u64 c)
{
	u64 q = sl_mul_div(a, b, c);

	if (q == U64_MAX || (sl_u128)q * c == (sl_u128)a * b)
		return q;
	return q + 1;
}

static u64 sl_sat_mul(u64 a, u64 b)
{
	sl_u128 p = (sl_u128)a * b;

	return p >> 64 ? U64_MAX : (u64)p;
}

/* What nr IOs of bytes in all cost bucket b at rate (io_ns an IO), ns. */
static u64 sl_cost_many_ns(int b, u64 rate, u64 io_ns, u64 nr, u64 bytes)
{
	if (b >= SL_IOPS)
		return sl_sat_mul(nr, io_ns);
	return bytes ? sl_mul_div_ceil(bytes, SL_NSEC_PER_SEC, rate) : 0;
}

void sl_throttle_charge_many(struct sl_throttle *t, const struct sl_limits *lim,
			     u64 now, enum sl_dir dir, u64 nr, u64 bytes)
{
	const u8 *on = lim->on[dir][1];
	unsigned int i;

	if (!nr)
		return;
	for (i = 0; i < lim->nr_on[dir][1]; i++) {
		const struct sl_bucket_cfg *bc = &lim->b[on[i]];
		int b = on[i];
		u64 start;

		start = t->tat[b] > now ? t->tat[b] : now;
		t->tat[b] = sl_sat_add(start, sl_cost_many_ns(b, bc->rate, bc->io_ns,
							      nr, bytes));
		if (bc->burst_rate) {
			start = t->burst_tat[b] > now ? t->burst_tat[b] : now;
			t->burst_tat[b] = sl_sat_add(start,
				sl_cost_many_ns(b, bc->burst_rate, bc->burst_io_ns, nr,
						bytes));
		}
	}
}

/* Whether a bucket at tat, of depth tau, holds cost more at now. */
static bool sl_fits(u64 tat, u64 tau, u64 cost, u64 now)
{
	u64 start = tat > now ? tat : now;

	return sl_sat_add(start, cost) - now <= tau;
}

bool sl_throttle_has_room(const struct sl_throttle *t, const struct sl_limits *lim,
			  u64 now, u64 nr, u64 bytes)
{
	int b;

	for (b = 0; b < SL_NR_BUCKETS; b++) {
		const struct sl_bucket_cfg *bc = &lim->b[b];

		if (!bc->rate)
			continue;
		if (!sl_fits(t->tat[b], bc->tau_ns,
			     sl_cost_many_ns(b, bc->rate, bc->io_ns, nr, bytes), now))
			return false;
		if (bc->burst_rate &&
		    !sl_fits(t->burst_tat[b], bc->burst_tau_ns,
			     sl_cost_many_ns(b, bc->burst_rate, bc->burst_io_ns, nr,
					     bytes), now))
			return false;
	}
	return true;
}

/*
 * Take back the charge of an IO that will be submitted, and charged, again
 * (a noflush suspend hands it back to device-mapper): each bucket's tat
 * moves back by the IO's cost, at most to where it would have been empty.
 */
void sl_throttle_refund(struct sl_throttle *t, const struct sl_limits *lim,
			u64 now, enum sl_dir dir, u64 bytes, bool count_bytes)
{
	const u8 *on = lim->on[dir][count_bytes];
	u64 iops_size = count_bytes ? lim->iops_size : 0, cost;
	unsigned int i;

	for (i = 0; i < lim->nr_on[dir][count_bytes]; i++) {
		const struct sl_bucket_cfg *bc = &lim->b[on[i]];
		int b = on[i];

		cost = sl_cost_ns(b, bc->rate, bc->io_ns, bytes, iops_size);
		t->tat[b] = t->tat[b] > now + cost ? t->tat[b] - cost : now;
		if (bc->burst_rate) {
			cost = sl_cost_ns(b, bc->burst_rate, bc->burst_io_ns, bytes,
					  iops_size);
			t->burst_tat[b] = t->burst_tat[b] > now + cost ?
					  t->burst_tat[b] - cost : now;
		}
	}
}

/*
 * What a bucket holds is carried over in units. Up to the old bucket's depth
 * it is the bucket's level, and at most the new bucket's depth of it is
 * kept: a lower limit applies from now on, it does not charge the past again
 * at the new rate. Beyond the depth it is debt, IO sent that the limit had
 * not yet allowed (a suspend sends what is held at once, charged): kept
 * whole, so that a suspend and a reload, even of the same table, cannot
 * forgive it, and the average over any window that includes them stays at
 * the limit.
 */
static u64 sl_rescale_tat(u64 tat, u64 old_rate, u64 new_rate, u64 old_tau,
			  u64 new_tau, u64 now)
{
	u64 ahead, level, debt;

	if (!old_rate || !new_rate || tat <= now)
		return 0;
	ahead = tat - now;
	level = ahead < old_tau ? ahead : old_tau;
	debt = ahead - level;
	level = sl_mul_div(level, old_rate, new_rate);
	if (level > new_tau)
		level = new_tau;
	return sl_sat_add(sl_sat_add(now, level),
			  sl_mul_div(debt, old_rate, new_rate));
}

void sl_throttle_rescale(struct sl_throttle *t, const struct sl_limits *old,
			 const struct sl_limits *new, u64 now)
{
	int b;

	for (b = 0; b < SL_NR_BUCKETS; b++) {
		t->tat[b] = sl_rescale_tat(t->tat[b], old->b[b].rate,
					   new->b[b].rate, old->b[b].tau_ns,
					   new->b[b].tau_ns, now);
		t->burst_tat[b] = sl_rescale_tat(t->burst_tat[b],
						 old->b[b].burst_rate,
						 new->b[b].burst_rate,
						 old->b[b].burst_tau_ns,
						 new->b[b].burst_tau_ns, now);
	}
}

unsigned int sl_lat_bucket(u64 lat_ns)
{
	u64 units = lat_ns / SL_LAT_BUCKET0_NS;
	unsigned int i;

	if (!units)
		return 0;
	i = 64 - __builtin_clzll(units);
	return i < SL_LAT_BUCKETS ? i : SL_LAT_BUCKETS - 1;
}

unsigned int sl_hist_bucket(u64 wait_ns)
{
	u64 ms = wait_ns / 1000000;
	unsigned int i;

	if (!ms)
		return 0;
	i = 64 - __builtin_clzll(ms);
	return i < SL_HIST_BUCKETS ? i : SL_HIST_BUCKETS - 1;
}
