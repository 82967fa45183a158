// SPDX-License-Identifier: GPL-2.0
/*
 * sluiced's program: the agent's command line (agent/daemon.h) with the
 * HTTP API as the daemon's frontend. The agent does not depend on the API;
 * this file joins them.
 */
#include "../agent/daemon.h"
#include "server.h"

static const struct ag_frontend http_api = {
	.start = ap_start,
	.stop = ap_stop,
};

int main(int argc, char **argv)
{
	return ag_main(argc, argv, &http_api);
}
