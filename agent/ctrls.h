/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who is connected to an export: the controllers nvmet has of a subsystem,
 * and the hosts they are of, read from nvmet's debugfs view, which kernels
 * built with CONFIG_NVME_TARGET_DEBUGFS (6.11 and later) have:
 *
 *   <debugfs>/nvmet/<subsystem nqn>/ctrl<cntlid>/hostnqn   the host's NQN
 *                                               /port, state, kato, host_traddr
 *
 * A controller is one host's association with the subsystem (its admin and
 * I/O queues); a host may hold several (one per path). Where the kernel has
 * no such view (6.1; Debian's 6.12 is built without it) the figures are
 * unknown, which is not the same as none. Reading is cheap: a directory and
 * one small file per controller; nothing is kept between calls.
 */
#ifndef SLUICE_AGENT_CTRLS_H
#define SLUICE_AGENT_CTRLS_H

#include <stdbool.h>
#include <stddef.h>

#include "nvmet.h"

struct ag_nvmet_ctrls {
	unsigned int controllers;
	/* the distinct NQNs of the hosts that hold them, sorted; malloc'd */
	char (*hosts)[AG_NQN_MAX + 1];
	size_t nr_hosts;
};

/* Whether the kernel shows nvmet's controllers under debugfs (a mount point; "" none). */
bool ag_nvmet_ctrls_known(const char *debugfs);

/*
 * The controllers of subsystem nqn into *out (none when nvmet has no such
 * subsystem): 0, or -1 when they are unknown (no view, a name that is no
 * NQN, memory short), *out then empty. A controller that goes while it is
 * read is left out; one whose host NQN cannot be read is counted, its host
 * not. Free with ag_nvmet_ctrls_free().
 */
int ag_nvmet_ctrls_read(const char *debugfs, const char *nqn, struct ag_nvmet_ctrls *out);
void ag_nvmet_ctrls_free(struct ag_nvmet_ctrls *c);

#endif
