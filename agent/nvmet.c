// SPDX-License-Identifier: GPL-2.0
/* nvmet's configfs tree, made as the store says; see nvmet.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "nvmet.h"

bool ag_nqn_valid(const char *text)
{
	size_t n = strlen(text), i;

	if (n < 5 || n > AG_NQN_MAX || strncmp(text, "nqn.", 4))
		return false;
	/* what host NQNs are made of: no '/', no space, nothing a shell would read */
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)text[i]) && !strchr(".:_-", text[i]))
			return false;
	return true;
}

static int fail_errno(struct ag_err *e, const char *what, const char *path)
{
	return ag_fail(e, AG_E_INTERNAL, "nvmet: %s %s: %s", what, path, strerror(errno));
}

static int write_attr(const char *path, const char *value, struct ag_err *e)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(value);
	ssize_t w;

	if (fd < 0)
		return fail_errno(e, "open", path);
	w = write(fd, value, n);
	if (w < 0 || (size_t)w != n) {
		if (w >= 0)
			errno = EIO;
		fail_errno(e, "write", path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The attribute's text without its newline; "" when it cannot be read. */
static void read_attr(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[r > 0 ? r : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static bool exists(const char *path)
{
	struct stat sb;

	return !lstat(path, &sb);
}

static int make_dir(const char *path, unsigned int *changed, struct ag_err *e)
{
	if (!mkdir(path, 0755)) {
		(*changed)++;
		return 0;
	}
	return errno == EEXIST ? 0 : fail_errno(e, "mkdir", path);
}

static int make_link(const char *target, const char *link, unsigned int *changed,
		     struct ag_err *e)
{
	if (!symlink(target, link)) {
		(*changed)++;
		return 0;
	}
	return errno == EEXIST ? 0 : fail_errno(e, "link", link);
}

static int drop(int (*fn)(const char *), const char *path, unsigned int *changed,
		struct ag_err *e)
{
	if (!fn(path)) {
		(*changed)++;
		return 0;
	}
	return errno == ENOENT ? 0 : fail_errno(e, "remove", path);
}

/* Remove every link in dir (a port's subsystems, a subsystem's allowed hosts). */
static int drop_links(const char *dir, unsigned int *changed, struct ag_err *e)
{
	char link[PATH_MAX + 320];
	struct dirent *de;
	DIR *d = opendir(dir);
	int rc = 0;

	while (d && !rc && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		rc = drop(unlink, link, changed, e);
	}
	if (d)
		closedir(d);
	return rc;
}

/* The first entry of dir that is not prefix's, into name; false for none. */
static bool foreign_entry(const char *dir, const char *prefix, char *name, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool found = false;

	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (prefix && !strncmp(de->d_name, prefix, strlen(prefix))))
			continue;
		snprintf(name, len, "%s", de->d_name);
		found = true;
	}
	if (d)
		closedir(d);
	return found;
}

static void uuid_text(const uint8_t *u, char *out)
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/*
 * Whether the port is as configured (made if missing). Its addresses can be
 * written only while no subsystem is linked to it: with rewrite (the full
 * reconcile), the links of ours (prefix) are dropped and the addresses
 * written, and reconcile links ours again; a link not ours is left, and
 * the port refused. Without rewrite a port that differs is an error.
 */
static int port_ready(const char *root, const struct ag_nvmet_port *port, const char *prefix,
		      bool rewrite, unsigned int *changed, struct ag_err *e)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], have[128], svc[16], other[256];
	const char *fam = strchr(port->addr, ':') ? "ipv6" : "ipv4";
	const char *const attrs[][2] = {
		{ "addr_trtype", "tcp" }, { "addr_adrfam", fam }, { "addr_traddr", port->addr },
		{ "addr_trsvcid", svc },
	};
	bool same = true;
	size_t i;

	snprintf(svc, sizeof(svc), "%u", port->port);
	snprintf(dir, sizeof(dir), "%s/ports/%u", root, port->id);
	if (make_dir(dir, changed, e))
		return -1;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, attrs[i][0]);
		read_attr(path, have, sizeof(have));
		same &= !strcmp(have, attrs[i][1]);
	}
	if (same)
		return 0;
	snprintf(path, sizeof(path), "%s/subsystems", dir);
	/* a port that serves nobody is written at once; one that serves ours, by reconcile */
	if (foreign_entry(path, NULL, other, sizeof(other)) && !rewrite)
		return ag_fail(e, AG_E_INTERNAL, "nvmet: port %u is not %s:%u yet (reconcile changes it)",
			       port->id, port->addr, port->port);
	if (foreign_entry(path, prefix, other, sizeof(other)))
		return ag_fail(e, AG_E_INTERNAL, "nvmet: port %u serves %s, not ours: not changed",
			       port->id, other);
	if (drop_links(path, changed, e))
		return -1;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, attrs[i][0]);
		if (write_attr(path, attrs[i][1], e))
			return -1;
	}
	(*changed)++;
	return 0;
}

/* Drop the links of subsystem nqn from every port but keep (0: all). */
static int unlink_ports(const char *root, const char *nqn, unsigned int keep,
			unsigned int *changed, struct ag_err *e)
{
	char dir[PATH_MAX], link[PATH_MAX + 512];
	struct dirent *de;
	DIR *d;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/ports", root);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (keep && (unsigned int)atoi(de->d_name) == keep))
			continue;
		snprintf(link, sizeof(link), "%s/%s/subsystems/%s", dir, de->d_name, nqn);
		if (exists(link) && drop(unlink, link, changed, e))
			rc = -1;
	}
	if (d)
		closedir(d);
	return rc;
}

static bool wanted_host(const struct ag_nvmet_subsys *want, const char *nqn)
{
	size_t i;

	for (i = 0; i < want->nr_hosts; i++)
		if (!strcmp(want->hosts[i].nqn, nqn))
			return true;
	return false;
}

/*
 * hosts/<nqn>/dhchap_key as the host wants it. A key is written when it
 * differs; a key set by another hand on a host that has none cannot be
 * taken back (configfs takes no empty write) and only makes nvmet
 * stricter: it is reported.
 */
static int host_key_as_wanted(const char *dir, const struct ag_nvmet_host *h,
			      unsigned int *changed, struct ag_err *e)
{
	char path[PATH_MAX + 16], have[AG_DHCHAP_MAX + 2];

	snprintf(path, sizeof(path), "%s/dhchap_key", dir);
	read_attr(path, have, sizeof(have));
	if (!h->dhchap[0] && have[0])
		ag_log("warning", "nvmet: host %s has a DH-HMAC-CHAP secret sluice did not set",
		       h->nqn);
	if (!h->dhchap[0] || !strcmp(have, h->dhchap))
		return 0;
	if (write_attr(path, h->dhchap, e))
		return -1;
	/* configfs makes it 0644: the secret is root's only */
	chmod(path, 0600);
	(*changed)++;
	return 0;
}

/*
 * The allowed hosts as wanted. A host taken off keeps a controller it has
 * until the subsystem leaves the port: so the port link (link) goes first,
 * then the hosts; the caller links it again. A crash between leaves the
 * subsystem off the port, which the next converge links again.
 */
static int hosts_as_wanted(const char *root, const char *sub, const char *link,
			   const struct ag_nvmet_subsys *want, unsigned int *changed,
			   struct ag_err *e)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 300], target[PATH_MAX];
	struct dirent *de;
	bool stale = false;
	size_t i;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/allowed_hosts", sub);
	d = opendir(dir);
	if (!d)
		return fail_errno(e, "open", dir);
	while ((de = readdir(d)) && !stale)
		stale = de->d_name[0] != '.' && !wanted_host(want, de->d_name);
	if (stale && exists(link) && drop(unlink, link, changed, e)) {
		closedir(d);
		return -1;
	}
	rewinddir(d);
	while (stale && (de = readdir(d))) {
		if (de->d_name[0] == '.' || wanted_host(want, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (drop(unlink, path, changed, e)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	for (i = 0; i < want->nr_hosts; i++) {
		snprintf(target, sizeof(target), "%s/hosts/%s", root, want->hosts[i].nqn);
		snprintf(path, sizeof(path), "%s/%s", dir, want->hosts[i].nqn);
		/* the secret before the host is allowed: never a window without it */
		if (make_dir(target, changed, e) ||
		    host_key_as_wanted(target, &want->hosts[i], changed, e) ||
		    make_link(target, path, changed, e))
			return -1;
	}
	return 0;
}

/* Namespace 1 on want's device, with its UUID, enabled. */
static int namespace_as_wanted(const char *sub, const struct ag_nvmet_subsys *want,
			       unsigned int *changed, struct ag_err *e)
{
	char ns[PATH_MAX + 16], path[PATH_MAX + 48], have[256], uuid[37], have_uuid[64], have_nguid[64];

	snprintf(ns, sizeof(ns), "%s/namespaces/1", sub);
	if (make_dir(ns, changed, e))
		return -1;
	uuid_text(want->uuid, uuid);
	snprintf(path, sizeof(path), "%s/device_path", ns);
	read_attr(path, have, sizeof(have));
	snprintf(path, sizeof(path), "%s/device_uuid", ns);
	read_attr(path, have_uuid, sizeof(have_uuid));
	snprintf(path, sizeof(path), "%s/device_nguid", ns);
	read_attr(path, have_nguid, sizeof(have_nguid));
	if (strcmp(have, want->device) || strcmp(have_uuid, uuid) || strcmp(have_nguid, uuid)) {
		/* the device and the ids are written while the namespace is off */
		snprintf(path, sizeof(path), "%s/enable", ns);
		read_attr(path, have, sizeof(have));
		if (strcmp(have, "0") && write_attr(path, "0", e))
			return -1;
		snprintf(path, sizeof(path), "%s/device_path", ns);
		if (write_attr(path, want->device, e))
			return -1;
		snprintf(path, sizeof(path), "%s/device_uuid", ns);
		if (write_attr(path, uuid, e))
			return -1;
		snprintf(path, sizeof(path), "%s/device_nguid", ns);
		if (write_attr(path, uuid, e))
			return -1;
		(*changed)++;
	}
	snprintf(path, sizeof(path), "%s/enable", ns);
	read_attr(path, have, sizeof(have));
	if (strcmp(have, "1")) {
		if (write_attr(path, "1", e))
			return -1;
		(*changed)++;
	}
	/* the device's size read again: a grown volume's hosts are told (a no-op otherwise) */
	snprintf(path, sizeof(path), "%s/revalidate_size", ns);
	return write_attr(path, "1", e);
}

static int remove_subsys(const char *root, const char *nqn, unsigned int *changed,
			 struct ag_err *e)
{
	char sub[PATH_MAX], path[PATH_MAX + 256];

	snprintf(sub, sizeof(sub), "%s/subsystems/%s", root, nqn);
	if (!exists(sub))
		return 0;
	if (unlink_ports(root, nqn, 0, changed, e))
		return -1;
	snprintf(path, sizeof(path), "%s/allowed_hosts", sub);
	if (drop_links(path, changed, e))
		return -1;
	snprintf(path, sizeof(path), "%s/namespaces/1/enable", sub);
	if (exists(path) && write_attr(path, "0", e))
		return -1;
	snprintf(path, sizeof(path), "%s/namespaces/1", sub);
	if (drop(rmdir, path, changed, e) || drop(rmdir, sub, changed, e))
		return -1;
	return 0;
}

/* One subsystem made as want says, on its port (rewritten when rewrite_port). */
static int converge_one(const char *root, const char *prefix, bool rewrite_port, const char *nqn,
			const struct ag_nvmet_subsys *want, unsigned int *changed, struct ag_err *e)
{
	char sub[PATH_MAX], path[PATH_MAX + 256], link[PATH_MAX + 256], have[64];
	const struct ag_nvmet_port *port = want ? &want->port : NULL;

	snprintf(path, sizeof(path), "%s/subsystems", root);
	if (!exists(path)) {
		if (!want)
			return 0;
		return ag_fail(e, AG_E_INTERNAL, "nvmet: %s is not there (modprobe nvmet-tcp)", root);
	}
	/* exports turned off: nothing of ours stays */
	if (!want || !port->id)
		return remove_subsys(root, nqn, changed, e);
	if (port_ready(root, port, prefix, rewrite_port, changed, e))
		return -1;
	snprintf(sub, sizeof(sub), "%s/subsystems/%s", root, nqn);
	snprintf(link, sizeof(link), "%s/ports/%u/subsystems/%s", root, port->id, nqn);
	if (make_dir(sub, changed, e))
		return -1;
	snprintf(path, sizeof(path), "%s/attr_allow_any_host", sub);
	read_attr(path, have, sizeof(have));
	if (strcmp(have, "0") && write_attr(path, "0", e))
		return -1;
	/* the model a host sees; nvmet refuses a change once a host has looked: then it stays */
	snprintf(path, sizeof(path), "%s/attr_model", sub);
	read_attr(path, have, sizeof(have));
	if (strcmp(have, "sluice") && !write_attr(path, "sluice", e))
		(*changed)++;
	if (namespace_as_wanted(sub, want, changed, e) ||
	    hosts_as_wanted(root, sub, link, want, changed, e) ||
	    unlink_ports(root, nqn, port->id, changed, e))
		return -1;
	return make_link(sub, link, changed, e);
}

int ag_nvmet_converge_one(const char *root, const char *nqn, const struct ag_nvmet_subsys *want,
			  unsigned int *changed, struct ag_err *e)
{
	return converge_one(root, NULL, false, nqn, want, changed, e);
}

static int by_nqn(const void *key, const void *elem)
{
	return strcmp(key, ((const struct ag_nvmet_subsys *)elem)->nqn);
}

int ag_nvmet_converge_all(const char *root, const char *prefix,
			  const struct ag_nvmet_subsys *want, size_t n, unsigned int *changed,
			  struct ag_err *e)
{
	char dir[PATH_MAX];
	struct ag_err one;
	struct dirent *de;
	size_t i, failed = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/subsystems", root);
	d = opendir(dir);
	if (!d && !n)
		return 0;
	while (d && (de = readdir(d))) {
		const struct ag_nvmet_subsys *w;

		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		w = bsearch(de->d_name, want, n, sizeof(*want), by_nqn);
		if (w && w->port.id)
			continue;
		if (remove_subsys(root, de->d_name, changed, &one) && !failed++)
			*e = one;
	}
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		if (converge_one(root, prefix, true, want[i].nqn, &want[i], changed, &one) &&
		    !failed++)
			*e = one;
	return failed ? -1 : 0;
}

void ag_nvmet_drop_host(const char *root, const char *nqn)
{
	char path[PATH_MAX];

	/* configfs refuses while a subsystem links to it: then it stays */
	snprintf(path, sizeof(path), "%s/hosts/%s", root, nqn);
	rmdir(path);
}

bool ag_nvmet_has_auth(const char *root, const char *prefix)
{
	char dir[PATH_MAX], key[PATH_MAX + 16];
	bool has;

	snprintf(dir, sizeof(dir), "%s/hosts/%sauth-probe", root, prefix);
	snprintf(key, sizeof(key), "%s/dhchap_key", dir);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return false;
	has = exists(key);
	rmdir(dir);
	return has;
}
