/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the discrete-event simulations of the pool (test_sched_sim.c,
 * test_pool_sim.c) share: a random number generator that gives the same
 * sequence on every host, so that each test is one fixed run; the events'
 * container arithmetic; and the ideal the scheduler promises, by which
 * their measured shares are judged.
 */
#ifndef SLUICE_UNIT_SIM_H
#define SLUICE_UNIT_SIM_H

#include "../../dmtarget/sluice-core.h"

#define SIM_NS 1000000000ULL
#define SIM_US 1000ULL

#define SIM_CONTAINER(node, type, member) \
	((type *)((char *)(node) - __builtin_offsetof(type, member)))

/* xorshift64*: deterministic across hosts; *state must not be 0 */
static inline u64 sim_rng(u64 *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/* uniform in [lo, hi] */
static inline u64 sim_rng_range(u64 *state, u64 lo, u64 hi)
{
	return lo + sim_rng(state) % (hi - lo + 1);
}

/*
 * What volume i gets when the fair rate per unit of weight is lambda:
 *   min(cap_i, max(floor_i, weight_i * lambda))
 * (cap: its limit, or what it asks for; floor: its reservation).
 */
typedef double (*sim_share_fn)(const void *ctx, unsigned int i, double lambda);

/*
 * lambda such that the shares of n volumes add up to total (in the unit of
 * share()). Bisection: the sum is non-decreasing in lambda. When even an
 * unbounded lambda cannot reach total (every volume capped), the result
 * grows until 2^64 and the caller sees every volume at its cap.
 */
static inline double sim_solve_lambda(sim_share_fn share, const void *ctx,
				      unsigned int n, double total)
{
	double lo = 0, hi = 1;
	int it;

	for (it = 0; it < 200; it++) {
		double mid = (lo + hi) / 2, sum = 0;
		unsigned int i;

		if (it == 0)
			mid = hi;
		for (i = 0; i < n; i++)
			sum += share(ctx, i, mid);
		if (it == 0) {
			if (sum < total && hi < 18446744073709551616.0) {
				hi *= 2;
				it = -1;
			}
			continue;
		}
		if (sum < total)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

#endif
