/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's background work, on threads of its own:
 * - the delete job: for each volume being deleted, its devices are removed
 *   (a removal that fails, say because the device is held open, is tried
 *   again with a growing pause, up to AG_JOB_RETRY_MAX_S apart), its extents
 *   zeroed from where the last try stopped (the progress is stored after
 *   each chunk, once the disk has it), and the volume dropped. A delete that
 *   a crash or a reboot interrupted goes on at the next start.
 * - the periodic reconcile: every interval_s, the kernel converged with the
 *   state (drift repaired; a volume that fails does not stop the others).
 * A delete is "stuck" once it has failed AG_JOB_STUCK_TRIES times in a row
 * or has run for longer than AG_JOB_STUCK_S; the API and /metrics show it.
 */
#ifndef SLUICE_AGENT_JOBS_H
#define SLUICE_AGENT_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

#define AG_JOB_RETRY_MAX_S 30
#define AG_JOB_STUCK_TRIES 3
#define AG_JOB_STUCK_S 3600
#define AG_WIPE_CHUNK ((uint64_t)8 << 20)

struct ag_agent;
struct ag_volume;

/* Start the threads (reconcile_s 0: no periodic reconcile). */
int ag_jobs_start(struct ag_agent *a, unsigned int reconcile_s, struct ag_err *e);
/* Stop them: a wipe stops after its chunk, and goes on at the next start. */
void ag_jobs_stop(struct ag_agent *a);
/* A delete was asked for: wake the delete job (nothing when it is not started). */
void ag_jobs_kick(struct ag_agent *a);

/* Every pending delete, on the caller's thread (a console command). -1 if one failed. */
int ag_jobs_run_deletes(struct ag_agent *a, struct ag_err *e);

/* Whether a delete looks stuck (see above). */
bool ag_job_stuck(const struct ag_volume *v, int64_t now);

#endif
