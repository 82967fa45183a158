// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-tlsprobe <ipv4> <port> <GnuTLS priority string>: one TLS handshake
 * offering only what the priority string allows, without checking the
 * certificate. Prints "ok <version> <cipher> <SHA-256 of the certificate>"
 * and exits 0 when the server took it, "refused <why>" and exits 1 when it
 * did not, 2 on a usage or connection error. A guest test tool: which
 * versions and suites a server negotiates, and which certificate it serves.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gnutls/gnutls.h>

int main(int argc, char **argv)
{
	gnutls_certificate_credentials_t cred;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const gnutls_datum_t *chain;
	unsigned char digest[32];
	size_t dlen = sizeof(digest);
	gnutls_session_t s;
	unsigned int n = 0;
	const char *at = NULL;
	int fd, rc;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
		return fprintf(stderr, "usage: sluice-tlsprobe <ipv4> <port> <priorities>\n"), 2;
	sa.sin_port = htons((unsigned short)atoi(argv[2]));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return perror("connect"), 2;
	gnutls_global_init();
	gnutls_certificate_allocate_credentials(&cred);
	gnutls_init(&s, GNUTLS_CLIENT);
	if (gnutls_priority_set_direct(s, argv[3], &at))
		return fprintf(stderr, "bad priorities at %s\n", at ? at : "?"), 2;
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
	gnutls_transport_set_int(s, fd);
	do {
		rc = gnutls_handshake(s);
	} while (rc < 0 && !gnutls_error_is_fatal(rc));
	if (rc < 0) {
		printf("refused %s\n", gnutls_strerror(rc));
		return 1;
	}
	chain = gnutls_certificate_get_peers(s, &n);
	if (!n || gnutls_fingerprint(GNUTLS_DIG_SHA256, &chain[0], digest, &dlen))
		return printf("refused no certificate\n"), 1;
	printf("ok %s %s ", gnutls_protocol_get_name(gnutls_protocol_get_version(s)),
	       gnutls_cipher_get_name(gnutls_cipher_get(s)));
	for (size_t i = 0; i < dlen; i++)
		printf("%02x", digest[i]);
	printf("\n");
	gnutls_bye(s, GNUTLS_SHUT_RDWR);
	close(fd);
	return 0;
}
