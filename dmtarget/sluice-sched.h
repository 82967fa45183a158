/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portable scheduling core of the pool dispatcher (dm-sluice-weight): which
 * backlogged volume of a pool sends the next bio to the shared device.
 *
 * Two tags per volume, kept for the head of its queue only:
 *
 * - a reservation tag in real time (ns): when the volume is next owed service
 *   under reserve_iops / reserve_bps. Every bio sent, whichever phase chose
 *   it, moves the tag on by cost/reservation, so a volume that gets its
 *   minimum from its weight alone is never picked by reservation. The tag is
 *   kept within a window of now on both sides: no stored credit after
 *   idling, and no long debt after being served above the reservation.
 *
 * - a start tag in virtual time (start-time fair queueing, as CFQ's group
 *   vdisktime): a volume that becomes backlogged starts at max(vtime, its
 *   last finish tag), so it brings back no credit from idling (a new volume
 *   at vtime; the comparison holds across the wrap of the 64-bit virtual
 *   time, however long a volume idled); each bio sent
 *   by weight moves it on by cost * 2^SL_VT_SHIFT / weight. Bios sent by
 *   reservation do not move it (mClock's adjustment), so the weight phase
 *   shares what reservations leave by weight.
 *
 * Pick: the smallest due reservation tag, else the smallest start tag. Both
 * are binary min-heaps over the backlogged volumes: O(log n) per bio.
 * Limits are not here: the target's throttle holds a bio over its limit
 * before the bio reaches the pool.
 *
 * The steady state this gives each backlogged volume i is
 *   share_i = min(limit_i, max(reserve_i, weight_i * lambda))
 * with lambda set so that the shares add up to what the device delivers.
 */
#ifndef SLUICE_SCHED_H
#define SLUICE_SCHED_H

#include "sluice-core.h"

#define SL_VT_SHIFT 20
/*
 * How far a reservation tag may run ahead of or behind now: this long, or
 * SL_RES_WINDOW_IOS bios' worth (of 64 KiB for reserve_bps) if that is longer.
 */
#define SL_RES_WINDOW_NS (100ULL * 1000 * 1000)
#define SL_RES_WINDOW_IOS 8
/* In the iops cost model every bio costs as much as 4 KiB in the bytes one. */
#define SL_COST_IO 4096U
/* The most one bio may cost, so that tags advance by bounded steps. */
#define SL_COST_MAX (64U << 20)

enum sl_cost_model { SL_COST_IOPS = 0, SL_COST_BYTES = 1 };

struct sl_heap_node {
	u64 key;
	u32 idx;		/* position in the heap; U32_MAX when out */
};

struct sl_heap {
	struct sl_heap_node **v;
	u32 nr, cap;
};

struct sl_sched_client {
	struct sl_heap_node wnode;	/* key: start tag, virtual time */
	struct sl_heap_node rnode;	/* key: reservation tag, ns */
	u64 finish;			/* finish tag of the last bio by weight */
	u64 last_step;			/* what that bio moved it on by */
	u64 r_io, r_byte;		/* reservation tags per unit, ns */
	u64 win_io, win_byte;		/* their windows, ns */
	u32 weight;
	u64 reserve_iops, reserve_bps;
	bool backlogged;
	bool fresh;			/* never backlogged yet: starts at vtime */
};

struct sl_sched {
	struct sl_heap w, r;
	u64 vtime;			/* start tag of the last bio by weight */
	enum sl_cost_model cost_model;
	u64 by_weight, by_reservation;	/* bios sent by each phase */
};

/*
 * The heaps' arrays come from the caller, each of cap entries, so that the
 * scheduler never allocates: the kernel sizes them when a volume joins.
 */
void sl_sched_init(struct sl_sched *s, struct sl_heap_node **wv,
		   struct sl_heap_node **rv, u32 cap);
/* Move the heaps to new arrays of new_cap >= the number backlogged. */
void sl_sched_move(struct sl_sched *s, struct sl_heap_node **wv,
		   struct sl_heap_node **rv, u32 new_cap);

void sl_sched_client_init(struct sl_sched_client *c, u32 weight,
			  u64 reserve_iops, u64 reserve_bps);
/* Change a volume's weight and reservations, backlogged or not. */
void sl_sched_client_set(struct sl_sched *s, struct sl_sched_client *c,
			 u32 weight, u64 reserve_iops, u64 reserve_bps, u64 now);

/* The cost of a bio of bytes (0 for a discard or write-zeroes). */
u64 sl_sched_cost(const struct sl_sched *s, u64 bytes);

/* A volume's queue went from empty to non-empty. */
void sl_sched_activate(struct sl_sched *s, struct sl_sched_client *c, u64 now);
/* Take a volume out without sending anything (its queue was emptied). */
void sl_sched_deactivate(struct sl_sched *s, struct sl_sched_client *c);
/*
 * The volume whose head bio goes next, or NULL if none is backlogged;
 * *by_reservation says which phase chose it.
 */
struct sl_sched_client *sl_sched_pick(struct sl_sched *s, u64 now,
				      bool *by_reservation);
/*
 * The head bio of c (cost units, bytes) was sent; more says whether c is
 * still backlogged.
 */
void sl_sched_sent(struct sl_sched *s, struct sl_sched_client *c,
		   bool by_reservation, u64 cost, u64 bytes, bool more, u64 now);

/* Whether a and b are owed alike: the same weight and reservations. */
static inline bool sl_sched_alike(const struct sl_sched_client *a,
				  const struct sl_sched_client *b)
{
	return a->weight == b->weight && a->reserve_iops == b->reserve_iops &&
	       a->reserve_bps == b->reserve_bps;
}

/*
 * A bio of c, which is not backlogged, is sent at once with nothing else
 * waiting: what sl_sched_activate() then sl_sched_sent(by weight, no more)
 * would do, without putting c in the heaps and taking it out again.
 */
void sl_sched_pass(struct sl_sched *s, struct sl_sched_client *c, u64 cost,
		   u64 bytes, u64 now);

/*
 * Whether c, if a bio of it arrived now, would be picked by weight before
 * every volume now backlogged (its start tag at or before theirs).
 */
bool sl_sched_would_lead(const struct sl_sched *s,
			 const struct sl_sched_client *c);

/* Min-heap on wrap-safe u64 keys; exposed for the host tests. */
void sl_heap_push(struct sl_heap *h, struct sl_heap_node *n);
void sl_heap_remove(struct sl_heap *h, struct sl_heap_node *n);
void sl_heap_update(struct sl_heap *h, struct sl_heap_node *n);
static inline struct sl_heap_node *sl_heap_top(const struct sl_heap *h)
{
	return h->nr ? h->v[0] : NULL;
}

static inline bool sl_heap_in(const struct sl_heap_node *n)
{
	return n->idx != U32_MAX;
}

#endif
