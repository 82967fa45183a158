// SPDX-License-Identifier: GPL-2.0
/* nvmet's controllers of a subsystem, from debugfs; see ctrls.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrls.h"

bool ag_nvmet_ctrls_known(const char *debugfs)
{
	char path[PATH_MAX];
	struct stat sb;

	if (!debugfs || !debugfs[0])
		return false;
	snprintf(path, sizeof(path), "%s/nvmet", debugfs);
	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}

/* "ctrl" and a number: a controller's directory */
static bool ctrl_name(const char *name)
{
	size_t i;

	if (strncmp(name, "ctrl", 4) || !name[4])
		return false;
	for (i = 4; name[i]; i++)
		if (name[i] < '0' || name[i] > '9')
			return false;
	return i <= 4 + 5;	/* cntlid is 16 bits */
}

/*
 * The host NQN of controller dir (under the subsystem's dfd) into nqn:
 * 1 read, 0 there but not a host NQN, -1 the controller is gone.
 */
static int host_nqn(int dfd, const char *dir, char *nqn)
{
	char path[NAME_MAX + 16], buf[AG_NQN_MAX + 3];
	ssize_t r;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/hostnqn", dir);
	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -1 : 0;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r < 0)
		return errno == ENODEV || errno == ENOENT ? -1 : 0;
	buf[r] = '\0';
	while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == ' '))
		buf[--r] = '\0';
	if (r == 0 || r > AG_NQN_MAX)
		return 0;
	for (i = 0; i < (size_t)r; i++)
		if (buf[i] <= ' ' || buf[i] == 0x7f)
			return 0;
	memcpy(nqn, buf, (size_t)r + 1);
	return 1;
}

static int by_nqn(const void *a, const void *b)
{
	return strcmp(a, b);
}

int ag_nvmet_ctrls_read(const char *debugfs, const char *nqn, struct ag_nvmet_ctrls *out)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t room = 0, i, k;
	DIR *d;
	int fd;

	memset(out, 0, sizeof(*out));
	if (!nqn || !nqn[0] || nqn[0] == '.' || strchr(nqn, '/') || strlen(nqn) > AG_NQN_MAX ||
	    !ag_nvmet_ctrls_known(debugfs))
		return -1;
	snprintf(path, sizeof(path), "%s/nvmet/%s", debugfs, nqn);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		/* no such subsystem (now): no controller */
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		char host[AG_NQN_MAX + 1];
		int got;

		if (!ctrl_name(de->d_name))
			continue;
		got = host_nqn(fd, de->d_name, host);
		if (got < 0)
			continue;
		out->controllers++;
		if (!got)
			continue;
		if (out->nr_hosts == room) {
			size_t more = room ? 2 * room : 4;
			void *p = realloc(out->hosts, more * sizeof(*out->hosts));

			if (!p) {
				closedir(d);
				ag_nvmet_ctrls_free(out);
				return -1;
			}
			out->hosts = p;
			room = more;
		}
		memcpy(out->hosts[out->nr_hosts++], host, sizeof(host));
	}
	closedir(d);
	/* one host, several controllers (paths): counted once */
	if (out->nr_hosts)
		qsort(out->hosts, out->nr_hosts, sizeof(*out->hosts), by_nqn);
	for (i = k = 0; i < out->nr_hosts; i++)
		if (!k || strcmp(out->hosts[k - 1], out->hosts[i]))
			memmove(out->hosts[k++], out->hosts[i], sizeof(*out->hosts));
	out->nr_hosts = k;
	return 0;
}

void ag_nvmet_ctrls_free(struct ag_nvmet_ctrls *c)
{
	free(c->hosts);
	memset(c, 0, sizeof(*c));
}
