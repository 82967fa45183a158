// SPDX-License-Identifier: GPL-2.0
/* The agent's durable state; see store.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

uint32_t ag_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	int k;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

int ag_store_open(struct ag_store *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	s->dir = strdup(dir);
	if (!s->dir || asprintf(&s->path, "%s/state.json", dir) < 0) {
		free(s->dir);
		s->dir = NULL;
		return -ENOMEM;
	}
	return 0;
}

void ag_store_close(struct ag_store *s)
{
	free(s->dir);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

/* The checksum covers generation and state, serialized canonically. */
static int body_crc(uint64_t generation, json_t *state, uint32_t *crc)
{
	json_t *body = json_pack("{s:I, s:O}", "generation", (json_int_t)generation,
				 "state", state);
	char *text;

	if (!body)
		return -1;
	text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
	if (!text)
		return -1;
	*crc = ag_crc32c(0, text, strlen(text));
	free(text);
	return 0;
}

static int fail(struct ag_store *s, char *err, size_t errlen, const char *fmt,
		const char *detail)
{
	snprintf(err, errlen, fmt, s->path, detail);
	return -1;
}

int ag_store_load(struct ag_store *s, json_t **state, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *doc, *st;
	const char *format = NULL, *sum = NULL;
	json_int_t version = 0, gen = -1;
	char want[16];
	uint32_t crc;

	*state = NULL;
	s->poisoned = true;
	if (access(s->path, F_OK) && errno == ENOENT) {
		s->poisoned = false;
		s->generation = 0;
		*state = json_object();
		return *state ? 0 : fail(s, err, errlen, "%s: %s", "out of memory");
	}
	doc = json_load_file(s->path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return fail(s, err, errlen, "%s: not a JSON document: %s", jerr.text);
	if (json_unpack(doc, "{s:s, s:I, s:I, s:s, s:o}", "format", &format,
			"version", &version, "generation", &gen, "checksum", &sum,
			"state", &st) || !json_is_object(st)) {
		json_decref(doc);
		return fail(s, err, errlen, "%s: %s", "not a sluice state document");
	}
	if (strcmp(format, AG_STORE_FORMAT) || version != AG_STORE_VERSION || gen < 0) {
		json_decref(doc);
		return fail(s, err, errlen, "%s: %s", "unknown format or version");
	}
	if (body_crc((uint64_t)gen, st, &crc)) {
		json_decref(doc);
		return fail(s, err, errlen, "%s: %s", "out of memory");
	}
	snprintf(want, sizeof(want), "%08" PRIx32, crc);
	if (strcmp(want, sum)) {
		json_decref(doc);
		return fail(s, err, errlen, "%s: %s", "checksum mismatch (corrupt)");
	}
	*state = json_incref(st);
	json_decref(doc);
	s->generation = (uint64_t)gen;
	s->poisoned = false;
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int ag_store_save(struct ag_store *s, json_t *state, char *err, size_t errlen)
{
	uint64_t gen = s->generation + 1;
	char sum[16], *text = NULL, *tmp = NULL;
	json_t *doc = NULL;
	uint32_t crc;
	int fd = -1, dfd = -1, rc = -1;

	if (s->poisoned)
		return fail(s, err, errlen, "%s: %s",
			    "not written: the document on disk could not be loaded");
	if (body_crc(gen, state, &crc))
		return fail(s, err, errlen, "%s: %s", "out of memory");
	snprintf(sum, sizeof(sum), "%08" PRIx32, crc);
	doc = json_pack("{s:s, s:i, s:I, s:s, s:O}", "format", AG_STORE_FORMAT,
			"version", AG_STORE_VERSION, "generation", (json_int_t)gen,
			"checksum", sum, "state", state);
	text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
	if (!text || asprintf(&tmp, "%s.tmp", s->path) < 0) {
		tmp = NULL;
		fail(s, err, errlen, "%s: %s", "out of memory");
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, text, strlen(text)) || write_all(fd, "\n", 1) ||
	    fsync(fd)) {
		fail(s, err, errlen, "%s: writing the new document: %s", strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		fail(s, err, errlen, "%s: closing the new document: %s", strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, s->path)) {
		fail(s, err, errlen, "%s: renaming the new document: %s", strerror(errno));
		goto out;
	}
	dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd)) {
		fail(s, err, errlen, "%s: syncing its directory: %s", strerror(errno));
		goto out;
	}
	s->generation = gen;
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	if (dfd >= 0)
		close(dfd);
	free(tmp);
	free(text);
	json_decref(doc);
	return rc;
}
