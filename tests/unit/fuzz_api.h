/* SPDX-License-Identifier: GPL-2.0 */
/* The API request fuzzer (fuzz_api.c), for its guest binary and the host test. */
#ifndef SLUICE_FUZZ_API_H
#define SLUICE_FUZZ_API_H

/* argv: <name> <state dir> <pool device or -> <count> <seed>; the exit status. */
int fuzz_api_run(int argc, char **argv);

#endif
