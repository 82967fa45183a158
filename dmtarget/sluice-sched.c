// SPDX-License-Identifier: GPL-2.0
/*
 * Pool dispatcher scheduling core; see sluice-sched.h for the model.
 */
#include "sluice-sched.h"

#define sl_client_of(node, member) \
	((struct sl_sched_client *)((char *)(node) - \
	 __builtin_offsetof(struct sl_sched_client, member)))

/* a before b, for keys that may wrap */
static bool sl_before(u64 a, u64 b)
{
	return (long long)(a - b) < 0;
}

static u64 sl_max(u64 a, u64 b)
{
	return sl_before(a, b) ? b : a;
}

static void sl_heap_set(struct sl_heap *h, u32 i, struct sl_heap_node *n)
{
	h->v[i] = n;
	n->idx = i;
}

static void sl_heap_up(struct sl_heap *h, u32 i)
{
	struct sl_heap_node *n = h->v[i];

	while (i) {
		u32 parent = (i - 1) / 2;

		if (!sl_before(n->key, h->v[parent]->key))
			break;
		sl_heap_set(h, i, h->v[parent]);
		i = parent;
	}
	sl_heap_set(h, i, n);
}

static void sl_heap_down(struct sl_heap *h, u32 i)
{
	struct sl_heap_node *n = h->v[i];

	for (;;) {
		u32 l = 2 * i + 1, m;

		if (l >= h->nr)
			break;
		m = l;
		if (l + 1 < h->nr && sl_before(h->v[l + 1]->key, h->v[l]->key))
			m = l + 1;
		if (!sl_before(h->v[m]->key, n->key))
			break;
		sl_heap_set(h, i, h->v[m]);
		i = m;
	}
	sl_heap_set(h, i, n);
}

void sl_heap_push(struct sl_heap *h, struct sl_heap_node *n)
{
	/* the caller sized the array for every member of the pool */
	if (h->nr >= h->cap)
		return;
	sl_heap_set(h, h->nr++, n);
	sl_heap_up(h, n->idx);
}

void sl_heap_remove(struct sl_heap *h, struct sl_heap_node *n)
{
	u32 i = n->idx;
	struct sl_heap_node *last;

	if (i == U32_MAX)
		return;
	n->idx = U32_MAX;
	last = h->v[--h->nr];
	if (i == h->nr)
		return;
	sl_heap_set(h, i, last);
	sl_heap_update(h, last);
}

void sl_heap_update(struct sl_heap *h, struct sl_heap_node *n)
{
	u32 i = n->idx;

	if (i == U32_MAX)
		return;
	if (i && sl_before(n->key, h->v[(i - 1) / 2]->key))
		sl_heap_up(h, i);
	else
		sl_heap_down(h, i);
}

void sl_sched_init(struct sl_sched *s, struct sl_heap_node **wv,
		   struct sl_heap_node **rv, u32 cap)
{
	*s = (struct sl_sched){ 0 };
	s->w.v = wv;
	s->r.v = rv;
	s->w.cap = cap;
	s->r.cap = cap;
}

void sl_sched_move(struct sl_sched *s, struct sl_heap_node **wv,
		   struct sl_heap_node **rv, u32 new_cap)
{
	u32 i;

	for (i = 0; i < s->w.nr; i++)
		wv[i] = s->w.v[i];
	for (i = 0; i < s->r.nr; i++)
		rv[i] = s->r.v[i];
	s->w.v = wv;
	s->r.v = rv;
	s->w.cap = new_cap;
	s->r.cap = new_cap;
}

static u64 sl_div_up(u64 a, u64 b)
{
	return a / b + (a % b != 0);
}

static u64 sl_res_window(u64 bytes, u64 rate)
{
	u64 w;

	if (!rate)
		return SL_RES_WINDOW_NS;
	/* bytes <= 64 KiB: the product fits in 64 bits */
	w = SL_RES_WINDOW_IOS * bytes * SL_NSEC_PER_SEC / rate;
	return w > SL_RES_WINDOW_NS ? w : SL_RES_WINDOW_NS;
}

static void sl_client_params(struct sl_sched_client *c, u32 weight,
			     u64 reserve_iops, u64 reserve_bps)
{
	c->weight = weight ? weight : 1;
	c->reserve_iops = reserve_iops;
	c->reserve_bps = reserve_bps;
	c->win_io = sl_res_window(1, reserve_iops);
	c->win_byte = sl_res_window(65536, reserve_bps);
}

void sl_sched_client_init(struct sl_sched_client *c, u32 weight,
			  u64 reserve_iops, u64 reserve_bps)
{
	*c = (struct sl_sched_client){ 0 };
	c->fresh = true;
	c->wnode.idx = U32_MAX;
	c->rnode.idx = U32_MAX;
	sl_client_params(c, weight, reserve_iops, reserve_bps);
}

static bool sl_reserved(const struct sl_sched_client *c)
{
	return c->reserve_iops || c->reserve_bps;
}

/* The reservation tag: the earlier of the per-unit tags that are on. */
static u64 sl_res_key(const struct sl_sched_client *c)
{
	if (!c->reserve_bps)
		return c->r_io;
	if (!c->reserve_iops)
		return c->r_byte;
	return sl_before(c->r_io, c->r_byte) ? c->r_io : c->r_byte;
}

/* Keep a reservation tag within the window around now. */
static u64 sl_res_clamp(u64 tag, u64 now, u64 window)
{
	if (sl_before(tag, now - window))
		return now - window;
	if (sl_before(now + window, tag))
		return now + window;
	return tag;
}

void sl_sched_client_set(struct sl_sched *s, struct sl_sched_client *c,
			 u32 weight, u64 reserve_iops, u64 reserve_bps, u64 now)
{
	bool was = sl_reserved(c);

	if (!c->reserve_iops && reserve_iops)
		c->r_io = now;
	if (!c->reserve_bps && reserve_bps)
		c->r_byte = now;
	sl_client_params(c, weight, reserve_iops, reserve_bps);
	if (!c->backlogged)
		return;
	if (was && !sl_reserved(c)) {
		sl_heap_remove(&s->r, &c->rnode);
	} else if (sl_reserved(c)) {
		c->rnode.key = sl_res_key(c);
		if (was)
			sl_heap_update(&s->r, &c->rnode);
		else
			sl_heap_push(&s->r, &c->rnode);
	}
}

u64 sl_sched_cost(const struct sl_sched *s, u64 bytes)
{
	if (s->cost_model == SL_COST_IOPS || !bytes)
		return SL_COST_IO;
	return bytes < SL_COST_MAX ? bytes : SL_COST_MAX;
}

/*
 * Where a volume that becomes backlogged starts in virtual time. A new
 * volume starts at vtime. A returning one left with its finish tag at most
 * the step of its last bio by weight ahead of vtime,
 * and vtime only grows: a finish tag in [vtime, vtime + step] is kept (the
 * volume used its share up to there), any other means it idled while vtime
 * moved on, and it starts at vtime. Comparing the distance as unsigned keeps
 * this true whatever vtime has wrapped to and however long the volume idled;
 * the signed max() it replaces put a new volume's finish tag of 0 after
 * every other key once vtime passed 2^63, and it was never picked again.
 */
static u64 sl_start_tag_of(const struct sl_sched *s,
			   const struct sl_sched_client *c)
{
	if (c->fresh)
		return s->vtime;
	/* last_step: the step that made finish, whatever the weight is now */
	return c->finish - s->vtime <= c->last_step ? c->finish : s->vtime;
}

static u64 sl_start_tag(const struct sl_sched *s, struct sl_sched_client *c)
{
	u64 tag = sl_start_tag_of(s, c);

	c->fresh = false;
	return tag;
}

bool sl_sched_would_lead(const struct sl_sched *s,
			 const struct sl_sched_client *c)
{
	const struct sl_heap_node *top = sl_heap_top(&s->w);

	if (c->backlogged)
		return false;
	return !top || !sl_before(top->key, sl_start_tag_of(s, c));
}

void sl_sched_activate(struct sl_sched *s, struct sl_sched_client *c, u64 now)
{
	if (c->backlogged)
		return;
	c->backlogged = true;
	c->wnode.key = sl_start_tag(s, c);
	sl_heap_push(&s->w, &c->wnode);
	if (!sl_reserved(c))
		return;
	/* no credit for the time spent idle */
	c->r_io = sl_max(c->r_io, now);
	c->r_byte = sl_max(c->r_byte, now);
	c->rnode.key = sl_res_key(c);
	sl_heap_push(&s->r, &c->rnode);
}

void sl_sched_deactivate(struct sl_sched *s, struct sl_sched_client *c)
{
	if (!c->backlogged)
		return;
	c->backlogged = false;
	sl_heap_remove(&s->w, &c->wnode);
	sl_heap_remove(&s->r, &c->rnode);
}

struct sl_sched_client *sl_sched_pick(struct sl_sched *s, u64 now,
				      bool *by_reservation)
{
	struct sl_heap_node *n = sl_heap_top(&s->r);

	if (n && !sl_before(now, n->key)) {
		*by_reservation = true;
		return sl_client_of(n, rnode);
	}
	*by_reservation = false;
	n = sl_heap_top(&s->w);
	return n ? sl_client_of(n, wnode) : NULL;
}

/* A bio of c sent by weight: its tags move on by its step. */
static void sl_sent_by_weight(struct sl_sched *s, struct sl_sched_client *c,
			      u64 cost)
{
	s->by_weight++;
	s->vtime = sl_max(s->vtime, c->wnode.key);
	c->last_step = (cost << SL_VT_SHIFT) / c->weight;
	c->finish = c->wnode.key + c->last_step;
	c->wnode.key = c->finish;
}

/* steps round up: a tag that did not move would take every pick */
static void sl_sent_reserved(struct sl_sched_client *c, u64 bytes, u64 now)
{
	if (c->reserve_iops)
		c->r_io = sl_res_clamp(c->r_io + sl_div_up(SL_NSEC_PER_SEC,
							   c->reserve_iops),
				       now, c->win_io);
	if (c->reserve_bps && bytes)
		c->r_byte = sl_res_clamp(c->r_byte +
					 /* <= 2^26 * 10^9 < 2^56 */
					 sl_div_up((bytes < SL_COST_MAX ? bytes : SL_COST_MAX) *
						   SL_NSEC_PER_SEC, c->reserve_bps),
					 now, c->win_byte);
}

void sl_sched_pass(struct sl_sched *s, struct sl_sched_client *c, u64 cost,
		   u64 bytes, u64 now)
{
	if (cost > SL_COST_MAX)
		cost = SL_COST_MAX;
	c->wnode.key = sl_start_tag(s, c);
	sl_sent_by_weight(s, c, cost);
	if (!sl_reserved(c))
		return;
	/* no credit for the time spent idle */
	c->r_io = sl_max(c->r_io, now);
	c->r_byte = sl_max(c->r_byte, now);
	sl_sent_reserved(c, bytes, now);
}

void sl_sched_sent(struct sl_sched *s, struct sl_sched_client *c,
		   bool by_reservation, u64 cost, u64 bytes, bool more, u64 now)
{
	if (cost > SL_COST_MAX)
		cost = SL_COST_MAX;
	if (by_reservation)
		s->by_reservation++;
	else
		sl_sent_by_weight(s, c, cost);
	sl_sent_reserved(c, bytes, now);
	if (!more) {
		sl_sched_deactivate(s, c);
		return;
	}
	if (!by_reservation)
		sl_heap_update(&s->w, &c->wnode);
	if (sl_reserved(c)) {
		c->rnode.key = sl_res_key(c);
		sl_heap_update(&s->r, &c->rnode);
	}
}
