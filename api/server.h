/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sluiced's daemon mode: reconcile, then serve the API until SIGTERM or
 * SIGINT (the request in flight is finished; devices stay up). SIGHUP reads
 * the configuration again and, if it is good, listens anew by it; a bad one
 * is logged and the old one kept. With NOTIFY_SOCKET set (systemd
 * Type=notify) READY=1 is sent once the API listens.
 */
#ifndef SLUICE_API_SERVER_H
#define SLUICE_API_SERVER_H

/* state_dir overrides the configuration's when not NULL. Returns the exit status. */
int ap_serve(const char *config_path, const char *state_dir);

#endif
