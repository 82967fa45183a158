// SPDX-License-Identifier: GPL-2.0
/* The API's policy fields and the target's arguments; see policy.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define MAX_VALUE (1LL << 53)	/* exact in a double: what any JSON client can send */
#define WEIGHT_DEFAULT 100

struct field {
	const char *api;
	const char *arg;	/* NULL: a _max_length, which all map to burst_s */
};

static const struct field fields[] = {
	{ "total_bytes_sec", "bps" }, { "read_bytes_sec", "rbps" }, { "write_bytes_sec", "wbps" },
	{ "total_iops_sec", "iops" }, { "read_iops_sec", "riops" }, { "write_iops_sec", "wiops" },
	{ "total_bytes_sec_max", "bps_max" }, { "read_bytes_sec_max", "rbps_max" },
	{ "write_bytes_sec_max", "wbps_max" }, { "total_iops_sec_max", "iops_max" },
	{ "read_iops_sec_max", "riops_max" }, { "write_iops_sec_max", "wiops_max" },
	{ "total_bytes_sec_max_length", NULL }, { "read_bytes_sec_max_length", NULL },
	{ "write_bytes_sec_max_length", NULL }, { "total_iops_sec_max_length", NULL },
	{ "read_iops_sec_max_length", NULL }, { "write_iops_sec_max_length", NULL },
	{ "size_iops_sec", "iops_size" }, { "weight", "weight" },
	{ "reservation_iops", "reserve_iops" }, { "reservation_bytes_sec", "reserve_bps" },
};

#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))
#define NR_RATES 6	/* the first fields: the rates that can scale with size */
#define DIRTY_FIELD "dirty_bytes_max"	/* the monitor's, not the target's */

static const struct field *field_of(const char *api)
{
	for (size_t i = 0; i < NR_FIELDS; i++)
		if (!strcmp(fields[i].api, api))
			return &fields[i];
	return NULL;
}

/* A scaling field: "<rate>_per_gb" or "<rate>_per_gb_min" of one of the rates. */
static bool is_scaling(const char *api)
{
	for (int i = 0; i < NR_RATES; i++) {
		size_t n = strlen(fields[i].api);

		if (!strncmp(api, fields[i].api, n) &&
		    (!strcmp(api + n, "_per_gb") || !strcmp(api + n, "_per_gb_min")))
			return true;
	}
	return false;
}

static bool known_field(const char *api)
{
	return field_of(api) || is_scaling(api) || !strcmp(api, DIRTY_FIELD);
}

static long long get_field(json_t *p, const char *name)
{
	json_t *v = json_object_get(p, name);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}

static int fail(char *err, size_t errlen, const char *field, const char *why)
{
	snprintf(err, errlen, "%s: %s", field, why);
	return -1;
}

/* A field's value: a JSON integer in 0..2^53 (not a real, not a string). */
static int value_of(const char *name, json_t *v, long long *out, char *err, size_t errlen)
{
	/* another JSON type is the wrong shape; a fraction a bad value */
	if (!json_is_number(v))
		return fail(err, errlen, name, "an integer from 0 to 2^53") - 1;
	if (!json_is_integer(v))
		return fail(err, errlen, name, "an integer from 0 to 2^53");
	*out = json_integer_value(v);
	if (*out < 0 || *out > MAX_VALUE)
		return fail(err, errlen, name, "an integer from 0 to 2^53");
	return 0;
}

/*
 * The agent_policy words of the *_per_gb fields and dirty_bytes_max; -1
 * with err on a field that conflicts.
 */
static int agent_words(json_t *policy, char *apolicy, size_t len, char *err, size_t errlen)
{
	char name[64];
	size_t used = 0;
	long long per, floor;
	int n;

	apolicy[0] = '\0';
	for (int i = 0; i < NR_RATES; i++) {
		snprintf(name, sizeof(name), "%s_per_gb", fields[i].api);
		per = get_field(policy, name);
		snprintf(name, sizeof(name), "%s_per_gb_min", fields[i].api);
		floor = get_field(policy, name);
		if (!per && floor) {
			snprintf(err, errlen, "%s: needs %s_per_gb", name, fields[i].api);
			return -1;
		}
		if (!per)
			continue;
		if (get_field(policy, fields[i].api)) {
			snprintf(err, errlen, "%s_per_gb: give %s or %s_per_gb, not both",
				 fields[i].api, fields[i].api, fields[i].api);
			return -1;
		}
		n = snprintf(apolicy + used, len - used, "%s%s=%lld:%lld", used ? " " : "",
			     fields[i].arg, per, floor);
		if (n < 0 || (size_t)n >= len - used)
			return fail(err, errlen, "policy", "too long");
		used += n;
	}
	per = get_field(policy, DIRTY_FIELD);
	if (per) {
		n = snprintf(apolicy + used, len - used, "%s" DIRTY_FIELD "=%lld", used ? " " : "", per);
		if (n < 0 || (size_t)n >= len - used)
			return fail(err, errlen, "policy", "too long");
	}
	return 0;
}

int ap_policy_to_args(json_t *policy, char *args, size_t len, char *apolicy, size_t slen,
		      char *err, size_t errlen)
{
	const char *name, *burst_from = NULL;
	long long burst = 1, v;
	size_t used = 0, k;
	bool burst_done = false;
	json_t *jv;
	int n;

	if (!json_is_object(policy))
		return fail(err, errlen, "policy", "an object") - 1;
	json_object_foreach(policy, name, jv) {
		const struct field *f = field_of(name);

		if (!known_field(name))
			return fail(err, errlen, name, "not a policy field") - 1;
		n = value_of(name, jv, &v, err, errlen);
		if (n)
			return n;
		if (!f || f->arg)
			continue;
		if (burst_from && v != burst) {
			snprintf(err, errlen, "%s: must equal %s (one burst length a volume)", name,
				 burst_from);
			return -1;
		}
		burst_from = name;
		burst = v;
	}
	if (agent_words(policy, apolicy, slen, err, errlen))
		return -1;
	/* in the target's canonical order, which the table prints back */
	args[0] = '\0';
	for (k = 0; k < NR_FIELDS; k++) {
		const struct field *f = &fields[k];

		if (!f->arg) {
			if (burst_done || !burst_from || burst == 1)
				continue;
			burst_done = true;
			n = snprintf(args + used, len - used, "%sburst_s=%lld", used ? " " : "", burst);
		} else {
			v = get_field(policy, f->api);
			if (!v)
				continue;
			n = snprintf(args + used, len - used, "%s%s=%lld", used ? " " : "", f->arg, v);
		}
		if (n < 0 || (size_t)n >= len - used)
			return fail(err, errlen, "policy", "too long");
		used += n;
	}
	return 0;
}

/*
 * Put the *_per_gb fields of agent_policy words in place of the rates they
 * set, and dirty_bytes_max.
 */
static int add_agent_words(json_t *p, const char *apolicy)
{
	const char *w = apolicy;

	while (*w) {
		char arg[8], name[64];
		long long per, floor;
		int used = 0, i;

		if (sscanf(w, DIRTY_FIELD "=%lld%n", &per, &used) == 1 && (!w[used] || w[used] == ' ')) {
			json_object_set_new(p, DIRTY_FIELD, json_integer(per));
			w += used;
			while (*w == ' ')
				w++;
			continue;
		}
		used = 0;
		if (sscanf(w, "%7[a-z]=%lld:%lld%n", arg, &per, &floor, &used) != 3 ||
		    (w[used] && w[used] != ' '))
			return -1;
		for (i = 0; i < NR_RATES && strcmp(fields[i].arg, arg); i++)
			;
		if (i == NR_RATES)
			return -1;
		json_object_del(p, fields[i].api);
		snprintf(name, sizeof(name), "%s_per_gb", fields[i].api);
		json_object_set_new(p, name, json_integer(per));
		if (floor) {
			snprintf(name, sizeof(name), "%s_per_gb_min", fields[i].api);
			json_object_set_new(p, name, json_integer(floor));
		}
		w += used;
		while (*w == ' ')
			w++;
	}
	return 0;
}

json_t *ap_policy_from_args(const char *args, const char *apolicy)
{
	json_t *p = json_object();
	const char *w = args;


	while (p && *w) {
		char key[32];
		const char *eq = strchr(w, '='), *end = strchr(w, ' ');
		long long v;
		char *num_end;
		size_t k;

		if (!end)
			end = w + strlen(w);
		if (!eq || eq > end || (size_t)(eq - w) >= sizeof(key))
			goto bad;
		memcpy(key, w, eq - w);
		key[eq - w] = '\0';
		v = strtoll(eq + 1, &num_end, 10);
		if (num_end != end)
			goto bad;
		if (!strcmp(key, "dirty_strict")) {
			/* the agent's, with dirty_bytes_max: no field of its own */
		} else if (!strcmp(key, "burst_s")) {
			/* one length for every rate that has a burst */
			for (k = 0; k < NR_FIELDS; k++) {
				char max[64];

				if (fields[k].arg || strlen(fields[k].api) < 7)
					continue;
				snprintf(max, sizeof(max), "%.*s", (int)(strlen(fields[k].api) - 7),
					 fields[k].api);
				if (json_object_get(p, max))
					json_object_set_new(p, fields[k].api, json_integer(v));
			}
		} else {
			for (k = 0; k < NR_FIELDS; k++)
				if (fields[k].arg && !strcmp(fields[k].arg, key))
					break;
			if (k == NR_FIELDS)
				goto bad;
			json_object_set_new(p, fields[k].api, json_integer(v));
		}
		w = *end ? end + 1 : end;
	}
	if (p && apolicy && add_agent_words(p, apolicy))
		goto bad;
	return p;
bad:
	json_decref(p);
	return NULL;
}

json_t *ap_policy_in_force(const char *args, const char *apolicy)
{
	json_t *p = ap_policy_from_args(args, NULL);
	char word[64];
	const char *at;

	/* the rates are all in args; of the agent's words only dirty_bytes_max */
	at = apolicy ? strstr(apolicy, DIRTY_FIELD "=") : NULL;
	if (p && at && sscanf(at, "%63s", word) == 1 && add_agent_words(p, word)) {
		json_decref(p);
		return NULL;
	}
	return p;
}

int ap_policy_merge(json_t *policy, json_t *patch, char *err, size_t errlen)
{
	const char *name;
	json_t *jv;
	long long v;

	if (!json_is_object(patch))
		return fail(err, errlen, "policy", "an object") - 1;
	json_object_foreach(patch, name, jv) {
		if (!known_field(name))
			return fail(err, errlen, name, "not a policy field") - 1;
		int rc = json_is_null(jv) ? 0 : value_of(name, jv, &v, err, errlen);

		if (rc)
			return rc;
	}
	json_object_foreach(patch, name, jv) {
		if (json_is_null(jv))
			json_object_del(policy, name);
		else
			json_object_set(policy, name, jv);
	}
	return 0;
}

void ap_policy_rename_error(const char *in, char *out, size_t len)
{
	size_t i, o = 0;

	/* target keys are words of [a-z_]; replace each one that is a field's */
	for (i = 0; in[i] && o + 1 < len;) {
		size_t n = 0, k;

		while ((in[i + n] >= 'a' && in[i + n] <= 'z') || in[i + n] == '_')
			n++;
		if (!n) {
			out[o++] = in[i++];
			continue;
		}
		for (k = 0; k < NR_FIELDS; k++)
			if (fields[k].arg && strlen(fields[k].arg) == n &&
			    !strncmp(fields[k].arg, in + i, n))
				break;
		if (k < NR_FIELDS) {
			o += snprintf(out + o, len - o, "%s", fields[k].api);
		} else if (n == 7 && !strncmp(in + i, "burst_s", 7)) {
			o += snprintf(out + o, len - o, "%s", "*_max_length");
		} else {
			o += snprintf(out + o, len - o, "%.*s", (int)n, in + i);
		}
		if (o >= len)
			o = len - 1;
		i += n;
	}
	out[o] = '\0';
}

#define UNLIMITED (MAX_VALUE * 4)

/* The most a volume may do for field (0 in the policy is no limit). */
static long long effective(json_t *p, const char *field)
{
	char unit[16], base[64], tot[64], rd[64], wr[64];
	bool is_max = strstr(field, "_sec_max") != NULL;
	long long v;

	if (!strcmp(field, "weight"))
		return get_field(p, field) ? get_field(p, field) : WEIGHT_DEFAULT;
	if (!strcmp(field, DIRTY_FIELD))
		return get_field(p, field) ? get_field(p, field) : UNLIMITED;
	if (!strncmp(field, "reservation_", 12) || !strcmp(field, "size_iops_sec"))
		return get_field(p, field);
	/* <dir>_<unit>_sec[_max] */
	if (sscanf(field, "%*[a-z]_%15[a-z]_sec", unit) != 1)
		return UNLIMITED;
	v = get_field(p, field);
	if (v)
		return v;
	if (is_max) {
		snprintf(base, sizeof(base), "%.*s", (int)(strlen(field) - 4), field);
		return effective(p, base);
	}
	snprintf(tot, sizeof(tot), "total_%s_sec", unit);
	snprintf(rd, sizeof(rd), "read_%s_sec", unit);
	snprintf(wr, sizeof(wr), "write_%s_sec", unit);
	if (!strncmp(field, "total_", 6))
		return get_field(p, rd) && get_field(p, wr) ? get_field(p, rd) + get_field(p, wr) : UNLIMITED;
	return get_field(p, tot) ? get_field(p, tot) : UNLIMITED;
}

int ap_ceilings_check(json_t *ceilings, char *err, size_t errlen)
{
	const char *name;
	json_t *jv;
	long long v;

	if (!json_is_object(ceilings))
		return fail(err, errlen, "ceilings", "an object");
	json_object_foreach(ceilings, name, jv) {
		const struct field *f = field_of(name);

		if ((!f || !f->arg) && strcmp(name, DIRTY_FIELD))
			return fail(err, errlen, name, "not a field a ceiling can bound");
		if (value_of(name, jv, &v, err, errlen))
			return -1;
	}
	return 0;
}

int ap_policy_within(json_t *policy, json_t *ceilings, char *err, size_t errlen)
{
	const char *name;
	json_t *jv;

	json_object_foreach(ceilings, name, jv) {
		long long lim = json_integer_value(jv), have = effective(policy, name);

		if (have > lim) {
			if (have >= UNLIMITED)
				snprintf(err, errlen, "%s: the tenant's ceiling is %lld; unlimited is above it",
					 name, lim);
			else
				snprintf(err, errlen, "%s: %lld is above the tenant's ceiling of %lld",
					 name, have, lim);
			return -1;
		}
	}
	return 0;
}
