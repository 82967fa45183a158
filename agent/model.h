/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's model of pools, tenants and volumes, as kept in the store's
 * "state" object (schema version 1):
 *
 *   "pools":   { "<name>": { "device": "/dev/...", "extents": N,
 *                         "uuid": "<its label's>", "capacity_iops": N,
 *                         "capacity_bps": N (each optional) } }
 *   "tenants": { "<id>": { "token_sha256": "<hex>", "ceilings": {...},
 *                          "quotas": {...} (each optional) } }
 *   "volumes": { "<id>": { "tenant": "<id>", "name": "<its tenant's name for it>",
 *                          "pool": "<name>",
 *                          "size": <bytes, a multiple of 512; of AG_SIZE_ALIGN when made or grown>,
 *                          "runs": [[<first extent>, <count>], ...],
 *                          "policy": "<sluice table arguments>",
 *                          "agent_policy": "<words>",       (optional)
 *                          "state": "ready" | "deleting" } }
 *   "hosts":   { "<tenant>/<name>": { "nqn": "<the host's NQN>" } }
 *   "exports": { "<volume id>/<host name>": {} }
 *
 * Names and ids are 1 to 48 of [a-z0-9-], not ending in "-data". A
 * volume's name is its tenant's: two tenants may each have a "db". Its id,
 * which names its devices, is "<tenant>.<name>" (a '.' is in no name, so
 * ids never collide); a volume made before names were scoped keeps its
 * name as its id. The name is what the id says, so it is not stored;
 * "name", if given, must be that. "policy"
 * holds the target's arguments in force (without pool and tenant, which
 * come from the volume) and "agent_policy" the agent's own words: see
 * policy.h, which reads and writes them.
 */
#ifndef SLUICE_AGENT_MODEL_H
/*
 * What a volume's size must be a multiple of when it is made or grown: the
 * largest logical block size of a disk (4Kn). A table whose length is not a
 * multiple of the disk's block size is refused by the kernel, after the
 * store had recorded the volume. Volumes stored before keep 512.
 */
#define AG_SIZE_ALIGN 4096
/* The largest volume: 2^56 bytes (64 PiB), far from where extent counts overflow. */
#define AG_SIZE_MAX ((uint64_t)1 << 56)

#define SLUICE_AGENT_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhchap.h"
#include "extent.h"
#include "label.h"
#include "nvmet.h"
#include "policy.h"
#include "quotas.h"

#define AG_ID_MAX 48
/* A volume's id: "<tenant>.<name>", or a name of before (see above). */
#define AG_VOLUME_ID_MAX (2 * AG_ID_MAX + 1)
#define AG_POLICY_MAX SL_FORMAT_MAX	/* the longest policy text, NUL included */
#define AG_APOLICY_MAX 256	/* the longest agent_policy text, NUL included */

struct ag_pool {
	char name[AG_ID_MAX + 1];
	char device[256];	/* where it was last found (canonical) */
	uint64_t extents;
	char uuid[AG_UUID_TEXT];	/* its label's (label.h); "" for one made before labels */
	/* what the disk can do, as the admin declared it (0: not declared) */
	uint64_t capacity_iops, capacity_bps;
	/* in the agent's state, not stored: */
	uint64_t reserved_iops, reserved_bps;	/* its volumes' reservations, summed */
	struct ag_extmap map;	/* the extents in use */
	dev_t devno;		/* the disk it was found on, 0 until found */
	bool missing;		/* its label is on no disk: its volumes are down */
};

#define AG_HASH_HEX 64		/* a token's SHA-256, in hex */

struct ag_tenant {
	char id[AG_ID_MAX + 1];
	char token_sha256[AG_HASH_HEX + 1];	/* "" for none: no token reaches it */
	struct ag_ceilings ceilings;
	struct ag_quotas quotas;
	/* in the agent's state: its volumes and their sizes, deleting ones too */
	size_t nr_volumes;
	uint64_t used_bytes;
	uint64_t reserved_iops, reserved_bps;
};

enum ag_vol_state {
	AG_VOL_READY,
	AG_VOL_DELETING,	/* its devices go, its extents are zeroed, then it is dropped */
};

struct ag_volume {
	char id[AG_VOLUME_ID_MAX + 1];	/* global: its devices' names */
	char name[AG_ID_MAX + 1];	/* its tenant's name for it, unique in the tenant */
	char tenant[AG_ID_MAX + 1];
	/* "<tenant>/<name>": its key in the state's map of names */
	char scoped[2 * AG_ID_MAX + 2];
	char pool[AG_ID_MAX + 1];
	uint64_t size;
	struct ag_run *runs;
	size_t nr_runs;
	struct ag_policy policy;	/* as its owner asked: in force at size, in pool */
	bool deleting;
	/* a delete's progress: bytes of its runs (in order) zeroed, durable */
	uint64_t wiped;
	int64_t deleting_since;		/* CLOCK_REALTIME seconds */
	/* not stored: the delete job's tries since the start and its last failure */
	unsigned int attempts;
	int64_t retry_at;		/* CLOCK_MONOTONIC ms: not before */
	uint64_t changed;		/* the state's generation when it was last changed */
	size_t nr_exports;		/* hosts it is exported to: not deleted while any */
	char last_error[160];
};

/* A tenant's host, which its volumes are exported to over NVMe/TCP. */
struct ag_host {
	char key[2 * AG_ID_MAX + 2];	/* "<tenant>/<name>" */
	char tenant[AG_ID_MAX + 1];
	char name[AG_ID_MAX + 1];	/* unique in its tenant */
	char nqn[AG_NQN_MAX + 1];	/* unique on the appliance: it is what nvmet admits */
	/*
	 * Its DH-HMAC-CHAP secret ("" for none): with one, nvmet admits the
	 * host only when it proves it knows it. Kept as is, because the
	 * kernel needs it in clear; shown only when it is made.
	 */
	char dhchap[AG_DHCHAP_MAX + 1];
	/* in the agent's state: the volumes exported to it */
	size_t nr_exports;
};

/* A volume exported to a host of its tenant. */
struct ag_export {
	char key[AG_VOLUME_ID_MAX + AG_ID_MAX + 2];	/* "<volume id>/<host name>" */
	char volume[AG_VOLUME_ID_MAX + 1];
	char host[AG_ID_MAX + 1];
};

/* A whole state as arrays: what an imported document holds. */
struct ag_model {
	struct ag_pool *pools;
	size_t nr_pools;
	struct ag_tenant *tenants;
	size_t nr_tenants;
	struct ag_volume *vols;
	size_t nr_vols;
	struct ag_host *hosts;
	size_t nr_hosts;
	struct ag_export *exports;
	size_t nr_exports;
};

bool ag_valid_id(const char *id);
/* A volume's id: a valid id, or two joined by '.'. */
bool ag_valid_volume_id(const char *id);
/*
 * The id of a new volume of tenant named name (both valid ids), and its
 * key in the map of names; buffers of AG_VOLUME_ID_MAX + 1 and
 * 2 * AG_ID_MAX + 2.
 */
void ag_volume_id_of(char *id, const char *tenant, const char *name);
void ag_volume_scoped(char *key, const char *tenant, const char *name);

/* Read and check a state object. 0, or -1 with a message in err. */
int ag_model_from_json(struct ag_model *m, json_t *state, char *err, size_t errlen);
void ag_model_free(struct ag_model *m);

const struct ag_pool *ag_model_pool(const struct ag_model *m, const char *name);

/*
 * The tables of a volume as the kernel prints them: data over the pool's
 * device (pool_devno "maj:min"), sluice over the data device (data_dev, its
 * "maj:min" once it exists, else its /dev/mapper path).
 */
int ag_data_table(const struct ag_volume *v, const char *pool_devno, char *buf,
		  size_t len);
/*
 * The sluice table of v; with its tenant's rate quotas (group_rates, six,
 * NULL or all 0 for none), in the tenant's group (AG_GROUP_PREFIX and its
 * id) with them as the group's limits.
 */
int ag_sluice_table(const struct ag_volume *v, const uint64_t *group_rates, const char *data_dev,
		    char *buf, size_t len);
#define AG_GROUP_PREFIX "tenant."

#endif
