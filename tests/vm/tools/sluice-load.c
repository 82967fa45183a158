// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-load: API load for the benchmarks, over keep-alive connections to
 * 127.0.0.1:<port>.
 *
 *   sluice-load create <port> <token> <tenant> <pool> <first> <count>
 *       creates volumes v<first>..v<first+count-1> (64 MiB) one after
 *       another; prints {"count", "seconds", "errors", "p99_ms_first100",
 *       "p99_ms_last100"}
 *   sluice-load mixed <port> <token> <tenant> <pool> <clients> <seconds> <volumes>
 *       <clients> threads, each on its own connection, each request one of
 *       GET a volume (7 in 10), PATCH its policy (2 in 10), create a new
 *       volume (1 in 10), of the tenant's volumes v0..v<volumes-1>; prints
 *       {"requests", "errors", "created", "deleted", "p50_ms", "p99_ms", "max_ms"}
 *   sluice-load churn <port> <token> <tenant> <pool> <clients> <seconds> <volumes>
 *       the same mix, except that a client that has made CHURN_KEEP volumes
 *       of its own deletes its oldest instead of making another (1 MiB
 *       each): the state stays the same size however long it runs, so what
 *       the daemon's memory does over a run is its own
 * An error is a status other than the one expected, or no answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHURN_KEEP 2

static int port;
static const char *token, *tenant, *pool;
static int churn;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int dial(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One request on *fd (dialled again if it was closed): the status, or -1. */
static int request(int *fd, const char *method, const char *path, const char *body)
{
	char req[1024], buf[65536];
	size_t have = 0;
	int n, tries;

	if (body)
		n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			     "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
			     "Content-Length: %zu\r\n\r\n%s", method, path, token, strlen(body), body);
	else
		n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			     "Authorization: Bearer %s\r\n\r\n", method, path, token);
	for (tries = 0; tries < 2; tries++) {
		char *end, *cl;
		long len;

		if (*fd < 0)
			*fd = dial();
		if (*fd < 0)
			return -1;
		if (send(*fd, req, (size_t)n, MSG_NOSIGNAL) != n)
			goto again;
		have = 0;
		for (;;) {
			ssize_t r = recv(*fd, buf + have, sizeof(buf) - 1 - have, 0);

			if (r <= 0)
				goto again;
			have += (size_t)r;
			buf[have] = '\0';
			end = strstr(buf, "\r\n\r\n");
			if (!end)
				continue;
			cl = strstr(buf, "Content-Length: ");
			len = cl && cl < end ? strtol(cl + 16, NULL, 10) : 0;
			if ((size_t)(end + 4 - buf) + (size_t)len <= have)
				break;
		}
		return atoi(buf + 9);
again:
		close(*fd);
		*fd = -1;
	}
	return -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp);
	return v[(size_t)((n - 1) * p)];
}

static int create(long first, long count)
{
	double *lat = calloc((size_t)count, sizeof(*lat)), t0 = now_ms(), p_first, p_last;
	char path[128], body[256];
	long i, errors = 0, m;
	int fd = -1;

	if (!lat)
		return 1;
	snprintf(path, sizeof(path), "/v1/tenants/%s/volumes", tenant);
	for (i = 0; i < count; i++) {
		double s = now_ms();

		snprintf(body, sizeof(body), "{\"name\":\"v%ld\",\"pool\":\"%s\",\"size_bytes\":67108864,"
			 "\"policy\":{\"read_iops_sec\":%ld}}", first + i, pool, 100 + i % 1000);
		errors += request(&fd, "POST", path, body) != 201;
		lat[i] = now_ms() - s;
	}
	m = count < 100 ? count : 100;
	p_last = pct(lat + count - m, (size_t)m, 0.99);
	p_first = pct(lat, (size_t)m, 0.99);
	printf("{\"count\": %ld, \"seconds\": %.2f, \"errors\": %ld, \"p99_ms_first100\": %.2f,"
	       " \"p99_ms_last100\": %.2f}\n", count, (now_ms() - t0) / 1e3, errors, p_first, p_last);
	free(lat);
	return 0;
}

struct client {
	int n;
	double until;
	long volumes;
	double *lat;
	size_t nlat, cap;
	long errors;
	long created, deleted;	/* volumes made, and deleted, by its requests */
	long by_status[6];	/* the errors by the status's hundreds; [0] no answer */
};

static void *mixed_client(void *arg)
{
	struct client *c = arg;
	unsigned int seed = (unsigned int)c->n * 2654435761u;
	char path[128], body[256];
	long made = 0, deleted = 0;
	int fd = -1;

	while (now_ms() < c->until) {
		int r = (int)(rand_r(&seed) % 10), want, st;
		long v = rand_r(&seed) % c->volumes;
		double s = now_ms();

		if (r < 7) {
			snprintf(path, sizeof(path), "/v1/volumes/%s.v%ld", tenant, v);
			st = request(&fd, "GET", path, NULL);
			want = 200;
		} else if (r < 9) {
			snprintf(path, sizeof(path), "/v1/volumes/%s.v%ld", tenant, v);
			snprintf(body, sizeof(body), "{\"policy\":{\"write_iops_sec\":%d}}",
				 100 + (int)(rand_r(&seed) % 1000));
			st = request(&fd, "PATCH", path, body);
			want = 200;
		} else if (churn && made - deleted >= CHURN_KEEP) {
			snprintf(path, sizeof(path), "/v1/volumes/%s.m%d-%d-%ld", tenant,
				 (int)getpid(), c->n, deleted++);
			st = request(&fd, "DELETE", path, NULL);
			want = 202;
		} else {
			snprintf(path, sizeof(path), "/v1/tenants/%s/volumes", tenant);
			/* the run's own names: one run after another makes no clash */
			snprintf(body, sizeof(body), "{\"name\":\"m%d-%d-%ld\",\"pool\":\"%s\","
				 "\"size_bytes\":%d}", (int)getpid(), c->n, made++, pool,
				 churn ? 1048576 : 67108864);
			st = request(&fd, "POST", path, body);
			want = 201;
		}
		if (st == want && want == 201)
			c->created++;
		if (st == want && want == 202)
			c->deleted++;
		if (st != want) {
			c->errors++;
			c->by_status[st > 0 && st < 600 ? st / 100 : 0]++;
			if (c->errors <= 3)
				fprintf(stderr, "sluice-load: %s -> %d\n", path, st);
		}
		if (c->nlat == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 1024;
			c->lat = realloc(c->lat, c->cap * sizeof(*c->lat));
			if (!c->lat)
				return NULL;
		}
		c->lat[c->nlat++] = now_ms() - s;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int mixed(int clients, int seconds, long volumes)
{
	struct client *c = calloc((size_t)clients, sizeof(*c));
	pthread_t *t = calloc((size_t)clients, sizeof(*t));
	double *all, until = now_ms() + seconds * 1e3;
	size_t total = 0, k = 0;
	long errors = 0, by[6] = { 0 }, created = 0, deleted = 0;
	int i, j;

	if (!c || !t)
		return 1;
	for (i = 0; i < clients; i++) {
		c[i] = (struct client){ .n = i, .until = until, .volumes = volumes };
		pthread_create(&t[i], NULL, mixed_client, &c[i]);
	}
	for (i = 0; i < clients; i++) {
		pthread_join(t[i], NULL);
		total += c[i].nlat;
		errors += c[i].errors;
		created += c[i].created;
		deleted += c[i].deleted;
		for (j = 0; j < 6; j++)
			by[j] += c[i].by_status[j];
	}
	all = calloc(total + 1, sizeof(*all));
	for (i = 0; i < clients; i++) {
		memcpy(all + k, c[i].lat, c[i].nlat * sizeof(*all));
		k += c[i].nlat;
		free(c[i].lat);
	}
	printf("{\"requests\": %zu, \"errors\": %ld, \"created\": %ld, \"deleted\": %ld,"
	       " \"p50_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": %.2f,"
	       " \"errors_none_4xx_5xx\": [%ld, %ld, %ld]}\n", total, errors, created, deleted,
	       pct(all, total, 0.5), pct(all, total, 0.99), pct(all, total, 1.0), by[0], by[4], by[5]);
	free(all);
	free(c);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 8 && !strcmp(argv[1], "create")) {
		port = atoi(argv[2]);
		token = argv[3];
		tenant = argv[4];
		pool = argv[5];
		return create(atol(argv[6]), atol(argv[7]));
	}
	if (argc == 9 && (!strcmp(argv[1], "mixed") || !strcmp(argv[1], "churn"))) {
		churn = !strcmp(argv[1], "churn");
		port = atoi(argv[2]);
		token = argv[3];
		tenant = argv[4];
		pool = argv[5];
		return mixed(atoi(argv[6]), atoi(argv[7]), atol(argv[8]));
	}
	fprintf(stderr, "usage: sluice-load create <port> <token> <tenant> <pool> <first> <count>\n"
		"       sluice-load mixed|churn <port> <token> <tenant> <pool> <clients> <seconds> <volumes>\n");
	return 2;
}
