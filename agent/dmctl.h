/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-mapper control through libdevmapper, udev sync off (the appliance
 * and the test guest have no udev; nodes are made by libdevmapper itself).
 * Tables are text, one "start len type params" line per target.
 */
#ifndef SLUICE_AGENT_DMCTL_H
#define SLUICE_AGENT_DMCTL_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"

void ag_dm_init(void);

/* The devices whose name starts with prefix, with their live tables. */
int ag_dm_list(const char *prefix, struct ag_have **out, size_t *n);
/* Only the two devices of volume id, looked up by name (no list of all devices). */
int ag_dm_list_volume(const char *id, struct ag_have **out, size_t *n);
void ag_dm_list_free(struct ag_have *h, size_t n);

/* The status (INFO) line of name's first target, malloc'd; NULL if none. */
char *ag_dm_status(const char *name);

int ag_dm_create(const char *name, const char *table);
/* Load a new table, then suspend and resume so that it goes live. */
int ag_dm_reload(const char *name, const char *table);
int ag_dm_message(const char *name, const char *msg);
int ag_dm_remove(const char *name);
/* Calls made since start (the reconcile bench counts them). */
extern unsigned long ag_dm_calls;

#endif
