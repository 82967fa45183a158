// SPDX-License-Identifier: GPL-2.0
/*
 * The pool dispatcher's scheduling core in a deterministic discrete-event
 * simulation: many volumes, each keeping a few bios outstanding, behind the
 * target's own throttle (for limits), sharing a device that serves `depth`
 * bios at a time with fixed or variable service times. Every share is
 * checked against the ideal the scheduler promises:
 *   share_i = min(limit_i, max(reserve_i, weight_i * lambda))
 * with lambda solved so that the shares add up to what the device delivered.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "sim.h"
#include "../../dmtarget/sluice-sched.h"

#define NS SIM_NS
#define US SIM_US

struct vol {
	struct sl_sched_client c;
	struct sl_limits lim;
	struct sl_throttle thr;
	struct sl_heap_node wake;	/* event: the throttle lets one through */
	u32 weight;
	u64 reserve;			/* in the measured unit per second */
	u64 limit;			/* IO/s or bytes/s; 0 = none */
	u32 bytes;			/* size of each of its bios */
	unsigned int outstanding, pending;
	bool blocked;
	u64 served_ios, served_bytes;	/* in the window */
};

struct done {
	struct sl_heap_node n;		/* event: the device finished a bio */
	struct vol *v;
};

struct sim_params {
	unsigned int nr_vols, depth, qd;
	u64 seconds, warmup_s;
	u64 svc_min_ns, svc_max_ns;	/* uniform service time, + bytes term */
	u64 ns_per_kib;			/* extra service time per KiB */
	enum sl_cost_model model;
	u32 wmin, wmax;
	unsigned int pct_reserved, pct_limited;
	bool mixed_sizes;		/* 4 KiB and 64 KiB volumes */
	const u32 *weights;		/* fixed weights instead of drawn */
	const u32 *sizes;		/* fixed bio sizes instead of drawn */
	u64 seed;
};

struct sim_result {
	double max_err_pct, worst_res_ratio, worst_limit_ratio, total_rate;
	u64 min_served;
	u64 by_res, by_weight;
};

static u64 rng_state;

static u64 rng(void)
{
	return sim_rng(&rng_state);
}

static u64 rng_range(u64 lo, u64 hi)
{
	return sim_rng_range(&rng_state, lo, hi);
}

#define EV_CONTAINER SIM_CONTAINER

struct sim {
	const struct sim_params *p;
	struct vol *vols;
	struct done *slots;
	struct done **free_slots;
	unsigned int nr_free, inflight;
	struct sl_heap ev;		/* completions and wakeups, by time */
	struct sl_sched s;
	u64 t0, t1;			/* measured window */
};

static bool is_done_node(struct sim *m, struct sl_heap_node *n)
{
	return (char *)n >= (char *)m->slots &&
	       (char *)n < (char *)(m->slots + m->p->depth);
}

static u64 vol_measure(const struct sim *m, const struct vol *v)
{
	return m->p->model == SL_COST_BYTES ? v->served_bytes : v->served_ios;
}

/* Let v issue bios until its queue depth is full or its throttle says wait. */
static void vol_issue(struct sim *m, struct vol *v, u64 now)
{
	while (!v->blocked && v->outstanding < m->p->qd) {
		u64 wait = sl_throttle_wait(&v->thr, &v->lim, now, SL_READ, true);

		if (wait) {
			v->blocked = true;
			v->wake.key = now + wait;
			sl_heap_push(&m->ev, &v->wake);
			return;
		}
		sl_throttle_charge(&v->thr, &v->lim, now, SL_READ, v->bytes, true);
		v->outstanding++;
		if (!v->pending++)
			sl_sched_activate(&m->s, &v->c, now);
	}
}

static void dispatch(struct sim *m, u64 now)
{
	while (m->inflight < m->p->depth) {
		bool by_res;
		struct sl_sched_client *c = sl_sched_pick(&m->s, now, &by_res);
		struct vol *v;
		struct done *d;
		u64 svc;

		if (!c)
			return;
		v = EV_CONTAINER(c, struct vol, c);
		v->pending--;
		sl_sched_sent(&m->s, c, by_res, sl_sched_cost(&m->s, v->bytes),
			      v->bytes, v->pending > 0, now);
		if (now >= m->t0 && now < m->t1) {
			v->served_ios++;
			v->served_bytes += v->bytes;
		}
		d = m->free_slots[--m->nr_free];
		d->v = v;
		svc = rng_range(m->p->svc_min_ns, m->p->svc_max_ns) +
		      m->p->ns_per_kib * (v->bytes / 1024);
		d->n.key = now + svc;
		sl_heap_push(&m->ev, &d->n);
		m->inflight++;
	}
}

/* What volume i is owed over the window, in the measured unit. */
struct share_ctx {
	const struct sim *m;
	double window_s;
};

static double vol_share(const void *ctx, unsigned int i, double lambda)
{
	const struct share_ctx *x = ctx;
	const struct vol *v = &x->m->vols[i];
	double a = v->weight * lambda;

	if (a < v->reserve)
		a = v->reserve;
	if (v->limit && a > v->limit)
		a = v->limit;
	return a * x->window_s;
}

/* lambda such that sum min(L, max(R, w * lambda)) = total */
static double solve_lambda(const struct sim *m, double total, double window_s)
{
	struct share_ctx x = { .m = m, .window_s = window_s };

	return sim_solve_lambda(vol_share, &x, m->p->nr_vols, total);
}

static struct sim_result simulate(const struct sim_params *p)
{
	struct sim m = { .p = p };
	struct sim_result r = { .worst_res_ratio = 1e9, .min_served = ~0ULL };
	struct sl_heap_node **wv, **rv, **ev;
	unsigned int i, nev = p->nr_vols + p->depth;
	double window_s, total = 0, lambda, wsum = 0;
	u64 now = 0, end;

	rng_state = p->seed;
	m.vols = calloc(p->nr_vols, sizeof(*m.vols));
	m.slots = calloc(p->depth, sizeof(*m.slots));
	m.free_slots = calloc(p->depth, sizeof(*m.free_slots));
	wv = calloc(p->nr_vols, sizeof(*wv));
	rv = calloc(p->nr_vols, sizeof(*rv));
	ev = calloc(nev, sizeof(*ev));
	sl_sched_init(&m.s, wv, rv, p->nr_vols);
	m.s.cost_model = p->model;
	m.ev.v = ev;
	m.ev.cap = nev;
	for (i = 0; i < p->depth; i++) {
		m.slots[i].n.idx = U32_MAX;
		m.free_slots[m.nr_free++] = &m.slots[i];
	}
	m.t0 = p->warmup_s * NS;
	m.t1 = (p->warmup_s + p->seconds) * NS;
	end = m.t1;

	for (i = 0; i < p->nr_vols; i++) {
		struct vol *v = &m.vols[i];

		v->weight = p->weights ? p->weights[i] : rng_range(p->wmin, p->wmax);
		v->bytes = p->mixed_sizes && (rng() & 1) ? 65536 : 4096;
		if (p->sizes)
			v->bytes = p->sizes[i];
		wsum += v->weight;
	}
	/*
	 * Reservations a few times a volume's fair share, limits half of it,
	 * so that both bind; the fair share here is estimated from the mean
	 * service time, the simulation measures the real total.
	 */
	for (i = 0; i < p->nr_vols; i++) {
		struct vol *v = &m.vols[i];
		double mean_ns = (p->svc_min_ns + p->svc_max_ns) / 2.0 +
				 p->ns_per_kib * (v->bytes / 1024.0);
		double cap = p->depth * (NS / mean_ns);
		double fair = cap * v->weight / wsum;
		struct sl_config cfg;
		u64 roll = rng() % 100;

		if (p->model == SL_COST_BYTES)
			fair *= v->bytes;
		sl_config_init(&cfg);
		if (roll < p->pct_reserved) {
			v->reserve = (u64)(fair * rng_range(2, 5));
		} else if (roll < p->pct_reserved + p->pct_limited) {
			v->limit = (u64)(fair / 2) + 1;
			cfg.avg[p->model == SL_COST_BYTES ? SL_BPS : SL_IOPS] = v->limit;
		}
		sl_limits_from_config(&v->lim, &cfg);
		sl_throttle_init(&v->thr);
		sl_sched_client_init(&v->c, v->weight,
				     p->model == SL_COST_BYTES ? 0 : v->reserve,
				     p->model == SL_COST_BYTES ? v->reserve : 0);
		v->wake.idx = U32_MAX;
		vol_issue(&m, v, now);
	}
	dispatch(&m, now);

	while (now < end) {
		struct sl_heap_node *n = sl_heap_top(&m.ev);

		if (!n)
			break;
		now = n->key;
		sl_heap_remove(&m.ev, n);
		if (is_done_node(&m, n)) {
			struct done *d = EV_CONTAINER(n, struct done, n);

			m.free_slots[m.nr_free++] = d;
			m.inflight--;
			d->v->outstanding--;
			vol_issue(&m, d->v, now);
		} else {
			struct vol *v = EV_CONTAINER(n, struct vol, wake);

			v->blocked = false;
			vol_issue(&m, v, now);
		}
		dispatch(&m, now);
	}

	window_s = p->seconds;
	for (i = 0; i < p->nr_vols; i++)
		total += vol_measure(&m, &m.vols[i]);
	r.total_rate = total / window_s;
	lambda = solve_lambda(&m, total, window_s);
	for (i = 0; i < p->nr_vols; i++) {
		const struct vol *v = &m.vols[i];
		double got = vol_measure(&m, v) / window_s;
		double ideal = v->weight * lambda, err;

		if (ideal < v->reserve)
			ideal = v->reserve;
		if (v->limit && ideal > v->limit)
			ideal = v->limit;
		err = 100.0 * fabs(got - ideal) / ideal;
		if (err > r.max_err_pct)
			r.max_err_pct = err;
		if (getenv("SIM_DEBUG") && err > 1.0)
			printf("vol %u w=%u res=%llu lim=%llu got=%.2f ideal=%.2f\n", i, v->weight,
			       (unsigned long long)v->reserve, (unsigned long long)v->limit, got, ideal);
		if (v->reserve && got / v->reserve < r.worst_res_ratio)
			r.worst_res_ratio = got / v->reserve;
		if (v->limit && got / v->limit > r.worst_limit_ratio)
			r.worst_limit_ratio = got / v->limit;
		if (v->served_ios < r.min_served)
			r.min_served = v->served_ios;
	}
	r.by_res = m.s.by_reservation;
	r.by_weight = m.s.by_weight;
	free(m.vols);
	free(m.slots);
	free(m.free_slots);
	free(wv);
	free(rv);
	free(ev);
	return r;
}

static void report(const char *what, const struct sim_result *r)
{
	printf("%s: max_err_pct=%.3f worst_reservation_ratio=%.4f worst_limit_ratio=%.4f "
	       "total=%.0f/s min_served_ios=%llu by_reservation=%llu by_weight=%llu\n",
	       what, r->max_err_pct, r->worst_res_ratio, r->worst_limit_ratio,
	       r->total_rate, (unsigned long long)r->min_served,
	       (unsigned long long)r->by_res, (unsigned long long)r->by_weight);
}

static void check(const struct sim_result *r, bool has_res, bool has_lim)
{
	CHECK(r->max_err_pct <= 1.0);
	if (has_res)
		CHECK(r->worst_res_ratio >= 0.99);
	if (has_lim)
		CHECK(r->worst_limit_ratio <= 1.0 + 1e-9 + 0.01);
	/* enough IOs per volume that the shares are resolved to ~1% */
	CHECK(r->min_served >= 80);
}

/* 10,000 volumes, random weights, 5% reserved, 5% limited, fixed service. */
static void sim_10000_fixed_service(void)
{
	struct sim_params p = {
		.nr_vols = 10000, .depth = 32, .qd = 2, .seconds = 30, .warmup_s = 2,
		.svc_min_ns = 100 * US, .svc_max_ns = 100 * US,
		.model = SL_COST_IOPS, .wmin = 100, .wmax = 1000,
		.pct_reserved = 5, .pct_limited = 5, .seed = 0x5eed1,
	};
	struct sim_result r = simulate(&p);

	report("10000 vols fixed 100us", &r);
	check(&r, true, true);
	CHECK(r.by_res > 0);
}

/* The same with service times uniform in 20..180 us. */
static void sim_10000_variable_service(void)
{
	struct sim_params p = {
		.nr_vols = 10000, .depth = 32, .qd = 2, .seconds = 30, .warmup_s = 2,
		.svc_min_ns = 20 * US, .svc_max_ns = 180 * US,
		.model = SL_COST_IOPS, .wmin = 100, .wmax = 1000,
		.pct_reserved = 5, .pct_limited = 5, .seed = 0x5eed2,
	};
	struct sim_result r = simulate(&p);

	report("10000 vols variable 20-180us", &r);
	check(&r, true, true);
}

/*
 * Bytes cost model, 4 KiB and 64 KiB volumes mixed, service time growing
 * with size: shares are of bytes.
 */
static void sim_bytes_model_mixed_sizes(void)
{
	struct sim_params p = {
		.nr_vols = 1000, .depth = 16, .qd = 4, .seconds = 20, .warmup_s = 2,
		.svc_min_ns = 20 * US, .svc_max_ns = 60 * US, .ns_per_kib = 1000,
		.model = SL_COST_BYTES, .wmin = 100, .wmax = 1000,
		.pct_reserved = 5, .pct_limited = 5, .mixed_sizes = true,
		.seed = 0x5eed3,
	};
	struct sim_result r = simulate(&p);

	report("1000 vols bytes model 4k/64k", &r);
	check(&r, true, true);
}

/* Three saturating volumes 100/200/400 at iodepth 16: the bench's case. */
static void sim_three_volumes_1_2_4(void)
{
	static const u32 w[] = { 100, 200, 400 };
	struct sim_params p = {
		.nr_vols = 3, .depth = 8, .qd = 16, .seconds = 10, .warmup_s = 1,
		.svc_min_ns = 50 * US, .svc_max_ns = 150 * US,
		.model = SL_COST_IOPS, .weights = w, .seed = 0x5eed4,
	};
	struct sim_result r = simulate(&p);

	report("3 vols 100/200/400", &r);
	CHECK(r.max_err_pct <= 0.5);
}

static const struct unit_test tests[] = {
	UNIT_TEST(sim_three_volumes_1_2_4),
	UNIT_TEST(sim_bytes_model_mixed_sizes),
	UNIT_TEST(sim_10000_fixed_service),
	UNIT_TEST(sim_10000_variable_service),
};

UNIT_MAIN("sched_sim", tests)
