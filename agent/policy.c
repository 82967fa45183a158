// SPDX-License-Identifier: GPL-2.0
/* Typed policies and ceilings; see policy.h. */
#include <stdio.h>
#include <string.h>

#include "policy.h"

#define UNLIMITED UINT64_MAX

/* The target's key of each bucket, and the API's name of its rate. */
static const char *const bucket_key[SL_NR_BUCKETS] = { "bps", "rbps", "wbps", "iops", "riops",
						       "wiops" };

#define RATES(kind, suffix)                                                                     \
	{ "total_bytes_sec" suffix, kind, SL_BPS }, { "read_bytes_sec" suffix, kind, SL_RBPS },  \
	{ "write_bytes_sec" suffix, kind, SL_WBPS }, { "total_iops_sec" suffix, kind, SL_IOPS }, \
	{ "read_iops_sec" suffix, kind, SL_RIOPS }, { "write_iops_sec" suffix, kind, SL_WIOPS }

const struct ag_field ag_fields[AG_NR_FIELDS] = {
	RATES(AG_F_AVG, ""),
	RATES(AG_F_MAX, "_max"),
	RATES(AG_F_LENGTH, "_max_length"),
	{ "size_iops_sec", AG_F_IOPS_SIZE, 0 },
	{ "weight", AG_F_WEIGHT, 0 },
	{ "reservation_iops", AG_F_RESERVE_IOPS, 0 },
	{ "reservation_bytes_sec", AG_F_RESERVE_BPS, 0 },
	{ "latency_target_us", AG_F_LATENCY, 0 },
	RATES(AG_F_PER_GB, "_per_gb"),
	RATES(AG_F_PER_GB_MIN, "_per_gb_min"),
	{ "dirty_bytes_max", AG_F_DIRTY, 0 },
};

/* The field of a kind and bucket: the first six of each kind are in bucket order. */
static const struct ag_field *field_of(enum ag_field_kind kind, enum sl_bucket_id b)
{
	unsigned int i;

	for (i = 0; i < AG_NR_FIELDS; i++)
		if (ag_fields[i].kind == kind && ag_fields[i].bucket == b)
			return &ag_fields[i];
	return &ag_fields[0];
}

const struct ag_field *ag_field_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < AG_NR_FIELDS; i++)
		if (!strcmp(ag_fields[i].name, name))
			return &ag_fields[i];
	return NULL;
}

void ag_policy_init(struct ag_policy *p)
{
	memset(p, 0, sizeof(*p));
	sl_config_init(&p->limits);
}

uint64_t ag_policy_get(const struct ag_policy *p, const struct ag_field *f)
{
	const struct sl_config *l = &p->limits;

	switch (f->kind) {
	case AG_F_AVG:
		return l->avg[f->bucket];
	case AG_F_MAX:
		return l->max[f->bucket];
	case AG_F_LENGTH:
		return l->max[f->bucket] && l->burst_s > 1 ? l->burst_s : 0;
	case AG_F_IOPS_SIZE:
		return l->iops_size;
	case AG_F_WEIGHT:
		return l->weight == SL_WEIGHT_DEFAULT ? 0 : l->weight;
	case AG_F_RESERVE_IOPS:
		return l->reserve_iops;
	case AG_F_RESERVE_BPS:
		return l->reserve_bps;
	case AG_F_LATENCY:
		return l->latency_us;
	case AG_F_PER_GB:
		return p->scaled[f->bucket].per_gib;
	case AG_F_PER_GB_MIN:
		return p->scaled[f->bucket].floor;
	case AG_F_DIRTY:
		return p->dirty_bytes_max;
	}
	return 0;
}

int ag_policy_set(struct ag_policy *p, const struct ag_field *f, uint64_t v, struct ag_err *e)
{
	struct sl_config *l = &p->limits;

	if (v > AG_VALUE_MAX)
		return ag_fail(e, AG_E_INVALID, "%s: an integer from 0 to 2^53", f->name);
	switch (f->kind) {
	case AG_F_AVG:
		l->avg[f->bucket] = v;
		break;
	case AG_F_MAX:
		l->max[f->bucket] = v;
		break;
	case AG_F_LENGTH:
		if (v > SL_BURST_S_MAX)
			return ag_fail(e, AG_E_INVALID, "%s: from 1 to %d seconds", f->name,
				       SL_BURST_S_MAX);
		l->burst_s = v ? (uint32_t)v : 1;
		break;
	case AG_F_IOPS_SIZE:
		if (v && (v < 512 || v > UINT32_MAX))
			return ag_fail(e, AG_E_INVALID, "%s: 0, or from 512 to %u bytes", f->name,
				       UINT32_MAX);
		l->iops_size = v;
		break;
	case AG_F_WEIGHT:
		if (v > SL_WEIGHT_MAX)
			return ag_fail(e, AG_E_INVALID, "%s: from %d to %d", f->name, SL_WEIGHT_MIN,
				       SL_WEIGHT_MAX);
		l->weight = v ? (uint32_t)v : SL_WEIGHT_DEFAULT;
		break;
	case AG_F_RESERVE_IOPS:
		l->reserve_iops = v;
		break;
	case AG_F_RESERVE_BPS:
		l->reserve_bps = v;
		break;
	case AG_F_LATENCY:
		if (v > SL_LATENCY_US_MAX)
			return ag_fail(e, AG_E_INVALID, "%s: 0 (none), or from 1 to %llu microseconds",
				       f->name, SL_LATENCY_US_MAX);
		l->latency_us = v;
		break;
	case AG_F_PER_GB:
		p->scaled[f->bucket].per_gib = v;
		break;
	case AG_F_PER_GB_MIN:
		p->scaled[f->bucket].floor = v;
		break;
	case AG_F_DIRTY:
		p->dirty_bytes_max = v;
		break;
	}
	return 0;
}

bool ag_policy_equal(const struct ag_policy *a, const struct ag_policy *b)
{
	unsigned int i;

	for (i = 0; i < AG_NR_FIELDS; i++)
		if (ag_policy_get(a, &ag_fields[i]) != ag_policy_get(b, &ag_fields[i]))
			return false;
	/* a burst length without a burst is not shown, but is kept */
	return a->limits.burst_s == b->limits.burst_s;
}

void ag_policy_rename(const char *in, char *out, size_t len)
{
	size_t i, o = 0;

	if (!len)
		return;
	/* the target's keys are words of [a-z_]; each one that is a field's is replaced */
	for (i = 0; in[i] && o + 1 < len;) {
		const char *name = NULL;
		size_t n = 0;
		unsigned int b;

		while ((in[i + n] >= 'a' && in[i + n] <= 'z') || in[i + n] == '_')
			n++;
		if (!n) {
			out[o++] = in[i++];
			continue;
		}
		for (b = 0; b < SL_NR_BUCKETS && !name; b++) {
			size_t k = strlen(bucket_key[b]);

			if (n == k && !strncmp(in + i, bucket_key[b], k))
				name = field_of(AG_F_AVG, b)->name;
			else if (n == k + 4 && !strncmp(in + i, bucket_key[b], k) &&
				 !strncmp(in + i + k, "_max", 4))
				name = field_of(AG_F_MAX, b)->name;
		}
		if (n == 7 && !strncmp(in + i, "burst_s", 7))
			name = "*_max_length";
		else if (n == 9 && !strncmp(in + i, "iops_size", 9))
			name = "size_iops_sec";
		else if (n == 12 && !strncmp(in + i, "reserve_iops", 12))
			name = "reservation_iops";
		else if (n == 11 && !strncmp(in + i, "reserve_bps", 11))
			name = "reservation_bytes_sec";
		else if (n == 10 && !strncmp(in + i, "latency_us", 10))
			name = "latency_target_us";
		if (name)
			o += snprintf(out + o, len - o, "%s", name);
		else
			o += snprintf(out + o, len - o, "%.*s", (int)n, in + i);
		if (o >= len)
			o = len - 1;
		i += n;
	}
	out[o] = '\0';
}

int ag_policy_in_force(const struct ag_policy *p, uint64_t size, const char *pool,
		       struct sl_config *out, struct ag_err *e)
{
	const char *why = NULL;
	char msg[200];
	unsigned int b;

	*out = p->limits;
	out->pool[0] = out->tenant[0] = out->group[0] = '\0';
	for (b = 0; b < SL_NR_BUCKETS; b++) {
		const struct ag_scaled *s = &p->scaled[b];
		const char *rate = field_of(AG_F_AVG, b)->name;
		uint64_t v;

		if (!s->per_gib) {
			if (s->floor)
				return ag_fail(e, AG_E_INVALID, "%s_per_gb_min: needs %s_per_gb", rate,
					       rate);
			continue;
		}
		if (p->limits.avg[b])
			return ag_fail(e, AG_E_INVALID, "%s_per_gb: give %s or %s_per_gb, not both",
				       rate, rate, rate);
		v = sl_mul_div(s->per_gib, size, 1ULL << 30);
		if (v < s->floor)
			v = s->floor;
		if (v < 1)
			v = 1;
		out->avg[b] = v > AG_VALUE_MAX ? AG_VALUE_MAX : v;
	}
	/* the bdi's own share holds below the free-run point too */
	out->dirty_strict = p->dirty_bytes_max ? 1 : 0;
	snprintf(out->pool, sizeof(out->pool), "%s", pool);
	if (sl_config_validate(out, &why)) {
		ag_policy_rename(why, msg, sizeof(msg));
		return ag_fail(e, AG_E_INVALID, "%s", msg);
	}
	return 0;
}

/* One of the agent's words: a scaled rate or dirty_bytes_max. */
static int parse_word(struct ag_policy *p, const char *w, unsigned int *seen)
{
	unsigned long long x, y;
	char key[8], tail;
	unsigned int b;

	if (strchr(w, '-') || strchr(w, '+'))
		return -1;
	if (sscanf(w, "dirty_bytes_max=%llu%c", &x, &tail) == 1) {
		if (x < 1 || x > AG_VALUE_MAX || (*seen & 1u << SL_NR_BUCKETS))
			return -1;
		*seen |= 1u << SL_NR_BUCKETS;
		p->dirty_bytes_max = x;
		return 0;
	}
	if (sscanf(w, "%7[a-z]=%llu:%llu%c", key, &x, &y, &tail) != 3 || x < 1 ||
	    x > AG_VALUE_MAX || y > AG_VALUE_MAX)
		return -1;
	for (b = 0; b < SL_NR_BUCKETS; b++)
		if (!strcmp(key, bucket_key[b]) && !(*seen & 1u << b)) {
			*seen |= 1u << b;
			p->scaled[b] = (struct ag_scaled){ x, y };
			p->limits.avg[b] = 0;
			return 0;
		}
	return -1;
}

#define MAX_WORDS 64

int ag_policy_parse(struct ag_policy *p, const char *args, const char *words, struct ag_err *e)
{
	char buf[SL_FORMAT_MAX], *argv[MAX_WORDS], *save = NULL, *w;
	const char *why = NULL, *bad = NULL;
	unsigned int n = 0, seen = 0;

	ag_policy_init(p);
	if (strlen(args) >= sizeof(buf))
		return ag_fail(e, AG_E_INVALID, "policy: too long");
	strcpy(buf, args);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		/* labels come from the volume, never from its policy */
		if (n == MAX_WORDS || !strncmp(w, "pool=", 5) || !strncmp(w, "tenant=", 7) ||
		    !strncmp(w, "group", 5))
			return ag_fail(e, AG_E_INVALID, "policy: bad word '%.40s'", w);
		argv[n++] = w;
	}
	/* with a pool, as every volume's table has one */
	strcpy(p->limits.pool, "p");
	/*
	 * A word that does not parse names itself in bad; the combination (a
	 * failure without bad, all words stored) is checked in force, where
	 * the scaled rates are known.
	 */
	if (sl_config_parse(&p->limits, SL_PARSE_SET, n, argv, &why, &bad) && bad)
		return ag_fail(e, AG_E_INVALID, "policy: %s", why);
	p->limits.pool[0] = '\0';
	p->limits.dirty_strict = 0;	/* it follows dirty_bytes_max */
	if (strlen(words) >= sizeof(buf))
		return ag_fail(e, AG_E_INVALID, "agent_policy: too long");
	strcpy(buf, words);
	save = NULL;
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (parse_word(p, w, &seen))
			return ag_fail(e, AG_E_INVALID, "agent_policy: bad word '%.40s'", w);
	return 0;
}

/* Append a word to buf, space-separated: -1 when it does not fit. */
static int append(char *buf, size_t len, size_t *used, const char *word)
{
	int n = snprintf(buf + *used, len - *used, "%s%s", *used ? " " : "", word);

	if (n < 0 || (size_t)n >= len - *used)
		return -1;
	*used += (size_t)n;
	return 0;
}

int ag_policy_format(const struct ag_policy *p, uint64_t size, const char *pool, char *args,
		     size_t args_len, char *words, size_t words_len, struct ag_err *e)
{
	struct sl_config in_force;
	size_t used = 0;
	unsigned int b;
	char word[64];

	if (ag_policy_in_force(p, size, pool, &in_force, e))
		return -1;
	in_force.pool[0] = '\0';
	if (sl_config_format(&in_force, args, args_len) < 0)
		return ag_fail(e, AG_E_INVALID, "policy: too long");
	if (!words_len)
		return ag_fail(e, AG_E_INVALID, "agent_policy: too long");
	words[0] = '\0';
	for (b = 0; b < SL_NR_BUCKETS; b++) {
		if (!p->scaled[b].per_gib)
			continue;
		snprintf(word, sizeof(word), "%s=%llu:%llu", bucket_key[b],
			 (unsigned long long)p->scaled[b].per_gib,
			 (unsigned long long)p->scaled[b].floor);
		if (append(words, words_len, &used, word))
			return ag_fail(e, AG_E_INVALID, "agent_policy: too long");
	}
	snprintf(word, sizeof(word), "dirty_bytes_max=%llu", (unsigned long long)p->dirty_bytes_max);
	if (p->dirty_bytes_max && append(words, words_len, &used, word))
		return ag_fail(e, AG_E_INVALID, "agent_policy: too long");
	return 0;
}

bool ag_ceiling_field(const struct ag_field *f)
{
	return f->kind != AG_F_PER_GB && f->kind != AG_F_PER_GB_MIN;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UNLIMITED : a + b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A bucket's own bound: its rate (or its burst rate, for max), else none. */
static uint64_t own(const struct sl_config *l, enum sl_bucket_id b, bool max)
{
	if (max && l->max[b])
		return l->max[b];
	return l->avg[b] ? l->avg[b] : UNLIMITED;
}

/*
 * The most a volume may do in a bucket's direction: its own bound, and a
 * total's bound by read and write together, a read's or write's by the total.
 */
static uint64_t most(const struct sl_config *l, enum sl_bucket_id b, bool max)
{
	enum sl_bucket_id total = b < SL_IOPS ? SL_BPS : SL_IOPS;

	if (b == total)
		return min_u64(own(l, b, max), sat_add(own(l, b + 1, max), own(l, b + 2, max)));
	return min_u64(own(l, b, max), own(l, total, max));
}

static bool has(const struct ag_ceilings *c, const struct ag_field *f)
{
	return c->set & (1ULL << (f - ag_fields));
}

static uint64_t ceiling(const struct ag_ceilings *c, const struct ag_field *f)
{
	return c->value[f - ag_fields];
}

static int above(struct ag_err *e, const char *name, uint64_t have, uint64_t lim, const char *note)
{
	if (have == UNLIMITED)
		return ag_fail(e, AG_E_ABOVE_CEILING,
			       "%s: the tenant's ceiling is %llu; unlimited is above it%s", name,
			       (unsigned long long)lim, note);
	return ag_fail(e, AG_E_ABOVE_CEILING, "%s: %llu is above the tenant's ceiling of %llu%s",
		       name, (unsigned long long)have, (unsigned long long)lim, note);
}

/* The burst length: bounded where a burst goes above the rate's ceiling. */
static int within_length(const struct sl_config *l, const struct ag_ceilings *c,
			 enum sl_bucket_id b, struct ag_err *e)
{
	const struct ag_field *avg = field_of(AG_F_AVG, b), *len = field_of(AG_F_LENGTH, b);
	uint64_t peak = most(l, b, true);

	if (l->burst_s <= 1 || peak <= most(l, b, false))
		return 0;
	if (has(c, len)) {
		if (l->burst_s > ceiling(c, len))
			return above(e, len->name, l->burst_s, ceiling(c, len), "");
		return 0;
	}
	if (has(c, avg) && peak > ceiling(c, avg))
		return above(e, len->name, l->burst_s, 1,
			     " (a burst above the rate's ceiling needs a ceiling on its length)");
	return 0;
}

int ag_policy_within(const struct sl_config *l, uint64_t dirty_bytes_max,
		     const struct ag_ceilings *c, struct ag_err *e)
{
	bool iops_limited = l->avg[SL_IOPS] || l->avg[SL_RIOPS] || l->avg[SL_WIOPS];
	unsigned int i;

	for (i = 0; i < AG_NR_FIELDS; i++) {
		const struct ag_field *f = &ag_fields[i];
		const struct ag_field *rate = field_of(AG_F_AVG, f->bucket);
		uint64_t have, lim = ceiling(c, f);

		switch (f->kind) {
		case AG_F_AVG:
			if (!has(c, f))
				continue;
			have = most(l, f->bucket, false);
			break;
		case AG_F_MAX:
			/* without a ceiling of its own, a burst stays under the rate's */
			if (!has(c, f) && !has(c, rate))
				continue;
			lim = has(c, f) ? lim : ceiling(c, rate);
			have = most(l, f->bucket, true);
			break;
		case AG_F_LENGTH:
			if (within_length(l, c, f->bucket, e))
				return -1;
			continue;
		case AG_F_IOPS_SIZE:
			if (!has(c, f) || !iops_limited)
				continue;
			have = l->iops_size ? l->iops_size : UNLIMITED;
			break;
		case AG_F_WEIGHT:
			have = l->weight;
			break;
		case AG_F_RESERVE_IOPS:
			have = l->reserve_iops;
			break;
		case AG_F_RESERVE_BPS:
			have = l->reserve_bps;
			break;
		case AG_F_LATENCY:
			/* the other way: the ceiling is the tightest target; none is within */
			if (has(c, f) && l->latency_us && l->latency_us < lim)
				return ag_fail(e, AG_E_ABOVE_CEILING, "%s: %llu is tighter than the "
					       "tenant's ceiling of %llu (the tightest it may set)",
					       f->name, (unsigned long long)l->latency_us,
					       (unsigned long long)lim);
			continue;
		case AG_F_DIRTY:
			have = dirty_bytes_max ? dirty_bytes_max : UNLIMITED;
			break;
		default:
			continue;
		}
		if (has(c, f) || f->kind == AG_F_MAX) {
			if (have > lim)
				return above(e, f->name, have, lim, "");
		}
	}
	return 0;
}

int ag_ceilings_from_json(struct ag_ceilings *c, json_t *obj, struct ag_err *e)
{
	const char *name;
	json_t *jv;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(obj))
		return ag_fail(e, AG_E_INVALID, "ceilings: an object");
	json_object_foreach(obj, name, jv) {
		const struct ag_field *f = ag_field_find(name);
		json_int_t v;

		if (!f || !ag_ceiling_field(f))
			return ag_fail(e, AG_E_INVALID, "%.64s: not a field a ceiling can bound", name);
		if (!json_is_integer(jv) || (v = json_integer_value(jv)) < 0 ||
		    (uint64_t)v > AG_VALUE_MAX)
			return ag_fail(e, AG_E_INVALID, "%s: an integer from 0 to 2^53", name);
		c->value[f - ag_fields] = (uint64_t)v;
		c->set |= 1ULL << (f - ag_fields);
	}
	return 0;
}

json_t *ag_ceilings_to_json(const struct ag_ceilings *c)
{
	json_t *obj = json_object();
	unsigned int i;

	for (i = 0; obj && i < AG_NR_FIELDS; i++)
		if (c->set & (1ULL << i))
			json_object_set_new(obj, ag_fields[i].name, json_integer((json_int_t)c->value[i]));
	return obj;
}
