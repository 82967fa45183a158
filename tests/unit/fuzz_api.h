/* SPDX-License-Identifier: GPL-2.0 */
/* The API request fuzzer (fuzz_api.c), for its guest binary and the host test. */
#ifndef SLUICE_FUZZ_API_H
#define SLUICE_FUZZ_API_H

#include <stddef.h>

/* argv: <name> <state dir> <pool device or -> <count> <seed>; the exit status. */
int fuzz_api_run(int argc, char **argv);

/* Every row of the store in dir, as text, in a malloc'd buffer of *len bytes. */
char *fuzz_api_state(const char *dir, size_t *len);

#endif
