# bench-jobs.sh - the jobs of bench-guest.sh (sourced there): fio and the
# metadata loops, each measured with the server's CPU over the same window;
# the row groups (base, scaling, nconnect, NFSv4.1) of one server; the
# rounds with the servers' order rotated.

report() {      # xprt job value unit cpu_s work [note]
	echo "@@ BENCH $ROUND $SERVER $*"
}

# fio_value OUT FIELD: from fio's terse (v3) line, FIELD bw (MiB/s, read +
# write: fields 7 and 48, KiB/s) or iops (read + write: fields 8 and 49).
# (awk, not a JSON parser: every process costs seconds under emulation.)
fio_value() {
	awk -F';' -v f="$2" '$1 == 3 && NF >= 49 { found = 1; if ($5 != 0) exit 1
		if (f == "bw") v = ($7 + $48) / 1024; else v = $8 + $49 }
		END { if (!found) exit 1; printf "%.1f\n", v }' "$1"
}

# fio arguments of a job name: (seq-read|seq-write|randread|randwrite)-(1m|4k)[-qdN][-pN]
fio_job_args() {
	local re='^(seq-read|seq-write|randread|randwrite)-(1m|4k)(-qd([0-9]+))?(-p([0-9]+))?$'
	[[ $1 =~ $re ]] || return 1
	local rw=${BASH_REMATCH[1]} bs=${BASH_REMATCH[2]} qd=${BASH_REMATCH[4]:-$SEQ_QD} procs=${BASH_REMATCH[6]:-1}
	rw=${rw/seq-/}
	echo "--rw=$rw --bs=${bs^^} --iodepth=$qd --numjobs=$procs --group_reporting --randrepeat=0"
}

# Runs fio job $2 on $MNT; reports it under xprt $1.
run_fio_job() {
	local xprt=$1 job=$2 out=$OUT/$SERVER-$1-$2.terse args unit=MiB/s field=bw
	local c0 c1 b0 b1 v t0=$SECONDS
	case $job in rand*) unit=IOPS; field=iops;; esac
	args="--name=$job --directory=$MNT --output-format=terse --terse-version=3 --filename=bench.dat --size=${FILE_MB}M"
	args="$args --ioengine=libaio --direct=1 --time_based --runtime=$RUNTIME --ramp_time=$RAMP"
	args="$args $(fio_job_args "$job")"
	# No drop_caches: O_DIRECT bypasses the client's page cache, and dropping
	# every cache would also drop the guest's 9p-cached programs (fio, perl),
	# which then cost more to load again than the job itself.
	c0=$(server_cpu_ticks) b0=$(mount_bytes)
	if timeout -k 10 "$FIO_TIMEOUT" fio $args > "$out" 2> "$out.err" && v=$(fio_value "$out" "$field"); then
		c1=$(server_cpu_ticks) b1=$(mount_bytes)
		report "$xprt" "$job" "$v" "$unit" "$(awk -v a="$c0" -v b="$c1" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }')" \
			"$(awk -v a="$b0" -v b="$b1" 'BEGIN { printf "%.4f", (b - a) / 1073741824 }')"
	else
		report "$xprt" "$job" n/a "$unit" - - "(fio failed: $(tail -n 1 "$out.err"))"
		sed 's/^/   fio| /' "$out.err" | tail -n 20
	fi
	echo "@@ TIMING $ROUND $SERVER $xprt $job $((SECONDS - t0))s"
}

# Metadata: one process, timed loops over META_FILES small files:
# create (O_CREAT|O_EXCL, 4 KiB written, close), stat (lstat after a
# remount, so each is a LOOKUP at the server), delete (unlink).
run_meta_jobs() {  # xprt
	local xprt=$1 phase r c0 c1 t0
	mkdir "$MNT/meta"
	for phase in create stat delete; do
		if [ "$phase" = stat ] && ! bench_remount; then
			report "$xprt" meta-stat n/a ops/s - - "(remount failed)"
			continue
		fi
		t0=$SECONDS c0=$(server_cpu_ticks)
		if r=$(timeout -k 10 "$FIO_TIMEOUT" perl -MTime::HiRes=time -MFcntl -e '
			my ($dir, $n, $phase) = @ARGV; my $buf = "m" x 4096; my $t = time;
			for my $i (0 .. $n - 1) {
				my $p = "$dir/f$i";
				if ($phase eq "create") {
					sysopen(my $h, $p, O_WRONLY | O_CREAT | O_EXCL, 0644) or die "create $p: $!\n";
					syswrite($h, $buf) == 4096 or die "write $p: $!\n";
					close($h) or die "close $p: $!\n";
				} elsif ($phase eq "stat") {
					my @st = lstat($p) or die "stat $p: $!\n";
					$st[7] == 4096 or die "$p has size $st[7]\n";
				} else {
					unlink($p) or die "unlink $p: $!\n";
				}
			}
			printf "%.1f\n", $n / (time - $t);' "$MNT/meta" "$META_FILES" "$phase" 2> "$OUT/meta.err"); then
			c1=$(server_cpu_ticks)
			report "$xprt" "meta-$phase" "$r" ops/s "$(awk -v a="$c0" -v b="$c1" -v t="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / t }')" \
				"$(awk -v n="$META_FILES" 'BEGIN { printf "%.3f", n / 1000 }')"
		else
			report "$xprt" "meta-$phase" n/a ops/s - - "(failed: $(tail -n 1 "$OUT/meta.err"))"
		fi
		echo "@@ TIMING $ROUND $SERVER $xprt meta-$phase $((SECONDS - t0))s"
	done
	[ -z "$(ls "$MNT/meta")" ] || echo "@@ NOTE $SERVER $xprt: files left in meta/"
	rm -rf "$MNT/meta"
}

na_rows() {     # xprt why job...
	local xprt=$1 why=$2 job u
	shift 2
	for job in "$@"; do
		case $job in seq-*) u=MiB/s;; rand*) u=IOPS;; *) u=ops/s;; esac
		report "$xprt" "$job" n/a "$u" - - "($why)"
	done
}

# bench_mount XPRT OPTIONS PATH: mounts, lays out the data file; else n/a rows.
bench_mount() {
	BENCH_MOUNT_OPTS=$2 BENCH_MOUNT_PATH=$3
	if ! timeout -k 5 60 mount -t nfs -o "$2" "$ADDR:$3" "$MNT"; then
		echo "@@ NOTE $SERVER $1: mount -o $2 $ADDR:$3 failed"
		return 1
	fi
	grep " $MNT " /proc/mounts | sed "s/^/@@ MOUNT $ROUND $SERVER $1 /"
	# The data file is laid out once, outside the timed jobs.
	dd if=/dev/zero of="$MNT/bench.dat" bs=1M count="$FILE_MB" oflag=direct status=none
}

# Empties the client's caches of this mount only (drop_caches would also
# drop the guest's 9p-cached programs).
bench_remount() {
	timeout -k 5 60 umount "$MNT" &&
		timeout -k 5 60 mount -t nfs -o "$BENCH_MOUNT_OPTS" "$ADDR:$BENCH_MOUNT_PATH" "$MNT"
}

bench_umount() {
	rm -rf "$MNT/bench.dat" "$MNT/meta"
	timeout -k 5 60 umount "$MNT" || umount -l "$MNT"
}

# Base and scaling rows, vers=3, over one transport.
bench_v3_transport() {
	local transport=$1 job why
	set_transport "$transport"
	if [ "$transport" = rdma ]; then
		why=
		if [ "$SERVER" = ganesha ] && [ "$GANESHA_RDMA" != yes ]; then
			why="Debian's nfs-ganesha has no RPC-over-RDMA"
		elif ! rdma_listening; then
			why="$SERVER does not listen on rdma 20049"
		fi
		if [ -n "$why" ]; then
			na_rows rdma "$why" $BASE_JOBS $META_JOBS $(scaling_jobs)
			return
		fi
	fi
	if ! bench_mount "$transport" "$MOUNT_OPTS${MOUNT_EXTRA:+,$MOUNT_EXTRA}" "$EXPORT"; then
		na_rows "$transport" "mount failed" $BASE_JOBS $META_JOBS $(scaling_jobs)
		return
	fi
	for job in $BASE_JOBS; do run_fio_job "$transport" "$job"; done
	run_meta_jobs "$transport"
	for job in $(scaling_jobs); do run_fio_job "$transport" "$job"; done
	[ "$transport" = rdma ] && report_memory rdma
	bench_umount
}

# The multi-process scaling rows again over 4 TCP connections (nconnect=4).
bench_nconnect() {
	local jobs job p
	for p in ${SCALING//,/ }; do [ "$p" -gt 1 ] && jobs="${jobs:-} randread-4k-qd1-p$p"; done
	[ -n "${jobs:-}" ] || return 0
	set_transport tcp
	if ! bench_mount tcp-nc4 "$MOUNT_OPTS,nconnect=4${MOUNT_EXTRA:+,$MOUNT_EXTRA}" "$EXPORT"; then
		na_rows tcp-nc4 "mount with nconnect=4 failed" $jobs
		return
	fi
	for job in $jobs; do run_fio_job tcp-nc4 "$job"; done
	bench_umount
}

# Does the running server serve NFSv4? (rpcbind knows program 100003 v4.)
serves_v4() {
	case $SERVER in
	knfsd) grep -q '+4.1' /proc/fs/nfsd/versions 2>/dev/null;;
	*) rpcinfo -p 127.0.0.1 2>/dev/null | awk '$1 == 100003 && $2 == 4' | grep -q .;;
	esac
}

# NFSv4.1 over one transport (rows tcp-v4.1, rdma-v4.1), for a server that serves NFSv4.
bench_v41() {   # transport
	local transport=$1 xprt=$1-v4.1 path=$EXPORT job port=2049
	[ "$transport" = rdma ] && port=20049
	[ "$SERVER" = knfsd ] && path=/      # fsid=0: the export is knfsd's NFSv4 root
	if ! serves_v4; then
		na_rows "$xprt" "$SERVER does not serve NFSv4" $V41_JOBS $META_JOBS
		return
	fi
	if [ "$transport" = rdma ] && { [ "$SERVER" = ganesha ] && [ "$GANESHA_RDMA" != yes ] || ! rdma_listening; }; then
		na_rows "$xprt" "$SERVER does not serve RPC-over-RDMA" $V41_JOBS $META_JOBS
		return
	fi
	if ! bench_mount "$xprt" "vers=4.1,proto=$transport,port=$port${MOUNT_EXTRA:+,$MOUNT_EXTRA}" "$path"; then
		na_rows "$xprt" "mount vers=4.1 failed" $V41_JOBS $META_JOBS
		return
	fi
	for job in $V41_JOBS; do run_fio_job "$xprt" "$job"; done
	run_meta_jobs "$xprt"
	bench_umount
}

# Resident memory (and, over rdma, registered memory) of the server process.
report_memory() {    # where
	local pid mr
	pid=$(server_pid)
	[ -n "$pid" ] || return 0
	mr=$(rdma resource show mr 2>/dev/null | awk -v p="$pid" '
		{ for (i = 1; i < NF; i++) { if ($i == "mrlen") l = $(i + 1); if ($i == "pid") q = $(i + 1) }
		  if (q == p) { s += l; n++ } l = q = "" }
		END { printf "%d %d", n, s }')
	echo "@@ RESOURCES $ROUND $SERVER at=$1 rss_kib=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")" \
		"hwm_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")" \
		"threads=$(ls "/proc/$pid/task" | wc -l)" "mrs=${mr% *}" "mr_bytes=${mr#* }"
}

bench_server() {
	local server=$1 t
	if ! bench_server_start "$server"; then
		echo "@@ NOTE $server did not start"
		case $server in rnfsd*) tail -n 50 "$RNFSD_LOG" | sed 's/^/   rnfsd| /';; esac
		[ "$server" = ganesha ] && tail -n 50 "$GANESHA_LOG" | sed 's/^/   ganesha| /'
		for t in ${BENCH_TRANSPORTS//,/ }; do na_rows "$t" "$server did not start" $BASE_JOBS $META_JOBS; done
		bench_server_stop
		return
	fi
	for t in ${BENCH_TRANSPORTS//,/ }; do bench_v3_transport "$t"; done
	has_transport tcp && bench_nconnect
	for t in ${BENCH_TRANSPORTS//,/ }; do bench_v41 "$t"; done
	report_memory end
	if [ "$server" = knfsd ]; then
		echo "@@ RESOURCES $ROUND knfsd threads=$(pgrep -x nfsd | wc -l)"
	fi
	[ "$server" = rnfsd ] && [ "$ROUND" = "$REPEATS" ] && rnfsd_stats
	bench_server_stop || echo "@@ NOTE $server did not stop cleanly"
	rm -rf "${EXPORT:?}"/* 2>/dev/null
}

# Round r runs the servers in the order rotated left by r - 1.
bench_rounds() {
	local servers=(${BENCH_SERVERS//,/ }) n i s
	n=${#servers[@]}
	CLK_TCK=$(getconf CLK_TCK)
	for ROUND in $(seq "$REPEATS"); do
		for i in $(seq 0 $((n - 1))); do
			s=${servers[$(((i + ROUND - 1) % n))]}
			echo "@@ ROUND $ROUND $s $(cut -d' ' -f1 /proc/uptime)s"
			bench_server "$s"
		done
	done
}
