/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bearer tokens. A token is 32 random bytes in hex (64 characters). The
 * admin token lives in <state dir>/admin.token (mode 0600, made on first
 * start), the monitoring token, when the admin has made one, in
 * <state dir>/monitor.token; tenant tokens are shown once, when the tenant
 * is created or its token replaced, and only their SHA-256 is stored.
 * Comparisons are of hashes, in constant time. Each can be replaced, and
 * the old one stops working at once.
 */
#ifndef SLUICE_API_AUTH_H
#define SLUICE_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#define AP_TOKEN_LEN 64
#define AP_HASH_HEX 64

/* A new token into tok (AP_TOKEN_LEN + 1 bytes). 0, or -1 (no randomness). */
int ap_token_new(char *tok);
/* The SHA-256 of text, in hex, into hex (AP_HASH_HEX + 1 bytes). */
int ap_token_hash(const char *text, char *hex);
/* a == b for two strings of length n, in time that depends only on n. */
bool ap_equal_ct(const char *a, const char *b, size_t n);

/*
 * A token in dir/name (mode 0600), written whole: a synced temporary file
 * renamed over it, then the directory synced. 0, or -1 with err.
 */
int ap_token_file_write(const char *dir, const char *name, const char *tok, char *err,
			size_t errlen);
/* The token in dir/name: 1 read, 0 none (missing or empty), -1 with err. */
int ap_token_file_read(const char *dir, const char *name, char *tok, char *err, size_t errlen);

/*
 * The admin token of dir: read from dir/admin.token, or made there (0600,
 * written whole: a synced file renamed into place) when it does not exist
 * or is empty; *made tells which. 0, or -1 with err.
 */
int ap_admin_token(const char *dir, char *tok, bool *made, char *err, size_t errlen);

#endif
