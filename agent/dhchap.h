/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DH-HMAC-CHAP secrets (NVMe in-band authentication) in their text form,
 * as nvme-cli and nvmet's configfs take them:
 *
 *   DHHC-1:<hh>:<base64 of the key and its CRC-32>:
 *
 * hh is 00 (the key as is) or 01, 02, 03 (the key transformed with SHA-256,
 * -384 or -512 and the host's NQN before use); the key is 32, 48 or 64
 * bytes (with 01, 02, 03: 32, 48, 64, the hash's length), followed by the
 * CRC-32 (IEEE 802.3) of those bytes, little-endian.
 */
#ifndef SLUICE_AGENT_DHCHAP_H
#define SLUICE_AGENT_DHCHAP_H

#include <stdbool.h>
#include <stddef.h>

/* "DHHC-1:00:" + base64 of 68 bytes + ":" */
#define AG_DHCHAP_MAX 104

/* Whether text is a well-formed secret whose CRC holds. */
bool ag_dhchap_valid(const char *text);
/* A new secret of 32 random bytes, not transformed (hh 00). -1 with no random bytes. */
int ag_dhchap_generate(char out[AG_DHCHAP_MAX + 1]);

#endif
