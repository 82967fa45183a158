/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The API's own figures for /metrics: requests by route, method and status
 * code (sluice_api_requests_total) and their latency by route and method
 * (sluice_api_request_duration_seconds, a histogram), counted without a
 * lock (atomic adds) by every request thread.
 */
#ifndef SLUICE_API_METRICS_H
#define SLUICE_API_METRICS_H

#include <stdio.h>

struct ap_metrics;

struct ap_metrics *ap_metrics_new(void);
void ap_metrics_free(struct ap_metrics *m);

/* route: ap_route_count()'s index, or -1 for a path no route matches. */
void ap_metrics_record(struct ap_metrics *m, int route, unsigned int status, double seconds);
/* In the Prometheus text format, with sluice_build_info. */
void ap_metrics_write(struct ap_metrics *m, FILE *f);

/* The routes (routes.c): how many, and each one's path pattern and method. */
int ap_route_count(void);
void ap_route_name(int route, const char **pattern, const char **method);

#endif
