/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sluiced's daemon mode: open the store (its lock held until exit),
 * reconcile, start the background jobs and the dirty monitor, then serve
 * through the frontend until SIGTERM or SIGINT (requests in flight are
 * finished, a wipe stops after its chunk and goes on at the next start;
 * devices stay up). SIGHUP reads the configuration again and, if it is good,
 * serves anew by it; a bad one is logged and the old one kept. With
 * NOTIFY_SOCKET set (systemd Type=notify) READY=1 is sent once the frontend
 * serves. The open file limit is raised to its hard limit, for the API's
 * connections.
 *
 * The frontend (the HTTP API) is given by the program: the agent does not
 * depend on it.
 */
#ifndef SLUICE_AGENT_DAEMON_H
#define SLUICE_AGENT_DAEMON_H

#include "config.h"
#include "monitor.h"
#include "ops.h"

struct ag_frontend {
	/* Serve a by cf (mon may be NULL): a handle, or NULL with the failure logged. */
	void *(*start)(struct ag_agent *a, struct ag_monitor *mon, const struct ag_config *cf);
	void (*stop)(void *handle);
};

/* state_dir overrides the configuration's when not NULL. Returns the exit status. */
int ag_daemon(const char *config_path, const char *state_dir, const struct ag_frontend *fe);

/* sluiced's command line (sluiced.c); the program's main() calls it. */
int ag_main(int argc, char **argv, const struct ag_frontend *fe);

#endif
