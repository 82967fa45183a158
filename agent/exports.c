// SPDX-License-Identifier: GPL-2.0
/*
 * Hosts and exports: a tenant's hosts by NQN, its volumes exported to them
 * over NVMe/TCP (nvmet.h), each change stored first and then made in the
 * kernel; see ops.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nvmet.h"
#include "ops.h"
#include "plan.h"

void ag_subsys_nqn(const struct ag_agent *a, const char *volume, char *out)
{
	snprintf(out, AG_NQN_MAX + 1, AG_NQN_PREFIX "%s:%s", ag_db_appliance(a->db), volume);
}

/*
 * The namespace's UUID: the appliance's, its last 8 bytes mixed with the
 * volume id's FNV-1a hash, marked version 8 (RFC 9562). The same across
 * reboots, so a host that reconnects sees the namespace it knew.
 */
static void ns_uuid(const struct ag_agent *a, const char *volume, uint8_t *u)
{
	const char *t = ag_db_appliance(a->db);
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i, n = 0;

	memset(u, 0, 16);
	for (i = 0; t[i] && n < 32; i++) {
		unsigned int d;

		if (t[i] == '-' || sscanf(t + i, "%1x", &d) != 1)
			continue;
		u[n / 2] |= (uint8_t)(n % 2 ? d : d << 4);
		n++;
	}
	for (i = 0; volume[i]; i++) {
		h ^= (unsigned char)volume[i];
		h *= 0x100000001b3ULL;
	}
	for (i = 0; i < 8; i++)
		u[8 + i] ^= (uint8_t)(h >> (8 * i));
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x80);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
}

/*
 * Whether nvmet takes hosts' secrets. Probed under nvmet_lock (the probe
 * makes and removes one host entry: two at once would see each other's),
 * and remembered once it says yes: a kernel does not lose it.
 */
static bool nvmet_checks_secrets(struct ag_agent *a)
{
	char prefix[AG_NQN_MAX + 1];
	bool yes;

	pthread_mutex_lock(&a->nvmet_lock);
	if (!a->nvmet_auth) {
		snprintf(prefix, sizeof(prefix), AG_NQN_PREFIX "%s:", ag_db_appliance(a->db));
		a->nvmet_auth = ag_nvmet_has_auth(a->nvmet_root, prefix);
	}
	yes = a->nvmet_auth;
	pthread_mutex_unlock(&a->nvmet_lock);
	return yes;
}

void ag_set_export_ports(struct ag_agent *a, const struct ag_nvmet_port *dflt,
			 const struct ag_tenant_port *tenants, unsigned int n)
{
	pthread_rwlock_wrlock(&a->st.lock);
	a->nvme_port = *dflt;
	a->nr_tenant_ports = n < AG_TENANT_PORTS_MAX ? n : AG_TENANT_PORTS_MAX;
	memcpy(a->tenant_ports, tenants, a->nr_tenant_ports * sizeof(*tenants));
	pthread_rwlock_unlock(&a->st.lock);
}

const struct ag_nvmet_port *ag_export_port(const struct ag_agent *a, const char *tenant)
{
	unsigned int i;

	for (i = 0; i < a->nr_tenant_ports; i++)
		if (!strcmp(a->tenant_ports[i].tenant, tenant))
			return &a->tenant_ports[i].port;
	return &a->nvme_port;
}

int ag_host_add(struct ag_agent *a, const char *tenant, const char *name, const char *nqn,
		const char *dhchap, struct ag_err *e)
{
	struct ag_host *h;
	int rc = -1;

	if (!ag_valid_id(name))
		return ag_fail(e, AG_E_INVALID, "name: 1 to %d of a-z 0-9 -, not ending in -data",
			       AG_ID_MAX);
	if (!ag_nqn_valid(nqn))
		return ag_fail(e, AG_E_INVALID, "nqn: \"nqn.\" and up to %d printable characters, no '/'",
			       AG_NQN_MAX);
	if (dhchap && !ag_dhchap_valid(dhchap))
		return ag_fail(e, AG_E_INVALID, "dhchap_secret: \"generate\", or a secret"
			       " \"DHHC-1:<00-03>:<base64 of 32, 48 or 64 bytes and their CRC-32>:\"");
	/* the appliance's own names (its subsystems, its probe) are no host's */
	if (!strncmp(nqn, AG_NQN_PREFIX, strlen(AG_NQN_PREFIX)))
		return ag_fail(e, AG_E_INVALID, "nqn: " AG_NQN_PREFIX "... is the appliance's own");
	/* where nvmet cannot check it, a secret would be a promise not kept */
	if (dhchap && a->with_kernel && !nvmet_checks_secrets(a))
		return ag_fail(e, AG_E_INVALID, "dhchap_secret: nvmet here has no NVMe in-band"
			       " authentication (DH-HMAC-CHAP: 6.12 kernels have it), or is not loaded");
	h = calloc(1, sizeof(*h));
	if (!h)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	if (dhchap)
		snprintf(h->dhchap, sizeof(h->dhchap), "%s", dhchap);
	snprintf(h->tenant, sizeof(h->tenant), "%s", tenant);
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->key, sizeof(h->key), "%s/%s", tenant, name);
	snprintf(h->nqn, sizeof(h->nqn), "%s", nqn);
	pthread_rwlock_wrlock(&a->st.lock);
	if (!ag_state_tenant(&a->st, tenant)) {
		ag_fail(e, AG_E_NOTFOUND, "no tenant %s", tenant);
	} else if (ag_state_host(&a->st, tenant, name)) {
		ag_fail(e, AG_E_EXISTS, "host %s exists", name);
	} else if (ag_idmap_get(&a->st.nqns, nqn)) {
		/* nvmet admits by NQN: one NQN of two tenants would be both tenants' */
		ag_fail(e, AG_E_EXISTS, "nqn: a host of this NQN is registered on the appliance");
	} else if (!ag_db_store_host(a->db, h, e)) {
		if (ag_state_add_host(&a->st, h))
			ag_fail(e, AG_E_INTERNAL, "out of memory (the host is stored: restart to see it)");
		else
			rc = 0;
		if (!rc)
			h = NULL;
	}
	pthread_rwlock_unlock(&a->st.lock);
	if (h)
		memset(h->dhchap, 0, sizeof(h->dhchap));
	free(h);
	if (!rc)
		ag_log("info", "host %s/%s (%s) registered%s", tenant, name, nqn,
		       dhchap ? ", with a DH-HMAC-CHAP secret" : "");
	return rc;
}

int ag_host_delete(struct ag_agent *a, const char *tenant, const char *name, struct ag_err *e)
{
	char nqn[AG_NQN_MAX + 1];
	struct ag_host *h;
	int rc = -1;

	pthread_rwlock_wrlock(&a->st.lock);
	h = ag_state_host(&a->st, tenant, name);
	if (!h) {
		ag_fail(e, AG_E_NOTFOUND, "no host %s", name);
	} else if (h->nr_exports) {
		ag_fail(e, AG_E_BUSY, "host %s has %zu volumes exported to it: unexport them first",
			name, h->nr_exports);
	} else if (!ag_db_drop_host(a->db, h->key, e)) {
		strcpy(nqn, h->nqn);
		ag_state_drop_host(&a->st, h->key);
		rc = 0;
	}
	pthread_rwlock_unlock(&a->st.lock);
	if (!rc && a->with_kernel) {
		/* not between another converge's mkdir of it and its link */
		pthread_mutex_lock(&a->nvmet_lock);
		ag_nvmet_drop_host(a->nvmet_root, nqn);
		pthread_mutex_unlock(&a->nvmet_lock);
	}
	return rc;
}

int ag_export_add(struct ag_agent *a, const char *volume, const char *host, struct ag_err *e)
{
	struct ag_export *x = calloc(1, sizeof(*x));
	const struct ag_volume *v;
	bool had = false;
	int rc = -1;

	if (!x)
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	snprintf(x->volume, sizeof(x->volume), "%s", volume);
	snprintf(x->host, sizeof(x->host), "%s", host);
	snprintf(x->key, sizeof(x->key), "%s/%s", volume, host);
	pthread_rwlock_wrlock(&a->st.lock);
	v = ag_state_volume(&a->st, volume);
	if (!v) {
		ag_fail(e, AG_E_NOTFOUND, "no volume %s", volume);
	} else if (v->deleting) {
		ag_fail(e, AG_E_BUSY, "volume %s is being deleted", volume);
	} else if (!ag_state_host(&a->st, v->tenant, host)) {
		/* only the volume's own tenant's hosts: another's is as no host */
		ag_fail(e, AG_E_NOTFOUND, "no host %s", host);
	} else if (!ag_export_port(a, v->tenant)->id) {
		ag_fail(e, AG_E_BUSY, "exports are off on this appliance (nvme_listen)");
	} else if (ag_idmap_get(&a->st.exports, x->key)) {
		had = true;
		rc = 0;
	} else if (!ag_db_store_export(a->db, x, e)) {
		if (ag_state_add_export(&a->st, x))
			ag_fail(e, AG_E_INTERNAL, "out of memory (the export is stored: restart to see it)");
		else
			rc = 0;
		if (!rc)
			x = NULL;
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(x);
	if (!rc && !had)
		ag_log("info", "volume %s exported to host %s", volume, host);
	if (!rc && a->with_kernel)
		rc = ag_converge_exports(a, volume, e);
	return rc;
}

int ag_export_delete(struct ag_agent *a, const char *volume, const char *host, struct ag_err *e)
{
	char key[AG_VOLUME_ID_MAX + AG_ID_MAX + 2];
	int rc = -1;

	snprintf(key, sizeof(key), "%s/%s", volume, host);
	pthread_rwlock_wrlock(&a->st.lock);
	if (!ag_idmap_get(&a->st.exports, key)) {
		ag_fail(e, AG_E_NOTFOUND, "volume %s is not exported to host %s", volume, host);
	} else if (!ag_db_drop_export(a->db, key, e)) {
		ag_state_drop_export(&a->st, key);
		rc = 0;
	}
	pthread_rwlock_unlock(&a->st.lock);
	if (!rc)
		ag_log("info", "volume %s unexported from host %s", volume, host);
	if (!rc && a->with_kernel)
		rc = ag_converge_exports(a, volume, e);
	return rc;
}

/* Strings, or objects that begin with one (an export begins with its key). */
static int by_text(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int by_nqn(const void *x, const void *y)
{
	return strcmp(((const struct ag_nvmet_subsys *)x)->nqn, ((const struct ag_nvmet_subsys *)y)->nqn);
}

static int by_host_nqn(const void *x, const void *y)
{
	return strcmp(((const struct ag_nvmet_host *)x)->nqn, ((const struct ag_nvmet_host *)y)->nqn);
}

/* What nvmet should hold: the subsystems, each with its port and hosts. */
struct wanted_set {
	struct ag_nvmet_subsys *subsys;
	size_t n;
	struct ag_nvmet_host *hosts;	/* room for nr_hosts, the subsystems' hosts in it */
	size_t nr_hosts;
};

/*
 * The subsystems wanted, of one volume (volume non-NULL) or of all, each on
 * its port, copied under the state's lock; sorted by NQN. A volume with no
 * export, or being deleted, or whose port is off, has none. Each one's
 * hosts point into w->hosts, one malloc'd array. -1 with e when memory is
 * short: a host left out would be a host cut off.
 */
static int wanted(struct ag_agent *a, const char *volume, struct wanted_set *w, struct ag_err *e)
{
	struct ag_nvmet_subsys *want;
	struct ag_nvmet_host *hosts;
	void **all = NULL;
	size_t i, j, nx, k = 0;
	size_t *n = &w->n;

	memset(w, 0, sizeof(*w));
	pthread_rwlock_rdlock(&a->st.lock);
	nx = a->st.exports.nr;
	if (nx)
		all = ag_idmap_values(&a->st.exports);
	want = calloc(nx + 1, sizeof(*want));
	hosts = calloc(nx + 1, sizeof(*hosts));
	if ((nx && !all) || !want || !hosts) {
		pthread_rwlock_unlock(&a->st.lock);
		free(all);
		free(want);
		free(hosts);
		return ag_fail(e, AG_E_INTERNAL, "out of memory");
	}
	w->subsys = want;
	w->hosts = hosts;
	w->nr_hosts = nx + 1;
	/* by key, "<volume>/<host>": one volume's exports are together */
	qsort(all, nx, sizeof(*all), by_text);
	for (i = 0; i < nx; i = j) {
		const struct ag_export *x = all[i];
		const struct ag_volume *v = ag_state_volume(&a->st, x->volume);
		struct ag_nvmet_subsys *s = &want[*n];

		for (j = i; j < nx && !strcmp(((const struct ag_export *)all[j])->volume, x->volume); j++)
			;
		if (!v || v->deleting || (volume && strcmp(volume, x->volume)))
			continue;
		/* on its tenant's port, or the default; none (id 0): not wanted */
		s->port = *ag_export_port(a, v->tenant);
		if (!s->port.id)
			continue;
		ag_subsys_nqn(a, v->id, s->nqn);
		snprintf(s->device, sizeof(s->device), "/dev/mapper/" AG_DM_PREFIX "%s", v->id);
		ns_uuid(a, v->id, s->uuid);
		s->hosts = &hosts[k];
		for (; i < j; i++) {
			const struct ag_host *h = ag_state_host(&a->st, v->tenant,
								((const struct ag_export *)all[i])->host);

			if (!h)
				continue;
			strcpy(hosts[k].nqn, h->nqn);
			strcpy(hosts[k].dhchap, h->dhchap);
			k++;
			s->nr_hosts++;
		}
		qsort((void *)s->hosts, s->nr_hosts, sizeof(*s->hosts), by_host_nqn);
		(*n)++;
	}
	pthread_rwlock_unlock(&a->st.lock);
	free(all);
	qsort(want, *n, sizeof(*want), by_nqn);
	return 0;
}

/* The secrets copied are wiped before the memory goes back. */
static void wanted_free(struct wanted_set *w)
{
	if (w->hosts)
		memset(w->hosts, 0, w->nr_hosts * sizeof(*w->hosts));
	free(w->hosts);
	free(w->subsys);
}

int ag_converge_exports(struct ag_agent *a, const char *volume, struct ag_err *e)
{
	char nqn[AG_NQN_MAX + 1];
	struct wanted_set w;
	unsigned int changed = 0;
	int rc = -1;

	pthread_mutex_lock(&a->nvmet_lock);
	if (!wanted(a, volume, &w, e)) {
		ag_subsys_nqn(a, volume, nqn);
		rc = ag_nvmet_converge_one(a->nvmet_root, nqn, w.n ? w.subsys : NULL, &changed, e);
		wanted_free(&w);
	}
	pthread_mutex_unlock(&a->nvmet_lock);
	if (changed)
		ag_log("info", "nvmet: %s: %u changes", nqn, changed);
	return rc;
}

int ag_reconcile_exports(struct ag_agent *a, struct ag_err *e)
{
	char prefix[AG_NQN_MAX + 1];
	struct wanted_set w;
	unsigned int changed = 0;
	int rc = -1;

	/* a store never opened for writing has no appliance id, and so no exports of its own */
	if (!ag_db_appliance(a->db)[0])
		return 0;
	snprintf(prefix, sizeof(prefix), AG_NQN_PREFIX "%s:", ag_db_appliance(a->db));
	pthread_mutex_lock(&a->nvmet_lock);
	if (!wanted(a, NULL, &w, e)) {
		rc = ag_nvmet_converge_all(a->nvmet_root, prefix, w.subsys, w.n, &changed, e);
		wanted_free(&w);
	}
	pthread_mutex_unlock(&a->nvmet_lock);
	if (changed)
		ag_log("info", "nvmet: %u changes for %zu exported volumes", changed, w.n);
	return rc;
}
