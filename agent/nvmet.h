/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's NVMe target (nvmet), driven through its configfs tree
 * (/sys/kernel/config/nvmet): one subsystem per exported volume, whose one
 * namespace is the volume's sluice device, reachable from the hosts it is
 * exported to only (allow_any_host 0), on one TCP port.
 *
 *   hosts/<host nqn>/dhchap_key                 its DH-HMAC-CHAP secret, if it has one
 *   subsystems/<nqn>/attr_allow_any_host        0
 *                   /attr_model                 "sluice"
 *                   /allowed_hosts/<host nqn>   -> hosts/<host nqn>
 *                   /namespaces/1/{device_path, device_uuid, device_nguid, enable}
 *   ports/<id>/{addr_trtype, addr_adrfam, addr_traddr, addr_trsvcid}
 *   ports/<id>/subsystems/<nqn>                 -> subsystems/<nqn>
 *
 * Only subsystems whose NQN starts with the appliance's prefix are ours:
 * they are made, repaired and removed; nothing else in the tree is touched
 * but the port and the host entries ours use. configfs does not survive a
 * reboot, so reconcile builds it again from the store, like the dm devices.
 *
 * A host with a secret is admitted only when it authenticates (6.12 and
 * later; where the kernel has no dhchap_key the host is not allowed at
 * all). The secret is written before the host is allowed on a subsystem.
 *
 * A host taken off a subsystem keeps a controller it has connected; so the
 * subsystem is unlinked from the port and linked again, which ends every
 * controller of it (the hosts still allowed reconnect by themselves).
 */
#ifndef SLUICE_AGENT_NVMET_H
#define SLUICE_AGENT_NVMET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhchap.h"
#include "err.h"

#define AG_NVMET_ROOT "/sys/kernel/config/nvmet"
#define AG_NQN_MAX 223		/* NVMe's limit, NUL not counted */
#define AG_NQN_PREFIX "nqn.2026-12.io.sluice:"

struct ag_nvmet_port {
	unsigned int id;	/* ports/<id>; 0: no exports */
	char addr[64];		/* IPv4 or IPv6, as the kernel takes it */
	unsigned int port;
};

/* A tenant's own port (nvme_tenant_listen): its volumes are exported there only. */
#define AG_TENANT_PORTS_MAX 32
struct ag_tenant_port {
	char tenant[64];
	struct ag_nvmet_port port;
};

/* A host allowed on a subsystem. */
struct ag_nvmet_host {
	char nqn[AG_NQN_MAX + 1];
	char dhchap[AG_DHCHAP_MAX + 1];	/* its secret; "" for none */
};

/* One subsystem as it should be. */
struct ag_nvmet_subsys {
	char nqn[AG_NQN_MAX + 1];
	char device[160];		/* the namespace's block device */
	uint8_t uuid[16];		/* the namespace's UUID and NGUID: stable across reboots */
	struct ag_nvmet_port port;	/* the one port it is on (its tenant's, or the default) */
	const struct ag_nvmet_host *hosts;	/* the hosts allowed, sorted by NQN */
	size_t nr_hosts;
};

/* Whether text is an NQN nvmet takes as a host's: "nqn." and printable, no '/'. */
bool ag_nqn_valid(const char *text);

/*
 * Make one subsystem what want says, on want's port and no other (want
 * NULL, or on a port of id 0: remove the subsystem nqn, if it is there).
 * Under root (AG_NVMET_ROOT, or another for tests). *changed counts what
 * was done. AG_E_INTERNAL when nvmet is not there or configfs refuses.
 */
int ag_nvmet_converge_one(const char *root, const char *nqn, const struct ag_nvmet_subsys *want,
			  unsigned int *changed, struct ag_err *e);
/*
 * Every subsystem of ours under root: the wanted ones (sorted by NQN) made
 * as they should be, the others with the prefix removed. One that fails
 * does not stop the others; -1 with the first failure.
 */
int ag_nvmet_converge_all(const char *root, const char *prefix,
			  const struct ag_nvmet_subsys *want, size_t n, unsigned int *changed,
			  struct ag_err *e);
/* Remove hosts/<nqn> if no subsystem allows it (a host deleted). */
void ag_nvmet_drop_host(const char *root, const char *nqn);
/*
 * Whether nvmet under root takes DH-HMAC-CHAP secrets for hosts (6.12 has
 * them; 6.1 does not): a host entry of ours is made, looked at, removed.
 */
bool ag_nvmet_has_auth(const char *root, const char *prefix);

#endif
