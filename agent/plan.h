/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reconcile planner: what to do to the kernel so that its dm devices
 * are what the store says. Pure: it compares tables as text and returns a
 * list of actions, which the caller applies in order.
 *
 * A volume <id> is two devices: sluice-<id>-data, a linear map of its
 * extents, and sluice-<id>, the sluice target over it. Tables are compared
 * in the form the kernel prints them (devices as major:minor, the sluice
 * arguments canonical), one line per target, lines joined by '\n'.
 *
 * Rules:
 * - a missing device is created, the data device before the sluice one;
 * - a data device whose table differs is reloaded (growing a volume);
 * - a sluice device whose table differs only in its limits, weight or
 *   reservations gets a "set" message (live, no suspend); any other
 *   difference (length, device below, pool, tenant) is reloaded;
 * - a volume being deleted loses its sluice device, then its data device;
 * - a sluice-* device the store does not know is reported, never removed.
 * A volume whose wanted state is already in the kernel costs no action.
 */
#ifndef SLUICE_AGENT_PLAN_H
#define SLUICE_AGENT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#define AG_DM_PREFIX "sluice-"

struct ag_want {
	const char *id;
	const char *data_table;
	const char *sluice_table;
	bool deleting;
};

struct ag_have {
	const char *name;
	const char *table;
	unsigned int major, minor;	/* the device's number */
};

enum ag_action_kind {
	AG_CREATE,	/* arg: the table */
	AG_RELOAD,	/* arg: the table; load, suspend, resume */
	AG_MESSAGE,	/* arg: the message, "set ..." */
	AG_REMOVE,	/* arg: none */
	AG_REPORT,	/* arg: why */
};

struct ag_action {
	enum ag_action_kind kind;
	char *name;
	char *arg;
};

/* The devices sorted by name (a malloc'd array of pointers into have), and a lookup in it. */
int ag_have_index(const struct ag_have *have, size_t n, const struct ag_have ***index);
const struct ag_have *ag_have_find(const struct ag_have *const *index, size_t n,
				   const char *name);

/*
 * 0 with *out (malloc'd, ag_plan_free) and *n, or -ENOMEM. O((wanted +
 * devices) log devices): a reconcile of 10,000 volumes plans at once.
 */
int ag_plan(const struct ag_want *want, size_t nwant, const struct ag_have *have,
	    size_t nhave, struct ag_action **out, size_t *n);
void ag_plan_free(struct ag_action *a, size_t n);

const char *ag_action_name(enum ag_action_kind k);

#endif
