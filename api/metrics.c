// SPDX-License-Identifier: GPL-2.0
/* The API's own figures; see metrics.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "unknown"
#endif

#define MAX_ROUTES 32
/* the status codes the API answers with; any other is counted as "other" */
static const unsigned int codes[] = { 200, 201, 202, 204, 400, 401, 403, 404, 405, 409, 412,
				      413, 415, 422, 431, 500, 503 };
#define NR_CODES (sizeof(codes) / sizeof(codes[0]) + 1)
/* upper bounds of the latency buckets, in seconds (the last is +Inf) */
static const double bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
				 5, 10 };
#define NR_BOUNDS (sizeof(bounds) / sizeof(bounds[0]))

struct per_route {
	uint64_t by_code[NR_CODES];
	uint64_t buckets[NR_BOUNDS + 1];
	uint64_t sum_us;
};

struct ap_metrics {
	struct per_route routes[MAX_ROUTES + 1];	/* the last: no route matched */
};

struct ap_metrics *ap_metrics_new(void)
{
	return calloc(1, sizeof(struct ap_metrics));
}

void ap_metrics_free(struct ap_metrics *m)
{
	free(m);
}

void ap_metrics_record(struct ap_metrics *m, int route, unsigned int status, double seconds)
{
	struct per_route *r;
	size_t c, b;

	if (!m)
		return;
	r = &m->routes[route >= 0 && route < MAX_ROUTES ? route : MAX_ROUTES];
	for (c = 0; c < NR_CODES - 1 && codes[c] != status; c++)
		;
	for (b = 0; b < NR_BOUNDS && seconds > bounds[b]; b++)
		;
	__atomic_fetch_add(&r->by_code[c], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->buckets[b], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->sum_us, (uint64_t)(seconds * 1e6), __ATOMIC_RELAXED);
}

/* A route's labels: its path with {id} for the id it takes, its method. */
static void labels(int route, char *out, size_t len)
{
	const char *pattern = "unmatched", *method = "any";
	char path[128];
	size_t i, k = 0;

	if (route < ap_route_count())
		ap_route_name(route, &pattern, &method);
	for (i = 0; pattern[i] && k + 5 < sizeof(path); i++) {
		if (pattern[i] == '*') {
			memcpy(path + k, "{id}", 4);
			k += 4;
		} else {
			path[k++] = pattern[i];
		}
	}
	path[k] = '\0';
	snprintf(out, len, "route=\"%s\",method=\"%s\"", path, method);
}

void ap_metrics_write(struct ap_metrics *m, FILE *f)
{
	int nr = ap_route_count(), r;
	char l[192];
	size_t c, b;

	fprintf(f, "# HELP sluice_build_info The version of sluiced.\n"
		"# TYPE sluice_build_info gauge\nsluice_build_info{version=\"%s\"} 1\n", SLUICE_VERSION);
	if (!m)
		return;
	fprintf(f, "# HELP sluice_api_requests_total Requests answered, by route, method and status code.\n"
		"# TYPE sluice_api_requests_total counter\n");
	for (r = 0; r <= nr; r++) {
		labels(r, l, sizeof(l));
		for (c = 0; c < NR_CODES; c++) {
			uint64_t v = __atomic_load_n(&m->routes[r < nr ? r : MAX_ROUTES].by_code[c],
						     __ATOMIC_RELAXED);
			char code[8];

			if (!v)
				continue;
			if (c < NR_CODES - 1)
				snprintf(code, sizeof(code), "%u", codes[c]);
			else
				snprintf(code, sizeof(code), "other");
			fprintf(f, "sluice_api_requests_total{%s,code=\"%s\"} %llu\n", l, code,
				(unsigned long long)v);
		}
	}
	fprintf(f, "# HELP sluice_api_request_duration_seconds Time to answer a request, by route and method.\n"
		"# TYPE sluice_api_request_duration_seconds histogram\n");
	for (r = 0; r <= nr; r++) {
		const struct per_route *pr = &m->routes[r < nr ? r : MAX_ROUTES];
		uint64_t cum = 0;

		labels(r, l, sizeof(l));
		for (b = 0; b <= NR_BOUNDS; b++)
			cum += __atomic_load_n(&pr->buckets[b], __ATOMIC_RELAXED);
		if (!cum)
			continue;
		cum = 0;
		for (b = 0; b <= NR_BOUNDS; b++) {
			cum += __atomic_load_n(&pr->buckets[b], __ATOMIC_RELAXED);
			if (b < NR_BOUNDS)
				fprintf(f, "sluice_api_request_duration_seconds_bucket{%s,le=\"%g\"} %llu\n",
					l, bounds[b], (unsigned long long)cum);
			else
				fprintf(f, "sluice_api_request_duration_seconds_bucket{%s,le=\"+Inf\"} %llu\n",
					l, (unsigned long long)cum);
		}
		fprintf(f, "sluice_api_request_duration_seconds_sum{%s} %.6f\n", l,
			__atomic_load_n(&pr->sum_us, __ATOMIC_RELAXED) / 1e6);
		fprintf(f, "sluice_api_request_duration_seconds_count{%s} %llu\n", l,
			(unsigned long long)cum);
	}
}
