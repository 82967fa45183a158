// SPDX-License-Identifier: GPL-2.0
/*
 * DH-HMAC-CHAP secrets: the text nvme-cli makes is taken, a damaged one is
 * not (a CRC that does not hold, a wrong length, hash or form), and the
 * appliance's own are well formed and differ.
 */
#include <string.h>

#include "unit.h"
#include "../../agent/dhchap.h"

/* `nvme gen-dhchap-key --secret=000102...1f -l 32 -m 0` (nvme-cli 2.3) */
#define NVME_CLI_KEY "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:"

static void dhchap_takes_nvme_clis_secrets(void)
{
	CHECK(ag_dhchap_valid(NVME_CLI_KEY));
	/* 48 bytes, made by nvme-cli at random */
	CHECK(ag_dhchap_valid("DHHC-1:00:NRB3nDoy8uYqBGjO7xFnrY2jhnPGlf3IsMlZBx+ivFikQgXatdrSyXEgxGCj"
			      "oUuIe6c2nA==:"));
	/* transformed keys, each as long as its hash (nvme gen-dhchap-key -m 1, 2, 3) */
	CHECK(ag_dhchap_valid("DHHC-1:01:7k75jjiPoRHDUhz91540W4w+ugvhTbrNLyWQxecUe3AzNUk6:"));
	CHECK(ag_dhchap_valid("DHHC-1:02:EGCuYl8Y5Ci5H2Xudx+4FmQVO0t8u6o6gHEjds4d61Kg556xhL9W1F4aGci5"
			      "wkLzoBbB7w==:"));
	CHECK(ag_dhchap_valid("DHHC-1:03:IkHWCx0gMFhDWr4F5TFkixozvwsorhktfMH/aQ4VmFesc5W2Dii8Xdr0vSmt"
			      "j3sQNUO4CzADJ6gH5aBu7i07t+VaVfM=:"));
}

static void dhchap_refuses_damaged_secrets(void)
{
	static const char *const bad[] = {
		"",
		"DHHC-1:00:",
		"DHHC-1:00::",
		/* one key bit changed: the CRC does not hold */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:",
		/* no closing colon */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR",
		/* hash 04 does not exist; 1 is no two-digit field */
		"DHHC-1:04:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-1:1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		"DHHC-2:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		/* 28 bytes: a key of 24 */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:",
		/* not base64 */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kfi*R:",
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kfi=R:",
		/* a 48-byte key said to be SHA-256's (32), and a 32-byte one SHA-512's */
		"DHHC-1:01:NRB3nDoy8uYqBGjO7xFnrY2jhnPGlf3IsMlZBx+ivFikQgXatdrSyXEgxGCjoUuIe6c2nA==:",
		"DHHC-1:03:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:",
		/* a newline inside, as a careless paste would */
		"DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!ag_dhchap_valid(bad[i]));
}

static void dhchap_generates_valid_distinct_secrets(void)
{
	char a[AG_DHCHAP_MAX + 1], b[AG_DHCHAP_MAX + 1];

	CHECK(ag_dhchap_generate(a) == 0 && ag_dhchap_generate(b) == 0);
	CHECK(ag_dhchap_valid(a) && ag_dhchap_valid(b));
	CHECK(strlen(a) == strlen(NVME_CLI_KEY) && !strncmp(a, "DHHC-1:00:", 10));
	CHECK(strcmp(a, b));
}

static const struct unit_test tests[] = {
	UNIT_TEST(dhchap_takes_nvme_clis_secrets),
	UNIT_TEST(dhchap_refuses_damaged_secrets),
	UNIT_TEST(dhchap_generates_valid_distinct_secrets),
};

UNIT_MAIN("dhchap", tests)
