// SPDX-License-Identifier: GPL-2.0
/* Bearer tokens; see auth.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
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

int ap_token_file_write(const char *dir, const char *name, const char *tok, char *err,
			size_t errlen)
{
	char path[4096], tmp[4200];
	int fd, dfd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", tmp, strerror(errno)), -1;
	ok = dprintf(fd, "%s\n", tok) == AP_TOKEN_LEN + 1 && !fsync(fd);
	if (close(fd) || !ok || rename(tmp, path)) {
		unlink(tmp);
		return snprintf(err, errlen, "%s: cannot write it", path), -1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd)) {
		if (dfd >= 0)
			close(dfd);
		return snprintf(err, errlen, "%s: cannot sync its directory", dir), -1;
	}
	close(dfd);
	return 0;
}

int ap_token_file_read(const char *dir, const char *name, char *tok, char *err, size_t errlen)
{
	char path[4096];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	/* missing, or empty: what a crash in the old in-place write left */
	if ((fd < 0 && errno == ENOENT) ||
	    (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size == 0)) {
		if (fd >= 0)
			close(fd);
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
	return 1;
}

int ap_admin_token(const char *dir, char *tok, bool *made, char *err, size_t errlen)
{
	int rc = ap_token_file_read(dir, "admin.token", tok, err, errlen);

	*made = false;
	if (rc)
		return rc > 0 ? 0 : -1;
	/* written whole: a crash in an in-place write once left an empty file */
	if (ap_token_new(tok))
		return snprintf(err, errlen, "no randomness for a token"), -1;
	if (ap_token_file_write(dir, "admin.token", tok, err, errlen))
		return -1;
	*made = true;
	return 0;
}
