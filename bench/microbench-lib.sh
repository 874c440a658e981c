# microbench-lib.sh - the inside of bench/microbench.sh, sourced there once
# it runs in its private network and mount namespace. Starts each server
# (natively, then under callgrind) on a tmpfs export at $WORK/export, drives
# it with nfsload, and writes one line per figure to $WORK/results.txt:
#   SERVER OP METRIC VALUE        (METRIC: instr syscalls cs cpu_us rpcs)
# then prints the tables (microbench-report.pl).

MB_RESULTS=$WORK/results.txt
MB_PID= MB_RPCBIND= MB_SERVER=

mb_log() { echo "microbench: $*" >&2; }

mb_namespace_setup() {
	ip link set lo up
	# A private /run: ganesha's rpcbind socket and pid files stay in here.
	mount -t tmpfs -o mode=0755 tmpfs /run
	mkdir -p /run/rpcbind "$EXPORT" "$WORK/state"
	mount -t tmpfs -o size=512m,mode=0755 tmpfs "$EXPORT"
	rm -f "$MB_RESULTS" "$WORK"/cg-*
}

mb_cleanup() {
	[ -n "$MB_PID" ] && kill -KILL "$MB_PID" 2>/dev/null
	[ -n "$MB_RPCBIND" ] && kill -TERM "$MB_RPCBIND" 2>/dev/null
	wait 2>/dev/null
}

mb_wait_listen() {     # PORT SECONDS
	local i
	for i in $(seq $(($2 * 5))); do
		kill -0 "$MB_PID" 2>/dev/null || return 1
		ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.2
	done
	return 1
}

mb_write_configs() {
	printf '[rnfsd]\nthreads = %s\nstate-dir = %s\nrpcbind = no\nstats-socket = %s\n[tcp]\nlisten = 127.0.0.1:%s\n[rdma]\nenable = no\n' \
		"$THREADS" "$WORK/state" "/run/rnfsd-mb.sock" "$NFS_PORT" > "$WORK/rnfsd.conf"
	echo "$EXPORT 127.0.0.1(rw,no_root_squash,insecure)" > "$WORK/exports"
	# Same export, same thread count: ganesha 4.x serves requests on its
	# ntirpc work pool, bounded by RPC_Ioq_ThrdMax (Nb_Worker is deprecated).
	cat > "$WORK/ganesha.conf" <<EOF
NFS_CORE_PARAM {
	Protocols = 3; NFS_Port = $NFS_PORT; MNT_Port = $GANESHA_MNT_PORT;
	Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false;
	RPC_Ioq_ThrdMax = $THREADS;
}
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
	Export_Id = 1; Path = $EXPORT; Pseudo = $EXPORT;
	Protocols = 3; Transports = TCP; Access_Type = RW; Squash = No_Root_Squash;
	SecType = sys; FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
EOF
}

# mb_start SERVER native|callgrind
mb_start() {
	local server=$1 mode=$2 vg=() log=$WORK/$1-$2.log
	MB_SERVER=$server MB_MPORT=$NFS_PORT
	[ "$server" = ganesha ] && MB_MPORT=$GANESHA_MNT_PORT
	[ "$mode" = callgrind ] && vg=(valgrind --tool=callgrind --dump-instr=no --dump-line=no
		"--callgrind-out-file=$WORK/cg-$server.out")
	case $server in
	rnfsd)
		"${vg[@]}" "$RNFSD" -f -c "$WORK/rnfsd.conf" -e "$WORK/exports" > "$log" 2>&1 &
		MB_PID=$!;;
	ganesha)
		if [ -z "$MB_RPCBIND" ]; then
			rpcbind -f & MB_RPCBIND=$!
			sleep 0.5
		fi
		"${vg[@]}" ganesha.nfsd -F -f "$WORK/ganesha.conf" -L "$log" -p "/run/ganesha-mb.pid" \
			-N NIV_EVENT > "$log.out" 2>&1 &
		MB_PID=$!;;
	esac
	if ! mb_wait_listen "$NFS_PORT" 240 ||
	   { [ "$server" = ganesha ] && ! mb_wait_listen "$GANESHA_MNT_PORT" 60; }; then
		mb_log "$server ($mode) did not start; last lines of $log:"
		tail -n 20 "$log" "$log.out" 2>/dev/null >&2
		mb_stop
		return 1
	fi
}

mb_stop() {
	local i
	[ -n "$MB_PID" ] || return 0
	kill -TERM "$MB_PID" 2>/dev/null
	for i in $(seq 600); do
		kill -0 "$MB_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$MB_PID" 2>/dev/null
	wait "$MB_PID" 2>/dev/null
	MB_PID=
}

mb_load() {     # OP UNITS [DEPTH]
	"$NFSLOAD" -p "$NFS_PORT" -m "$MB_MPORT" -e "$EXPORT" -o "$1" -n "$2" -d "${3:-$DEPTH}" > /dev/null ||
		{ mb_log "nfsload $1 -n $2 against $MB_SERVER failed"; return 1; }
}

mb_result() { echo "$MB_SERVER $1 $2 $3" >> "$MB_RESULTS"; }

# perf stat of the server over one nfsload run: prints "syscalls cs task_ms".
mb_perf_run() {  # OP UNITS
	local out=$WORK/perf.csv
	perf stat -x, -o "$out" -e raw_syscalls:sys_enter,context-switches,task-clock -p "$MB_PID" -- \
		"$NFSLOAD" -p "$NFS_PORT" -m "$MB_MPORT" -e "$EXPORT" -o "$1" -n "$2" -d "$DEPTH" > "$WORK/load.out" || return 1
	awk -F, '$3 ~ /raw_syscalls/ { s = $1 } $3 ~ /context-switches/ { c = $1 } $3 ~ /task-clock/ { t = $1 }
		END { if (s == "" || c == "" || t == "") exit 1; print s, c, t }' "$out"
}

mb_native_pass() {
	local op n fixed run threads0
	"$NFSLOAD" -p "$NFS_PORT" -m "$MB_MPORT" -e "$EXPORT" --setup > /dev/null || return 1
	for op in ${OPS//,/ }; do
		n=$(units_of "$op")
		mb_load "$op" $((n / 10 + 1)) || return 1
		threads0=$(ls "/proc/$MB_PID/task" | sort)
		fixed=$(mb_perf_run "$op" 0) && run=$(mb_perf_run "$op" "$n") || {
			mb_log "perf stat failed on $MB_SERVER $op: $(tail -n 3 "$WORK/perf.csv")"
			continue
		}
		[ "$threads0" = "$(ls "/proc/$MB_PID/task" | sort)" ] ||
			mb_result "$op" note "threads-changed"
		mb_result "$op" rpcs "$(awk '{ printf "%.2f", $7 / $5 }' "$WORK/load.out")"
		echo "$fixed $run" | awk -v n="$n" '{ printf "%.2f %.2f %.1f\n", ($4 - $1) / n, ($5 - $2) / n, ($6 - $3) * 1000 / n }' |
			{ read -r s c t; mb_result "$op" syscalls "$s"; mb_result "$op" cs "$c"; mb_result "$op" cpu_us "$t"; }
	done
}

# The total instruction count of the dump named $1 (callgrind's "summary:").
mb_cg_total() {
	grep -l "^desc: Trigger: dump $1\$" "$WORK"/cg-"$MB_SERVER".out* 2>/dev/null | head -n 1 |
		xargs -r awk '/^summary:/ { print $2 }'
}

mb_cg_dump() {   # NAME
	callgrind_control -d "$1" "$MB_PID" > /dev/null 2>&1
	local i
	for i in $(seq 300); do
		[ -n "$(mb_cg_total "$1")" ] && return 0
		sleep 0.2
	done
	return 1
}

# Instructions per unit at depth 1 (metric instr1: a lone call, every
# wake-up paid by one call; the steadier figure) and at $DEPTH (instr:
# pipelined, wake-ups shared by however many calls one read brings).
mb_callgrind_pass() {
	local op n d fixed run metric depths=1
	[ "$DEPTH" = 1 ] || depths="1 $DEPTH"
	for op in ${OPS//,/ }; do
		n=$(units_of "$op")
		mb_load "$op" $((n / 10 + 1)) || return 1
		for d in $depths; do
			metric=instr
			[ "$d" = 1 ] && metric=instr1
			callgrind_control -z "$MB_PID" > /dev/null 2>&1
			mb_load "$op" 0 "$d" && mb_cg_dump "fixed-$op-$d" || return 1
			callgrind_control -z "$MB_PID" > /dev/null 2>&1
			mb_load "$op" "$n" "$d" && mb_cg_dump "run-$op-$d" || return 1
			fixed=$(mb_cg_total "fixed-$op-$d") run=$(mb_cg_total "run-$op-$d")
			mb_result "$op" "$metric" "$(awk -v f="$fixed" -v r="$run" -v n="$n" 'BEGIN { printf "%.0f", (r - f) / n }')"
		done
	done
}

mb_server() {
	local server=$1
	mb_log "$server: native pass (perf stat)"
	if mb_start "$server" native; then
		mb_native_pass || mb_log "$server: native pass incomplete"
		mb_stop
	fi
	mb_log "$server: callgrind pass"
	if mb_start "$server" callgrind; then
		mb_callgrind_pass || mb_log "$server: callgrind pass incomplete"
		mb_stop
	fi
	rm -f "$WORK"/cg-"$server".out*
}

mb_main() {
	trap mb_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	mb_namespace_setup
	mb_write_configs
	local s
	for s in ${SERVERS//,/ }; do
		mb_server "$s"
	done
	perl "$HERE/microbench-report.pl" "$MB_RESULTS" "$BASELINE" "$SERVERS" "$OPS" "$WRITE_BASELINE" \
		"$(git -C "$HERE" describe --always --dirty 2>/dev/null || echo '?')" "$(units_of getattr)/$(units_of create-remove)/$(units_of readdirplus-1000)" "$DEPTH"
}
