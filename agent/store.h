/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's durable state: one JSON document in <dir>/state.json,
 *   {"format": "sluice-state", "version": 1, "generation": N,
 *    "checksum": "<crc32c of the rest, compact, keys sorted>", "state": {...}}
 * written whole to a temporary file, fsynced, renamed over the old one, and
 * the directory fsynced: after ag_store_save() returns, the new document
 * survives a crash or power loss, and before it, the old one is intact.
 *
 * A document that does not parse, is of another format or version, or whose
 * checksum does not match is an error: the caller stops, and the file is
 * never written over (ag_store_save() refuses while the last load failed).
 */
#ifndef SLUICE_AGENT_STORE_H
#define SLUICE_AGENT_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AG_STORE_FORMAT "sluice-state"
#define AG_STORE_VERSION 1

struct ag_store {
	char *dir;
	char *path;		/* <dir>/state.json */
	uint64_t generation;	/* of the document last loaded or saved */
	bool poisoned;		/* the last load failed: never write */
};

/* Open the store in dir (created if missing); no I/O on the document. */
int ag_store_open(struct ag_store *s, const char *dir);
void ag_store_close(struct ag_store *s);

/*
 * Load the document's "state" into *state (a new reference; an empty object
 * if there is no document yet). On error returns -1 with a message in err.
 */
int ag_store_load(struct ag_store *s, json_t **state, char *err, size_t errlen);

/* Save state as the next generation. 0, or -1 with a message in err. */
int ag_store_save(struct ag_store *s, json_t *state, char *err, size_t errlen);

/* crc32c, exposed for the tests */
uint32_t ag_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
