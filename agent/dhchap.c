// SPDX-License-Identifier: GPL-2.0
/* DH-HMAC-CHAP secrets in their text form; see dhchap.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "dhchap.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* n bytes as padded base64 into out (4 * ((n + 2) / 3) + 1 bytes). */
static void encode(const uint8_t *p, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		*out++ = b64[v >> 18 & 63];
		*out++ = b64[v >> 12 & 63];
		*out++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*out++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*out = '\0';
}

/* Padded base64 of len characters into out (at most max bytes): the byte count, or -1. */
static long decode(const char *text, size_t len, uint8_t *out, size_t max)
{
	size_t i, n = 0, pad = 0;

	if (!len || len % 4)
		return -1;
	for (i = 0; i < len; i += 4) {
		uint32_t v = 0;
		int k;

		for (k = 0; k < 4; k++) {
			const char *c = text[i + k] ? strchr(b64, text[i + k]) : NULL;

			if (text[i + k] == '=' && i + 4 == len && k >= 2 &&
			    (k == 3 || text[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (!c || pad)
				return -1;
			v = v << 6 | (uint32_t)(c - b64);
		}
		if (n + 3 - pad > max)
			return -1;
		out[n++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[n++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[n++] = (uint8_t)v;
	}
	return (long)n;
}

bool ag_dhchap_valid(const char *text)
{
	uint8_t raw[72];
	size_t len;
	uint32_t crc;
	long n;
	char hash;

	if (strncmp(text, "DHHC-1:0", 8) || text[8] < '0' || text[8] > '3' || text[9] != ':')
		return false;
	hash = text[8];
	text += 10;
	len = strlen(text);
	if (len < 2 || text[len - 1] != ':')
		return false;
	n = decode(text, len - 1, raw, sizeof(raw));
	if (n != 36 && n != 52 && n != 68)
		return false;
	/*
	 * A transformed key is as long as its hash (01 SHA-256: 32 bytes, 02
	 * SHA-384: 48, 03 SHA-512: 64), as nvme-cli makes them; a kernel may
	 * size its buffers by the hash and read past a shorter key.
	 */
	if (hash != '0' && n != 36 + 16 * (hash - '1'))
		return false;
	n -= 4;
	crc = (uint32_t)raw[n] | (uint32_t)raw[n + 1] << 8 | (uint32_t)raw[n + 2] << 16 |
	      (uint32_t)raw[n + 3] << 24;
	return crc == crc32_ieee(raw, (size_t)n);
}

int ag_dhchap_generate(char out[AG_DHCHAP_MAX + 1])
{
	uint8_t raw[36];
	uint32_t crc;

	if (getrandom(raw, 32, 0) != 32)
		return -1;
	crc = crc32_ieee(raw, 32);
	raw[32] = (uint8_t)crc;
	raw[33] = (uint8_t)(crc >> 8);
	raw[34] = (uint8_t)(crc >> 16);
	raw[35] = (uint8_t)(crc >> 24);
	memcpy(out, "DHHC-1:00:", 10);
	encode(raw, sizeof(raw), out + 10);
	strcat(out, ":");
	memset(raw, 0, sizeof(raw));
	return 0;
}
