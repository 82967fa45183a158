// SPDX-License-Identifier: GPL-2.0
/*
 * sluicectl: the command-line client of sluiced's API (see usage()).
 *
 * The server is $SLUICE_URL or --url (default http://127.0.0.1:8080); the
 * token is --token, $SLUICE_TOKEN, --token-file, or the admin token file
 * /var/lib/sluice/admin.token when readable. Output is readable text, or
 * the server's JSON with --json. Exit status: 0 done, 1 refused by the
 * server (4xx, its problem detail on stderr), 2 usage, 3 no answer from the
 * server, 4 the server failed (5xx).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <curl/curl.h>
#include <jansson.h>

#define ADMIN_TOKEN_FILE "/var/lib/sluice/admin.token"

struct opts {
	const char *url;
	char token[256];
	const char *if_match;
	bool json;
	bool insecure;
	const char *cacert;
	const char *content_type;
};

struct reply {
	long status;
	char *body;
	size_t len;
	char etag[64];
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	char *nb = realloc(r->body, r->len + size * n + 1);

	if (!nb)
		return 0;
	r->body = nb;
	memcpy(r->body + r->len, p, size * n);
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t len = size * n;

	if (len > 6 && !strncasecmp(p, "ETag: ", 6)) {
		size_t k = len - 6;

		while (k && (p[6 + k - 1] == '\r' || p[6 + k - 1] == '\n'))
			k--;
		if (k < sizeof(r->etag)) {
			memcpy(r->etag, p + 6, k);
			r->etag[k] = '\0';
		}
	}
	return len;
}

/* One request; 0 with r filled, or 3 when there was no answer. */
static int request(const struct opts *o, const char *method, const char *path,
		   const char *body, struct reply *r)
{
	char url[2048], auth[300], im[128];
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	if (!c)
		return 3;
	snprintf(url, sizeof(url), "%s%s", o->url, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	/* plain http goes to this machine only (safe_for_token), never through a proxy */
	if (!strncasecmp(o->url, "http://", 7))
		curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (o->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (o->cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
	if (o->token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", o->token);
		h = curl_slist_append(h, auth);
	}
	if (o->if_match) {
		snprintf(im, sizeof(im), "If-Match: %s", o->if_match);
		h = curl_slist_append(h, im);
	}
	if (body) {
		char ct[160];

		snprintf(ct, sizeof(ct), "Content-Type: %s",
			 o->content_type ? o->content_type : "application/json");
		h = curl_slist_append(h, ct);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		fprintf(stderr, "sluicectl: %s: %s\n", url, curl_easy_strerror(rc));
		return 3;
	}
	return 0;
}

static int exit_of(long status)
{
	return status < 400 ? 0 : status < 500 ? 1 : 4;
}

/* Print a problem's detail, or the body, to stderr; the exit status. */
static int refused(const struct reply *r)
{
	json_t *j = json_loads(r->body ? r->body : "", 0, NULL);
	const char *title = json_string_value(json_object_get(j, "title"));
	const char *detail = json_string_value(json_object_get(j, "detail"));

	if (title)
		fprintf(stderr, "sluicectl: %ld %s: %s\n", r->status, title, detail ? detail : "");
	else
		fprintf(stderr, "sluicectl: %ld %s\n", r->status, r->body ? r->body : "");
	json_decref(j);
	return exit_of(r->status);
}

static void print_value(const char *indent, const char *key, json_t *v)
{
	const char *k;
	json_t *x;
	char *s;

	if (json_is_object(v) && json_object_size(v)) {
		printf("%s%s:\n", indent, key);
		json_object_foreach(v, k, x) {
			char in[64];

			snprintf(in, sizeof(in), "%s  ", indent);
			print_value(in, k, x);
		}
		return;
	}
	s = json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_COMPACT |
									 JSON_ENCODE_ANY);
	printf("%s%s: %s\n", indent, key, s ? s : "");
	free(s);
}

/* Readable output: an object's fields, or a page's items one a line. */
static void print_text(json_t *j)
{
	json_t *items = json_object_get(j, "items"), *it, *v;
	const char *k;
	size_t i;

	if (!json_is_array(items)) {
		json_object_foreach(j, k, v)
			print_value("", k, v);
		return;
	}
	json_array_foreach(items, i, it) {
		bool first = true;

		json_object_foreach(it, k, v) {
			char *s = json_is_string(v) ? strdup(json_string_value(v)) :
				  json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

			printf("%s%s=%s", first ? "" : " ", k, s ? s : "");
			free(s);
			first = false;
		}
		putchar('\n');
	}
	if (json_is_string(json_object_get(j, "next")))
		printf("(more after %s: --after %s)\n", json_string_value(json_object_get(j, "next")),
		       json_string_value(json_object_get(j, "next")));
}

static int call(const struct opts *o, const char *method, const char *path, json_t *body)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct reply r;
	json_t *j;
	int rc;

	json_decref(body);
	rc = request(o, method, path, text, &r);
	free(text);
	if (rc)
		return rc;
	if (r.status >= 400) {
		rc = refused(&r);
	} else if (r.len) {
		j = json_loads(r.body, 0, NULL);
		if (o->json || !j)
			fputs(r.body, stdout), putchar('\n');
		else
			print_text(j);
		if (r.etag[0] && !o->json)
			printf("etag: %s\n", r.etag);
		json_decref(j);
	}
	free(r.body);
	return rc;
}

/* 1G, 512M, 64k (binary) or bytes */
static bool size_arg(const char *s, json_int_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;

	if (end == s || *s == '-')
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || v > (1ULL << (62 - shift)))
		return false;
	*out = (json_int_t)(v << shift);
	return true;
}

/* field=value words into an object; "null" removes (for PATCH). */
static json_t *fields(int n, char **w)
{
	json_t *o = json_object();

	for (int i = 0; i < n; i++) {
		char *eq = strchr(w[i], '='), *end;
		long long v;

		if (!eq || eq == w[i]) {
			fprintf(stderr, "sluicectl: '%s': not field=value\n", w[i]);
			json_decref(o);
			return NULL;
		}
		*eq = '\0';
		v = strtoll(eq + 1, &end, 10);
		if (!strcmp(eq + 1, "null"))
			json_object_set_new(o, w[i], json_null());
		else if (*end || end == eq + 1)
			json_object_set_new(o, w[i], json_string(eq + 1));
		else
			json_object_set_new(o, w[i], json_integer(v));
	}
	return o;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sluicectl [--url URL] [--token T | --token-file F] [--json] [--if-match ETAG]\n"
		"                 [--cacert PEM | --insecure] <command>\n"
		"  health\n"
		"  pool list | pool show <name> | pool add <name> <device> [force]\n"
		"  tenant list | tenant show <id> | tenant delete <id>\n"
		"  tenant create <id> [<field>=<max> ...]        ceilings; prints the token once\n"
		"  tenant token <id>                             a new token (the old stops at once)\n"
		"  token admin | token monitor                   a new admin or monitoring token\n"
		"  volume list [<tenant>] | volume show <id> | volume delete <id>\n"
		"  volume create <tenant> <name> <pool> <size> [<field>=<value> ...]\n"
		"                                               its id: <tenant>.<name>\n"
		"  volume set <id> <field>=<value>|null ...     a partial policy change\n"
		"  volume grow <id> <size>                      size in bytes or with K M G T\n"
		"  host list <tenant> | host add <tenant> <name> <nqn> [--dhchap generate|-]\n"
		"      (--dhchap: the host authenticates; its secret made by the appliance and\n"
		"       shown once, or '-': read from standard input, never on a command line)\n"
		"  host delete <tenant> <name>\n"
		"  export <id> <host> | unexport <id> <host> | exports <id>\n"
		"                                               NVMe/TCP; export prints the connect line\n"
		"  stats <id> | metrics\n"
		"  raw <METHOD> <path> [<JSON body>]            prints the status, then the body\n"
		"                                               (--content-type to send another)\n"
		"Policy fields: total_bytes_sec, read_iops_sec, ... weight, reservation_iops,\n"
		"latency_target_us (see the API); a ceiling on latency_target_us is the tightest target.\n");
}

/*
 * An argument as one path segment, percent-encoded: "../tenants/acme" stays
 * one segment and never reaches another resource. Two results may be held
 * at once.
 */
static const char *seg(const char *s)
{
	static char buf[2][768];
	static int which;
	char *o = buf[which ^= 1];
	/* "." and ".." are escaped whole: a client would resolve them as steps up the path */
	bool dots_alone = !strcmp(s, ".") || !strcmp(s, "..");
	size_t n = 0;

	for (; *s && n + 4 < sizeof(buf[0]); s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '~' || (ch == '.' && !dots_alone))
			o[n++] = (char)ch;
		else
			n += (size_t)snprintf(o + n, 4, "%%%02X", ch);
	}
	o[n] = '\0';
	return o;
}

static bool is(int argc, char **argv, const char *a, const char *b, int min, int max)
{
	return argc >= min && argc <= max && !strcmp(argv[0], a) && (!b || !strcmp(argv[1], b));
}

static int run(struct opts *o, int argc, char **argv)
{
	char path[1024];
	json_int_t size;
	json_t *f;

	if (is(argc, argv, "health", NULL, 1, 1))
		return call(o, "GET", "/v1/health", NULL);
	if (is(argc, argv, "metrics", NULL, 1, 1)) {
		struct reply r;
		int rc = request(o, "GET", "/metrics", NULL, &r);

		if (!rc && r.status >= 400)
			rc = refused(&r);
		else if (!rc)
			fputs(r.body ? r.body : "", stdout);
		free(r.body);
		return rc;
	}
	if (is(argc, argv, "pool", "list", 2, 2))
		return call(o, "GET", "/v1/pools?limit=1000", NULL);
	if (is(argc, argv, "pool", "show", 3, 3)) {
		snprintf(path, sizeof(path), "/v1/pools/%s", seg(argv[2]));
		return call(o, "GET", path, NULL);
	}
	if (is(argc, argv, "pool", "add", 4, 5) && (argc == 4 || !strcmp(argv[4], "force")))
		return call(o, "POST", "/v1/pools", json_pack("{s:s, s:s, s:b}", "name", argv[2],
							      "device", argv[3], "force", argc == 5));
	if (is(argc, argv, "tenant", "list", 2, 2))
		return call(o, "GET", "/v1/tenants?limit=1000", NULL);
	if (is(argc, argv, "tenant", "show", 3, 3) || is(argc, argv, "tenant", "delete", 3, 3)) {
		snprintf(path, sizeof(path), "/v1/tenants/%s", seg(argv[2]));
		return call(o, argv[1][0] == 's' ? "GET" : "DELETE", path, NULL);
	}
	if (is(argc, argv, "tenant", "token", 3, 3)) {
		snprintf(path, sizeof(path), "/v1/tenants/%s/token", seg(argv[2]));
		return call(o, "POST", path, NULL);
	}
	if (is(argc, argv, "token", "admin", 2, 2))
		return call(o, "POST", "/v1/admin/token", NULL);
	if (is(argc, argv, "token", "monitor", 2, 2))
		return call(o, "POST", "/v1/admin/monitor-token", NULL);
	if (is(argc, argv, "tenant", "create", 3, 64)) {
		f = fields(argc - 3, argv + 3);
		return f ? call(o, "POST", "/v1/tenants",
				json_pack("{s:s, s:o}", "id", argv[2], "ceilings", f)) : 2;
	}
	if (is(argc, argv, "volume", "list", 2, 3)) {
		if (argc == 3)
			snprintf(path, sizeof(path), "/v1/tenants/%s/volumes?limit=1000", seg(argv[2]));
		else
			snprintf(path, sizeof(path), "/v1/volumes?limit=1000");
		return call(o, "GET", path, NULL);
	}
	if (is(argc, argv, "volume", "show", 3, 3) || is(argc, argv, "volume", "delete", 3, 3)) {
		snprintf(path, sizeof(path), "/v1/volumes/%s", seg(argv[2]));
		return call(o, argv[1][0] == 's' ? "GET" : "DELETE", path, NULL);
	}
	if (is(argc, argv, "volume", "create", 6, 64)) {
		if (!size_arg(argv[5], &size)) {
			fprintf(stderr, "sluicectl: size: bytes, or a number with K, M, G or T\n");
			return 2;
		}
		f = fields(argc - 6, argv + 6);
		if (!f)
			return 2;
		snprintf(path, sizeof(path), "/v1/tenants/%s/volumes", seg(argv[2]));
		return call(o, "POST", path, json_pack("{s:s, s:s, s:I, s:o}", "name", argv[3], "pool",
						       argv[4], "size_bytes", size, "policy", f));
	}
	if (is(argc, argv, "volume", "set", 4, 64)) {
		f = fields(argc - 3, argv + 3);
		if (!f)
			return 2;
		snprintf(path, sizeof(path), "/v1/volumes/%s", seg(argv[2]));
		return call(o, "PATCH", path, json_pack("{s:o}", "policy", f));
	}
	if (is(argc, argv, "volume", "grow", 4, 4)) {
		if (!size_arg(argv[3], &size)) {
			fprintf(stderr, "sluicectl: size: bytes, or a number with K, M, G or T\n");
			return 2;
		}
		snprintf(path, sizeof(path), "/v1/volumes/%s", seg(argv[2]));
		return call(o, "PATCH", path, json_pack("{s:I}", "size_bytes", size));
	}
	if (is(argc, argv, "host", "list", 3, 3) || is(argc, argv, "host", "add", 5, 7)) {
		char secret[256] = "";

		snprintf(path, sizeof(path), "/v1/tenants/%s/hosts", seg(argv[2]));
		if (argv[1][0] == 'l')
			return call(o, "GET", path, NULL);
		if (argc == 6 || (argc == 7 && strcmp(argv[5], "--dhchap")))
			return usage(), 2;
		if (argc == 7 && !strcmp(argv[6], "-")) {
			if (!fgets(secret, sizeof(secret), stdin))
				secret[0] = '\0';
			secret[strcspn(secret, "\r\n")] = '\0';
		} else if (argc == 7) {
			if (strcmp(argv[6], "generate"))
				return usage(), 2;
			strcpy(secret, "generate");
		}
		return call(o, "POST", path, json_pack("{s:s, s:s, s:s?}", "name", argv[3], "nqn",
						      argv[4], "dhchap_secret",
						      secret[0] ? secret : NULL));
	}
	if (is(argc, argv, "host", "delete", 4, 4)) {
		snprintf(path, sizeof(path), "/v1/tenants/%s/hosts/%s", seg(argv[2]), seg(argv[3]));
		return call(o, "DELETE", path, NULL);
	}
	if (is(argc, argv, "export", NULL, 3, 3) || is(argc, argv, "unexport", NULL, 3, 3)) {
		snprintf(path, sizeof(path), "/v1/volumes/%s/exports/%s", seg(argv[1]), seg(argv[2]));
		return call(o, argv[0][0] == 'e' ? "PUT" : "DELETE", path, NULL);
	}
	if (is(argc, argv, "exports", NULL, 2, 2)) {
		snprintf(path, sizeof(path), "/v1/volumes/%s/exports", seg(argv[1]));
		return call(o, "GET", path, NULL);
	}
	if (is(argc, argv, "stats", NULL, 2, 2)) {
		snprintf(path, sizeof(path), "/v1/volumes/%s/stats", seg(argv[1]));
		return call(o, "GET", path, NULL);
	}
	if (is(argc, argv, "raw", NULL, 3, 4)) {
		struct reply r;
		int rc = request(o, argv[1], argv[2], argc == 4 ? argv[3] : NULL, &r);

		if (rc)
			return rc;
		printf("%ld\n%s\n", r.status, r.body ? r.body : "");
		free(r.body);
		return exit_of(r.status);
	}
	usage();
	return 2;
}

static bool read_token(const char *path, char *tok, size_t len, bool quiet)
{
	FILE *f = fopen(path, "re");

	if (!f) {
		if (!quiet)
			perror(path);
		return false;
	}
	if (!fgets(tok, len, f))
		tok[0] = '\0';
	fclose(f);
	tok[strcspn(tok, "\r\n")] = '\0';
	return true;
}

/*
 * Whether a token may be sent to url: over https, or over plain http to this
 * machine (127.0.0.0/8, ::1, localhost) only, where nobody else sees it.
 * The URL is read by libcurl's own parser, so that what is checked is the
 * host it connects to ("http://127.0.0.1:80@evil/" is evil's), and a URL
 * with a user or password is refused outright.
 */
static bool safe_for_token(const char *url)
{
	char *scheme = NULL, *host = NULL, *user = NULL, *pass = NULL;
	CURLU *u = curl_url();
	bool ok = false;
	size_t n;

	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0))
		goto out;
	if (!curl_url_get(u, CURLUPART_USER, &user, 0) || !curl_url_get(u, CURLUPART_PASSWORD, &pass, 0))
		goto out;
	if (!strcasecmp(scheme, "https")) {
		ok = true;
	} else if (!strcasecmp(scheme, "http")) {
		n = strlen(host);
		/* 127.x.y.z, digits and dots only; [::1]; localhost */
		ok = !strcasecmp(host, "localhost") || !strcmp(host, "[::1]") ||
		     (!strncmp(host, "127.", 4) && strspn(host, "0123456789.") == n);
	}
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(pass);
	curl_url_cleanup(u);
	return ok;
}

int main(int argc, char **argv)
{
	struct opts o = { .url = getenv("SLUICE_URL") };
	const char *env_tok = getenv("SLUICE_TOKEN"), *tok_file = NULL;
	int i, rc;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;

		if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--insecure")) {
			o.insecure = true;
		} else if (!strcmp(a, "--url") && has) {
			o.url = argv[++i];
		} else if (!strcmp(a, "--token") && has) {
			snprintf(o.token, sizeof(o.token), "%s", argv[++i]);
		} else if (!strcmp(a, "--token-file") && has) {
			tok_file = argv[++i];
		} else if (!strcmp(a, "--if-match") && has) {
			o.if_match = argv[++i];
		} else if (!strcmp(a, "--content-type") && has) {
			o.content_type = argv[++i];
		} else if (!strcmp(a, "--cacert") && has) {
			o.cacert = argv[++i];
		} else {
			usage();
			return 2;
		}
	}
	if (i >= argc) {
		usage();
		return 2;
	}
	if (!o.url)
		o.url = "http://127.0.0.1:8080";
	if (!o.token[0] && env_tok)
		snprintf(o.token, sizeof(o.token), "%s", env_tok);
	if (!o.token[0] && tok_file && !read_token(tok_file, o.token, sizeof(o.token), false))
		return 2;
	if (!o.token[0])
		read_token(ADMIN_TOKEN_FILE, o.token, sizeof(o.token), true);
	if (o.token[0] && !safe_for_token(o.url)) {
		fprintf(stderr, "sluicectl: %s: a token goes over plain http only to loopback; "
			"use https:// (with --cacert)\n", o.url);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = run(&o, argc - i, argv + i);
	curl_global_cleanup();
	return rc;
}
