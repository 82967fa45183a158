# The API's tests' helpers: requests by hand over busybox nc.
# shellcheck shell=sh

# req <status> <token> <METHOD> <path> [<body>]: one request on a fresh
# connection, by hand over busybox nc (a process start costs sluicectl and
# its TLS libraries a tenth of a second under TCG, nc a few milliseconds;
# sluicectl itself is used below where its own behaviour is the point).
# The answer's body in $body; fails unless the status is the expected one.
# An extra header line in $HDR, the body's type in $CTYPE.
req() {
	want=$1 tok=$2 method=$3 path=$4
	shift 4
	{
		printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' "$method" "$path"
		[ -z "$tok" ] || printf 'Authorization: Bearer %s\r\n' "$tok"
		[ -z "${HDR:-}" ] || printf '%s\r\n' "$HDR"
		if [ $# -gt 0 ]; then
			printf 'Content-Type: %s\r\nContent-Length: %d\r\n\r\n%s' \
				"${CTYPE:-application/json}" "${#1}" "$1"
		else
			printf '\r\n'
		fi
	} | nc 127.0.0.1 ${API_PORT:-8080} > /tmp/resp 2>&1 || true
	read -r _ got _ < /tmp/resp || got=none
	body=$(sed '1,/^\r$/d' /tmp/resp)
	[ "$want" = any ] || [ "$got" = "$want" ] ||
		fail "$method $path: status $got, expected $want: $(head -c 300 /tmp/resp)"
}
# req_any <token> <METHOD> <path> [<body>]: the same, any status (in $got)
req_any() {
	req any "$@"
}
# problem <slug>: the last body is a problem of that type
problem() {
	case $body in
	*'"type":"/problems/'"$1"'"'*) ;;
	*) fail "expected problem $1, got: $body" ;;
	esac
}
has() {
	case $body in
	*"$1"*) ;;
	*) fail "expected '$1' in: $body" ;;
	esac
}
# gone <token> <id>: a DELETE answers 202 at once; the volume is gone (404)
# once its devices are removed and its extents zeroed (within $GONE_S s)
gone() {
	n=0
	while :; do
		req_any "$1" GET /v1/volumes/$2
		[ "$got" != 404 ] || return 0
		[ "$got" = 200 ] || fail "GET /v1/volumes/$2 while deleted: $got"
		case $body in *'"state":"deleting"'*) ;; *) fail "$2 not deleting: $body" ;; esac
		n=$((n + 1))
		[ $n -lt $((${GONE_S:-20} * 10)) ] || fail "$2 not gone after ${GONE_S:-20} s: $body"
		sleep 0.1
	done
}
