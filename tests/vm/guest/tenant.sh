# The tenant suite's helpers: a daemon with one pool, tenants, and the proof
# that an attack changed nothing.
# shellcheck shell=sh
. /sluice/guest/api.sh

TENANT_STATE=/tmp/tenant-state

# tenant_setup: a 512 MiB brd disk as pool p0 (declared: 100,000 IO/s, 1 GiB/s),
# the daemon on 127.0.0.1:8080;
# the admin token in $ADMIN. Everything is undone at exit.
tenant_setup() {
	modprobe brd rd_nr=${TENANT_DISKS:-2} rd_size=524288
	modprobe dm-sluice
	at_exit 'kill $dpid 2> /dev/null; wait $dpid; for d in $(dmsetup ls | awk "/^sluice-/ && !/-data/ {print \$1}"); do dmsetup remove --retry $d; done; for d in $(dmsetup ls | awk "/^sluice-/ {print \$1}"); do dmsetup remove --retry $d; done; rmmod dm_sluice_weight 2> /dev/null; rmmod brd'
	rm -rf $TENANT_STATE
	mkdir -p $TENANT_STATE /etc/sluice
	printf 'listen = 127.0.0.1:8080\n%s\n' "${TENANT_CONF:-}" > /etc/sluice/sluiced.conf
	tenant_daemon
	ADMIN=$(cat $TENANT_STATE/admin.token)
	req 201 "$ADMIN" POST /v1/pools \
		'{"name":"p0","device":"/dev/ram0","capacity_iops":100000,"capacity_bytes_sec":1073741824}'
}

tenant_daemon() {
	sluiced -s $TENANT_STATE daemon 2>> /tmp/daemon.log &
	dpid=$!
	n=0
	# answered by this daemon, not one a test before left behind
	until sluicectl --url http://127.0.0.1:8080 health > /dev/null 2>&1 && kill -0 $dpid; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "the API did not come up: $(tail -n 5 /tmp/daemon.log)"
		sleep 0.1
	done
}

# tenant_new <id> [<ceilings object>]: the tenant's token in $TOK
tenant_new() {
	if [ $# -gt 1 ]; then
		req 201 "$ADMIN" POST /v1/tenants "{\"id\":\"$1\",\"ceilings\":$2}"
	else
		req 201 "$ADMIN" POST /v1/tenants "{\"id\":\"$1\"}"
	fi
	TOK=$(echo "$body" | sed 's/.*"token":"\([0-9a-f]*\)".*/\1/')
}

# what the store and the kernel hold, as one sum (read beside the daemon)
tenant_sum() {
	{
		sluiced -s $TENANT_STATE show
		dmsetup table | sort
	} | md5sum
}

# refused <status> <problem> <field> <token> <METHOD> <path> [<body>]: the
# request is refused with that problem, naming the field, and neither the
# store nor the kernel changed
refused() {
	r_status=$1 r_problem=$2 r_field=$3
	shift 3
	r_before=$(tenant_sum)
	req "$r_status" "$@"
	problem "$r_problem"
	[ -z "$r_field" ] || has "\"field\":\"$r_field\""
	[ "$(tenant_sum)" = "$r_before" ] || fail "$2 $3 was refused, but the state changed"
}
