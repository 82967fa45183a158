// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the sluice table/message parser. The input is split
 * into words as dm splits a table line; both parse modes run on it. Checked:
 * no crash or undefined behaviour; a rejection always carries an error; an
 * accepted config formats, and its canonical form parses back to itself; and
 * the throttle arithmetic under the accepted limits stays sane.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../dmtarget/sluice-core.h"

#define MAXW 64

static void check(int cond)
{
	if (!cond)
		abort();
}

static void round_trip(const struct sl_config *cfg)
{
	char out[SL_FORMAT_MAX], again[SL_FORMAT_MAX], copy[SL_FORMAT_MAX];
	char *argv[MAXW], *p;
	const char *err, *bad;
	struct sl_config back;
	unsigned int n = 0;
	int words = sl_config_format(cfg, out, sizeof(out));

	check(words >= 0);
	memcpy(copy, out, sizeof(out));
	for (p = strtok(copy, " "); p; p = strtok(NULL, " "))
		argv[n++] = p;
	check((int)n == words);
	sl_config_init(&back);
	check(sl_config_parse(&back, SL_PARSE_TABLE, n, argv, &err, &bad) == 0);
	check(sl_config_format(&back, again, sizeof(again)) == words);
	check(!strcmp(out, again));
}

static void exercise_throttle(const struct sl_config *cfg, const uint8_t *data, size_t size)
{
	struct sl_limits lim;
	struct sl_throttle t;
	u64 now = 1;

	sl_limits_from_config(&lim, cfg);
	sl_throttle_init(&t);
	for (size_t i = 0; i < size && i < 256; i++) {
		enum sl_dir dir = data[i] & 1 ? SL_WRITE : SL_READ;
		bool bytes = !(data[i] & 2);
		u64 w = sl_throttle_wait(&t, &lim, now, dir, bytes);

		if (!lim.any)
			check(w == 0);
		now += (u64)data[i] << (data[i] % 40);
		sl_throttle_charge(&t, &lim, now, dir, (u64)data[i] << 12, bytes);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAXW], *p;
	const char *err = NULL, *bad = NULL;
	struct sl_config cfg, base;
	unsigned int n = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (p = strtok(buf, " \n\t"); p && n < MAXW; p = strtok(NULL, " \n\t"))
		argv[n++] = p;

	sl_config_init(&cfg);
	if (sl_config_parse(&cfg, SL_PARSE_TABLE, n, argv, &err, &bad) == 0) {
		round_trip(&cfg);
		exercise_throttle(&cfg, data, size);
	} else {
		check(err && *err);
	}

	/* The same words as a "set" over a config with read/write limits. */
	sl_config_init(&base);
	base.avg[SL_RBPS] = 1000;
	base.avg[SL_WIOPS] = 10;
	cfg = base;
	err = NULL;
	if (sl_config_parse(&cfg, SL_PARSE_SET, n, argv, &err, &bad) == 0)
		round_trip(&cfg);
	else
		check(err && *err);
	free(buf);
	return 0;
}
