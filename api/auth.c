// SPDX-License-Identifier: GPL-2.0
/* Bearer tokens; see auth.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <gnutls/crypto.h>

#include "auth.h"

static void hex_of(const unsigned char *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

int ap_token_new(char *tok)
{
	unsigned char b[AP_TOKEN_LEN / 2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -1;
	hex_of(b, sizeof(b), tok);
	return 0;
}

int ap_token_hash(const char *text, char *hex)
{
	unsigned char d[32];

	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, text, strlen(text), d))
		return -1;
	hex_of(d, sizeof(d), hex);
	return 0;
}

bool ap_equal_ct(const char *a, const char *b, size_t n)
{
	unsigned char diff = 0;

	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return diff == 0;
}

static bool token_shaped(const char *t)
{
	size_t i;

	for (i = 0; t[i]; i++)
		if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
			return false;
	return i == AP_TOKEN_LEN;
}

int ap_admin_token(const char *dir, char *tok, bool *made, char *err, size_t errlen)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/admin.token", dir);
	*made = false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT) {
		if (ap_token_new(tok))
			return snprintf(err, errlen, "no randomness for a token"), -1;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
		if (dprintf(fd, "%s\n", tok) != AP_TOKEN_LEN + 1 || fsync(fd)) {
			close(fd);
			unlink(path);
			return snprintf(err, errlen, "%s: cannot write it", path), -1;
		}
		close(fd);
		*made = true;
		return 0;
	}
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
	n = read(fd, tok, AP_TOKEN_LEN + 1);
	close(fd);
	if (n >= AP_TOKEN_LEN)
		tok[AP_TOKEN_LEN] = '\0';
	else
		tok[0] = '\0';
	if (!token_shaped(tok))
		return snprintf(err, errlen, "%s: not a token (64 hex digits)", path), -1;
	return 0;
}
