// SPDX-License-Identifier: GPL-2.0
/* The daemon's life; see daemon.h. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "jobs.h"
#include "log.h"

/* systemd's readiness notification, without libsystemd. */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa,
	       offsetof(struct sockaddr_un, sun_path) + strlen(path));
	close(fd);
}

static int load_config(struct ag_config *cf, const char *path, const char *state_dir)
{
	char err[512];

	ag_config_defaults(cf);
	if (ag_config_load(cf, path, err, sizeof(err)) || ag_config_check(cf, err, sizeof(err))) {
		ag_log("error", "%s", err);
		return -1;
	}
	if (state_dir)
		snprintf(cf->state_dir, sizeof(cf->state_dir), "%s", state_dir);
	return 0;
}

/* The dirty monitor by cf (none when its interval is 0); a failure is logged, not fatal. */
static struct ag_monitor *start_monitor(struct ag_agent *a, const struct ag_config *cf)
{
	struct ag_monitor *m = NULL;
	char err[256];

	if (!cf->monitor.interval_ms)
		return NULL;
	if (ag_monitor_open(&m, &a->st, &cf->monitor, err, sizeof(err)) || ag_monitor_start(m)) {
		ag_log("warning", "dirty monitor not running: %s", err);
		ag_monitor_close(m);
		return NULL;
	}
	ag_log("info", "dirty monitor: a tick every %u ms, control %s", cf->monitor.interval_ms,
	       cf->monitor.control ? "on" : "off");
	return m;
}

/* As many open files as allowed: each API connection is one. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int ag_daemon(const char *config_path, const char *state_dir, const struct ag_frontend *fe)
{
	struct ag_config cf, next;
	struct ag_agent a;
	struct ag_monitor *mon;
	struct ag_err e;
	void *served;
	sigset_t set;
	int sig;

	if (load_config(&cf, config_path, state_dir))
		return 1;
	raise_nofile();
	/* its memory holds hosts' secrets: no core dump, no ptrace by others */
	prctl(PR_SET_DUMPABLE, 0);
	if (ag_agent_open(&a, cf.state_dir, 0, true, &e)) {
		ag_log("error", "%s%s", e.msg, e.code == AG_E_CORRUPT ?
		       "; stopping, the store is left as it is" : "");
		return 1;
	}
	ag_set_export_ports(&a, &cf.nvme_port, cf.tenant_ports, cf.nr_tenant_ports);
	if (ag_reconcile(&a, &e))
		ag_log("warning", "reconcile: %s (serving; the periodic reconcile retries)", e.msg);
	/* the threads inherit the mask: only this thread takes signals */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (ag_jobs_start(&a, cf.reconcile_interval_s, &e)) {
		ag_log("error", "%s", e.msg);
		ag_agent_close(&a);
		return 1;
	}
	mon = start_monitor(&a, &cf);
	a.reservation_pct = cf.reservation_pct;
	served = fe->start(&a, mon, &cf);
	if (!served) {
		ag_monitor_close(mon);
		ag_agent_close(&a);
		return 1;
	}
	notify("READY=1");
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (sig != SIGHUP)
			break;
		ag_log("info", "SIGHUP: reading %s", config_path);
		if (load_config(&next, config_path, state_dir)) {
			ag_log("error", "keeping the configuration in force");
			continue;
		}
		if (strcmp(next.state_dir, cf.state_dir))
			ag_log("warning", "state_dir changes only with a restart; still %s", cf.state_dir);
		snprintf(next.state_dir, sizeof(next.state_dir), "%s", cf.state_dir);
		if (!memcmp(&next, &cf, sizeof(cf))) {
			ag_log("info", "configuration unchanged");
			continue;
		}
		if (next.reconcile_interval_s != cf.reconcile_interval_s)
			ag_log("warning", "reconcile_interval_s changes only with a restart; still %u",
			       cf.reconcile_interval_s);
		next.reconcile_interval_s = cf.reconcile_interval_s;
		notify("RELOADING=1");
		fe->stop(served);
		if (memcmp(&next.monitor, &cf.monitor, sizeof(cf.monitor))) {
			ag_monitor_close(mon);
			mon = start_monitor(&a, &next);
		}
		/* under the state's lock: the operations read it there */
		pthread_rwlock_wrlock(&a.st.lock);
		a.reservation_pct = next.reservation_pct;
		pthread_rwlock_unlock(&a.st.lock);
		/* new ports are taken at the next reconcile */
		ag_set_export_ports(&a, &next.nvme_port, next.tenant_ports, next.nr_tenant_ports);
		served = fe->start(&a, mon, &next);
		if (served) {
			cf = next;
		} else {
			ag_log("error", "back to the configuration in force");
			ag_monitor_close(mon);
			mon = start_monitor(&a, &cf);
			served = fe->start(&a, mon, &cf);
			if (!served) {
				ag_monitor_close(mon);
				ag_agent_close(&a);
				return 1;
			}
		}
		notify("READY=1");
	}
	notify("STOPPING=1");
	ag_log("info", "signal %d: finishing what is in flight; devices stay up", sig);
	fe->stop(served);
	ag_monitor_close(mon);
	ag_agent_close(&a);
	ag_log("info", "stopped");
	return 0;
}
