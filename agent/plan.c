// SPDX-License-Identifier: GPL-2.0
/* The reconcile planner; see plan.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "../dmtarget/sluice-core.h"

struct plan {
	struct ag_action *a;
	size_t n, cap;
	int err;
};

static void add(struct plan *p, enum ag_action_kind kind, const char *name,
		const char *arg)
{
	struct ag_action *a;

	if (p->err)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;

		a = realloc(p->a, cap * sizeof(*a));
		if (!a) {
			p->err = -ENOMEM;
			return;
		}
		p->a = a;
		p->cap = cap;
	}
	a = &p->a[p->n];
	a->kind = kind;
	a->name = strdup(name);
	a->arg = arg ? strdup(arg) : NULL;
	if (!a->name || (arg && !a->arg)) {
		free(a->name);
		free(a->arg);
		p->err = -ENOMEM;
		return;
	}
	p->n++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct ag_have *const *)a)->name,
		      (*(const struct ag_have *const *)b)->name);
}

int ag_have_index(const struct ag_have *have, size_t n, const struct ag_have ***index)
{
	size_t i;

	*index = malloc((n ? n : 1) * sizeof(**index));
	if (!*index)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		(*index)[i] = &have[i];
	qsort(*index, n, sizeof(**index), by_name);
	return 0;
}

const struct ag_have *ag_have_find(const struct ag_have *const *index, size_t n,
				   const char *name)
{
	struct ag_have key = { .name = name };
	const struct ag_have *k = &key, *const *hit;

	hit = bsearch(&k, index, n, sizeof(*index), by_name);
	return hit ? *hit : NULL;
}

static const struct ag_have *find(const struct ag_have *const *index, size_t n, const char *name)
{
	return ag_have_find(index, n, name);
}

/*
 * Split "start len sluice dev offset nargs args..." into its head (the
 * first five words) and a parsed config. 0, or -1 if it is not one line of
 * a sluice table.
 */
static int sluice_line(const char *line, char *head, size_t headlen,
		       struct sl_config *cfg)
{
	char buf[2048], *argv[64], *save = NULL, *w;
	unsigned int n = 0, nargs;
	const char *err, *bad;
	int len;

	if (strchr(line, '\n') || strlen(line) >= sizeof(buf))
		return -1;
	strcpy(buf, line);
	for (w = strtok_r(buf, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	if (n < 6 || strcmp(argv[2], "sluice") || sscanf(argv[5], "%u", &nargs) != 1 ||
	    nargs != n - 6)
		return -1;
	len = snprintf(head, headlen, "%s %s %s %s %s", argv[0], argv[1], argv[2],
		       argv[3], argv[4]);
	if (len < 0 || (size_t)len >= headlen)
		return -1;
	sl_config_init(cfg);
	return sl_config_parse(cfg, SL_PARSE_TABLE, nargs, argv + 6, &err, &bad);
}

/* Append every group_* key of cfg to the words in buf. */
static int group_keys(const struct sl_config *cfg, char *buf, size_t len)
{
	static const char *const key[SL_NR_BUCKETS] = { "bps", "rbps", "wbps", "iops", "riops",
							 "wiops" };
	size_t used = strlen(buf);
	int b, n;

	for (b = 0; b < SL_NR_BUCKETS; b++) {
		n = snprintf(buf + used, len - used, " group_%s=%llu group_%s_max=%llu", key[b],
			     (unsigned long long)cfg->group_avg[b], key[b],
			     (unsigned long long)cfg->group_max[b]);
		if (n < 0 || (size_t)n >= len - used)
			return -1;
		used += (size_t)n;
	}
	n = snprintf(buf + used, len - used, " group_burst_s=%u", cfg->group_burst_s);
	return n < 0 || (size_t)n >= len - used ? -1 : 0;
}

/* The "set" that turns the kernel's sluice table into the wanted one, if one can. */
static char *set_message(const char *have, const char *want)
{
	char hh[512], wh[512], args[SL_FORMAT_MAX], *msg;
	struct sl_config hc, wc;

	if (sluice_line(have, hh, sizeof(hh), &hc) || sluice_line(want, wh, sizeof(wh), &wc))
		return NULL;
	/* the labels, the group's name among them, change only with a new table */
	if (strcmp(hh, wh) || strcmp(hc.pool, wc.pool) || strcmp(hc.tenant, wc.tenant) ||
	    strcmp(hc.group, wc.group))
		return NULL;
	if (sl_config_format_set(&wc, args, sizeof(args)) < 0)
		return NULL;
	/* a set leaves the group's limits alone unless it names them: name them all */
	if (wc.group[0] && group_keys(&wc, args, sizeof(args)))
		return NULL;
	if (asprintf(&msg, "set %s", args) < 0)
		return NULL;
	return msg;
}

static void plan_volume(struct plan *p, const struct ag_want *w,
			const struct ag_have *const *have, size_t nhave)
{
	char data[256], top[256];
	const struct ag_have *hd, *ht;

	snprintf(data, sizeof(data), AG_DM_PREFIX "%s-data", w->id);
	snprintf(top, sizeof(top), AG_DM_PREFIX "%s", w->id);
	hd = find(have, nhave, data);
	ht = find(have, nhave, top);
	if (w->deleting) {
		if (ht)
			add(p, AG_REMOVE, top, NULL);
		if (hd)
			add(p, AG_REMOVE, data, NULL);
		return;
	}
	if (!hd)
		add(p, AG_CREATE, data, w->data_table);
	else if (strcmp(hd->table, w->data_table))
		add(p, AG_RELOAD, data, w->data_table);
	if (!ht) {
		add(p, AG_CREATE, top, w->sluice_table);
	} else if (strcmp(ht->table, w->sluice_table)) {
		char *msg = set_message(ht->table, w->sluice_table);

		if (msg)
			add(p, AG_MESSAGE, top, msg);
		else
			add(p, AG_RELOAD, top, w->sluice_table);
		free(msg);
	}
}

static int by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A sluice-* device that is no wanted volume's (ids: the wanted ones,
 * sorted). Volume ids never end in "-data", so "sluice-<id>-data" is always
 * the data device of <id>.
 */
static bool unknown(const char *const *ids, size_t nwant, const char *name)
{
	char id[256];
	const char *k = id;
	size_t plen = strlen(AG_DM_PREFIX), l;

	if (strncmp(name, AG_DM_PREFIX, plen))
		return false;	/* not ours: not our business */
	snprintf(id, sizeof(id), "%s", name + plen);
	l = strlen(id);
	if (l >= 5 && !strcmp(id + l - 5, "-data"))
		id[l - 5] = '\0';
	return !bsearch(&k, ids, nwant, sizeof(*ids), by_id);
}

/* Sorted indexes of the devices and the ids: each lookup a binary search. */
int ag_plan(const struct ag_want *want, size_t nwant, const struct ag_have *have,
	    size_t nhave, struct ag_action **out, size_t *n)
{
	struct plan p = { 0 };
	const struct ag_have **index = NULL;
	const char **ids = malloc((nwant ? nwant : 1) * sizeof(*ids));
	size_t i;

	if (!ids || ag_have_index(have, nhave, &index)) {
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < nwant; i++)
		ids[i] = want[i].id;
	qsort(ids, nwant, sizeof(*ids), by_id);
	for (i = 0; i < nwant; i++)
		plan_volume(&p, &want[i], index, nhave);
	for (i = 0; i < nhave; i++)
		if (unknown(ids, nwant, have[i].name))
			add(&p, AG_REPORT, have[i].name, "not in the store; left alone");
	free(ids);
	free(index);
	if (p.err) {
		ag_plan_free(p.a, p.n);
		return p.err;
	}
	*out = p.a;
	*n = p.n;
	return 0;
}

void ag_plan_free(struct ag_action *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(a[i].name);
		free(a[i].arg);
	}
	free(a);
}

const char *ag_action_name(enum ag_action_kind k)
{
	static const char *const names[] = { "create", "reload", "message", "remove", "report" };

	return k <= AG_REPORT ? names[k] : "?";
}
