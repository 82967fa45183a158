/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the sluice target and a pool policy module.
 *
 * A table with pool=<name> makes the target look up the policy type (loading
 * dm-sluice-<type> on demand, as dm-cache does its policies) and attach the
 * table to the pool of that name as a member. Bios that pass the member's
 * own limits are then admitted to the pool, which either lets them go at once
 * or holds them and sends them itself, with dm_submit_bio_remap(), when the
 * device has room. Each attached member holds a reference on the policy's
 * module, so it cannot be unloaded while a pool uses it.
 *
 * Bios given to the policy are already remapped to the device below.
 * admit() and drain() run in process context; complete() may run in
 * interrupt context. A member's queue is empty when it is detached: the
 * target drains it on every presuspend. drain() also closes the member: from
 * then until reopen() every bio admitted is sent at once (counted in flight),
 * so that a bio that raced with the suspend is never held by the pool for a
 * member that is suspending.
 */
#ifndef DM_SLUICE_POLICY_H
#define DM_SLUICE_POLICY_H

#include <linux/list.h>
#include <linux/bio.h>

#include "sluice-lane.h"

struct module;
struct sluice_member;

struct sluice_member_params {
	u32 weight;
	u64 reserve_iops;
	u64 reserve_bps;
	u64 latency_us;		/* p90 completion-latency target; 0: none */
};

/*
 * Room the target keeps in each bio's per-bio data for the policy, which
 * alone writes it: when the bio was admitted and sent, for the service and
 * completion times complete() measures.
 */
struct sluice_pool_stamp {
	u64 admitted_ns;
	u64 sent_ns;
	u32 flags;		/* the policy's own */
};

struct sluice_pool_stamp *sluice_pool_stamp(struct bio *bio);

struct sluice_policy_type {
	struct list_head list;
	const char *name;
	unsigned int version[3];
	struct module *owner;

	/* Join the pool called name, creating it if need be. May sleep. */
	struct sluice_member *(*attach)(const char *pool,
					const struct sluice_member_params *p,
					const char **error);
	void (*detach)(struct sluice_member *m);
	void (*set)(struct sluice_member *m, const struct sluice_member_params *p);
	/*
	 * Optional: the member's lane (sluice-lane.h), which the target runs
	 * itself before admit(), on a path without the pool's lock or an
	 * indirect call. A bio the lane takes goes now, counted in flight, is
	 * not admitted, and its completion is the lane's too (not complete()).
	 * The lane is the member's from attach() to detach().
	 */
	struct sluice_lane_member *(*lane)(struct sluice_member *m);
	/*
	 * What a lane step left to the pool's lock (enum sluice_lane_step):
	 * a slot taken as the lane closed, a completion that found it closed,
	 * or a fold due. start: when a timed bio was sent, else 0; svc: its
	 * service time. May run in interrupt context.
	 */
	void (*lane_slow)(struct sluice_member *m, enum sluice_lane_step step,
			  u64 start, u64 svc);
	/*
	 * true: send the bio now, it is counted in flight; false: held. now
	 * is the caller's ktime_get_ns(), read once for the target and the
	 * policy both; stamp is the bio's, sluice_pool_stamp(bio), which the
	 * caller has at hand.
	 */
	bool (*admit)(struct sluice_member *m, struct bio *bio,
		      struct sluice_pool_stamp *stamp, u64 now);
	/* A bio admitted (sent now or later) has completed, at now. */
	void (*complete)(struct sluice_member *m, struct bio *bio,
			 struct sluice_pool_stamp *stamp, u64 now);
	/*
	 * Take back every bio the member holds, oldest first, not in flight,
	 * and close it: admit() then holds nothing until reopen().
	 */
	void (*drain)(struct sluice_member *m, struct bio_list *out);
	void (*reopen)(struct sluice_member *m);
	/* A "pool ..." message; 0 or -EINVAL with nothing changed. */
	int (*message)(struct sluice_member *m, unsigned int argc, char **argv);
	/* Append " key=value" counters to a status line. */
	void (*status)(struct sluice_member *m, char *result, unsigned int maxlen,
		       unsigned int *sz);
};

int sluice_policy_register(struct sluice_policy_type *type);
void sluice_policy_unregister(struct sluice_policy_type *type);

/* For the target: find a type and take its module, loading it if needed. */
struct sluice_policy_type *sluice_policy_get(const char *name);
void sluice_policy_put(struct sluice_policy_type *type);

#endif
