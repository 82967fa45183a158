// SPDX-License-Identifier: GPL-2.0
/* sluice-fuzz-api: see fuzz_api.c. */
#include "fuzz_api.h"

int main(int argc, char **argv)
{
	return fuzz_api_run(argc, argv);
}
