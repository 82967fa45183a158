// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-trickle: hostile slow clients, for the guest tests.
 *
 *   sluice-trickle <port> <connections> <sources> <interval ms> <seconds>
 *
 * Opens that many connections to 127.0.0.1:<port>, from 127.0.0.2 on (one
 * source address in turn for each, <sources> of them), and sends on each
 * one byte of a request's headers every interval, never finishing them.
 * After <seconds> it prints
 *   opened <n> refused <n> cut <n> first_cut_s <s> last_cut_s <s>
 * refused: connections the server closed at once (before a byte was
 * answered); cut: ones it closed later; times from the start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char req[] = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
	int port, n, sources, interval_ms, seconds, i, opened = 0, refused = 0, cut = 0;
	double start, first_cut = -1, last_cut = -1;
	struct pollfd *fds;
	size_t *sent;

	if (argc != 6) {
		fprintf(stderr, "usage: sluice-trickle <port> <connections> <sources> <interval ms> <seconds>\n");
		return 2;
	}
	port = atoi(argv[1]);
	n = atoi(argv[2]);
	sources = atoi(argv[3]);
	interval_ms = atoi(argv[4]);
	seconds = atoi(argv[5]);
	if (n < 1 || sources < 1 || sources > 250 || interval_ms < 1)
		return 2;
	fds = calloc((size_t)n, sizeof(*fds));
	sent = calloc((size_t)n, sizeof(*sent));
	if (!fds || !sent)
		return 1;
	start = now_s();
	for (i = 0; i < n; i++) {
		struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
		char addr[32];

		snprintf(addr, sizeof(addr), "127.0.0.%d", 2 + i % sources);
		inet_pton(AF_INET, addr, &src.sin_addr);
		inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
		dst.sin_port = htons((unsigned short)port);
		fds[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		fds[i].events = POLLIN;
		if (fds[i].fd < 0 || bind(fds[i].fd, (struct sockaddr *)&src, sizeof(src)) ||
		    connect(fds[i].fd, (struct sockaddr *)&dst, sizeof(dst))) {
			fprintf(stderr, "sluice-trickle: connection %d: %s\n", i, strerror(errno));
			return 1;
		}
		opened++;
	}
	while (now_s() - start < seconds) {
		int live = 0;

		for (i = 0; i < n; i++) {
			if (fds[i].fd < 0)
				continue;
			live++;
			/* one byte, never the end of the headers */
			if (send(fds[i].fd, req + sent[i] % (sizeof(req) - 1), 1, MSG_NOSIGNAL) == 1)
				sent[i]++;
		}
		if (!live)
			break;
		poll(fds, (nfds_t)n, interval_ms);
		for (i = 0; i < n; i++) {
			char buf[512];

			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (recv(fds[i].fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				continue;
			/* closed by the server */
			if (sent[i] <= 1) {
				refused++;
			} else {
				cut++;
				if (first_cut < 0)
					first_cut = now_s() - start;
				last_cut = now_s() - start;
			}
			close(fds[i].fd);
			fds[i].fd = -1;
		}
	}
	printf("opened %d refused %d cut %d first_cut_s %.2f last_cut_s %.2f\n", opened, refused, cut,
	       first_cut, last_cut);
	return 0;
}
