#!/bin/bash
# bench-guest.sh - guest side of bench/run-bench.sh. In one boot:
# the fabric's own limit (perftest on rxe0, when rdma is benchmarked), then
# the same fio jobs and metadata loops against knfsd and against rnfsd, each
# on the same fresh tmpfs export with the same mount options, for each
# transport. Prints
#   @@ FABRIC name value unit
#   @@ BENCH server transport job value unit [note]
#   @@ RESOURCES server key=value ...
# Never fails on speed: a job that cannot run prints "n/a (why)".

. "$(dirname "$(readlink -f "$0")")/../tests/vm/guest-lib.sh"

BENCH_TRANSPORTS=${BENCH_TRANSPORTS:-tcp}   # vmarg: tcp,rdma
BENCH_SERVERS=${BENCH_SERVERS:-knfsd,rnfsd}
RUNTIME=${RUNTIME:-8}                       # seconds per timed fio job
RAMP=${RAMP:-2}
FILE_MB=${FILE_MB:-128}
META_FILES=${META_FILES:-1000}
SEQ_QD=${SEQ_QD:-4}
FIO_TIMEOUT=$((RUNTIME * 4 + 120))
FIO_JOBS="seq-write-1m seq-read-1m randread-4k-qd16 randwrite-4k-qd16"
JOBS="$FIO_JOBS meta-create meta-stat meta-delete"
# Same options for both servers; rsize/wsize pinned so that both move the
# same transfer size (left alone, knfsd offers 512 KiB here, rnfsd 1 MiB).
MOUNT_EXTRA=${MOUNT_EXTRA-rsize=524288,wsize=524288}
OUT=$SCRATCH/bench

has_transport() { case ",$BENCH_TRANSPORTS," in *",$1,"*) return 0;; esac; return 1; }

# --- the fabric's own limit -----------------------------------------------------

# perftest_run TOOL SIZE ITERS: prints "MiB/s msgs/s" (perftest's MB is 2^20).
perftest_run() {
	local tool=$1 size=$2 iters=$3 srv=$OUT/$1-$2.srv cli=$OUT/$1-$2.cli
	timeout -k 5 120 "$tool" -d rxe0 -s "$size" -n "$iters" -F > "$srv" 2>&1 &
	local spid=$!
	wait_tcp_listen 18515 20
	timeout -k 5 120 "$tool" -d rxe0 -s "$size" -n "$iters" -F "$ADDR" > "$cli" 2>&1
	wait "$spid"
	# Result line: bytes iterations BWpeak BWaverage MsgRate(Mpps)
	awk -v s="$size" '$1 == s && NF >= 5 { printf "%.1f %.0f\n", $4, $5 * 1000000; found = 1 } END { if (!found) exit 1 }' "$cli" ||
		{ sed 's/^/   perftest| /' "$cli" "$srv"; return 1; }
}

fabric_measure() {
	local r
	if r=$(perftest_run ib_write_bw 1048576 200); then
		echo "@@ FABRIC write-bw-1m ${r% *} MiB/s"
	else
		echo "@@ FABRIC write-bw-1m n/a MiB/s"
	fi
	if r=$(perftest_run ib_read_bw 1048576 200); then
		echo "@@ FABRIC read-bw-1m ${r% *} MiB/s"
	else
		echo "@@ FABRIC read-bw-1m n/a MiB/s"
	fi
	if r=$(perftest_run ib_send_bw 4096 20000); then
		echo "@@ FABRIC send-4k ${r#* } msgs/s"
	else
		echo "@@ FABRIC send-4k n/a msgs/s"
	fi
}

# --- fio --------------------------------------------------------------------------

# fio_value JSON FIELD: FIELD is bw (MiB/s, read+write) or iops (read+write).
fio_value() {
	perl -MJSON::PP -e '
		local $/; open(my $h, "<", $ARGV[0]) or exit 1;
		my $t = <$h>; $t =~ s/^[^{]*//s;   # fio may print notes before the JSON
		my $j = decode_json($t); my $v = 0;
		for my $job (@{$j->{jobs}}) { for my $d ("read", "write") {
			exit 1 if $job->{error};
			$v += $ARGV[1] eq "bw" ? $job->{$d}{bw_bytes} / 1048576 : $job->{$d}{iops};
		} }
		printf "%.1f\n", $v;' "$1" "$2"
}

report() {      # server transport job value unit [note]
	echo "@@ BENCH $*"
}

run_fio_job() {  # server transport job
	local server=$1 transport=$2 job=$3 out=$OUT/$1-$2-$3.json args unit field
	args="--name=$job --directory=$MNT --output-format=json"
	args="$args --filename=bench.dat --size=${FILE_MB}M --ioengine=libaio --direct=1"
	args="$args --time_based --runtime=$RUNTIME --ramp_time=$RAMP"
	case $job in
	seq-write-1m) args="$args --rw=write --bs=1M --iodepth=$SEQ_QD"; unit=MiB/s; field=bw;;
	seq-read-1m)  args="$args --rw=read --bs=1M --iodepth=$SEQ_QD"; unit=MiB/s; field=bw;;
	randread-4k-qd16)  args="$args --rw=randread --bs=4k --iodepth=16"; unit=IOPS; field=iops;;
	randwrite-4k-qd16) args="$args --rw=randwrite --bs=4k --iodepth=16"; unit=IOPS; field=iops;;
	esac
	drop_caches
	local v t0=$SECONDS
	if timeout -k 10 "$FIO_TIMEOUT" fio $args > "$out" 2> "$out.err" && v=$(fio_value "$out" "$field"); then
		report "$server" "$transport" "$job" "$v" "$unit"
	else
		report "$server" "$transport" "$job" "n/a" "$unit" "(fio failed: $(tail -n 1 "$out.err"))"
		sed 's/^/   fio| /' "$out.err" | tail -n 20
	fi
	echo "@@ TIMING $server $transport $job $((SECONDS - t0))s"
}

# Metadata: one process, timed loops over META_FILES small files:
# create (O_CREAT|O_EXCL, 4 KiB written, close), stat (lstat after
# drop_caches, so each is a LOOKUP at the server), delete (unlink).
run_meta_jobs() {  # server transport
	local server=$1 transport=$2 phase r t0
	mkdir "$MNT/meta"
	for phase in create stat delete; do
		[ "$phase" = stat ] && drop_caches
		t0=$SECONDS
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
			report "$server" "$transport" "meta-$phase" "$r" ops/s
		else
			report "$server" "$transport" "meta-$phase" n/a ops/s "(failed: $(tail -n 1 "$OUT/meta.err"))"
		fi
		echo "@@ TIMING $server $transport meta-$phase $((SECONDS - t0))s"
	done
	[ -z "$(ls "$MNT/meta")" ] || echo "@@ NOTE $server $transport: files left in meta/"
}

na_rows() {     # server transport why
	local job
	for job in $JOBS; do
		case $job in seq-*) u=MiB/s;; rand*) u=IOPS;; *) u=ops/s;; esac
		report "$1" "$2" "$job" n/a "$u" "($3)"
	done
}

bench_transport() {      # server transport
	local server=$1 job
	set_transport "$2"
	if [ "$TRANSPORT" = rdma ] && ! rdma_listening; then
		if [ "$server" = rnfsd ]; then
			na_rows "$server" rdma "rnfsd has no RDMA yet"
		else
			na_rows "$server" rdma "$server does not listen on rdma 20049"
		fi
		return
	fi
	if ! timeout -k 5 60 mount -t nfs -o "$MOUNT_OPTS${MOUNT_EXTRA:+,$MOUNT_EXTRA}" "$ADDR:$EXPORT" "$MNT"; then
		na_rows "$server" "$TRANSPORT" "mount -o $MOUNT_OPTS${MOUNT_EXTRA:+,$MOUNT_EXTRA} failed"
		return
	fi
	grep " $MNT " /proc/mounts | sed 's/^/@@ MOUNT /'
	# The data file is laid out once, outside the timed jobs.
	dd if=/dev/zero of="$MNT/bench.dat" bs=1M count="$FILE_MB" oflag=direct status=none
	for job in $FIO_JOBS; do
		run_fio_job "$server" "$TRANSPORT" "$job"
	done
	run_meta_jobs "$server" "$TRANSPORT"
	rm -rf "$MNT/bench.dat" "$MNT/meta"
	timeout -k 5 60 umount "$MNT" || umount -l "$MNT"
}

cpu_seconds() {  # PID...: utime + stime of those processes (all their threads), in s
	local tck
	tck=$(getconf CLK_TCK)
	for p in "$@"; do
		cat "/proc/$p/stat" 2>/dev/null | sed 's/^.*) //' | awk '{ print $12, $13 }'
	done | awk -v t="$tck" '{ s += $1 + $2 } END { printf "%.2f\n", s / t }'
}

bench_server() {
	local server=$1 t
	if ! server_start "$server"; then
		echo "@@ NOTE $server did not start"
		[ "$server" = rnfsd ] && tail -n 50 "$RNFSD_LOG" | sed 's/^/   rnfsd| /'
		for t in ${BENCH_TRANSPORTS//,/ }; do na_rows "$server" "$t" "$server did not start"; done
		server_stop
		return
	fi
	for t in ${BENCH_TRANSPORTS//,/ }; do
		bench_transport "$server" "$t"
	done
	case $server in
	rnfsd)
		local pid
		pid=$(rnfsd_pid)
		echo "@@ RESOURCES rnfsd hwm_kib=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")" \
			"cpu_s=$(cpu_seconds "$pid")" \
			"threads=$(ls "/proc/$pid/task" | wc -l)"
		rnfsd_stats
		;;
	knfsd)
		echo "@@ RESOURCES knfsd cpu_s=$(cpu_seconds $(pgrep -x nfsd))" \
			"threads=$(pgrep -x nfsd | wc -l)"
		;;
	esac
	server_stop || echo "@@ NOTE $server did not stop cleanly"
	rm -rf "${EXPORT:?}"/* 2>/dev/null
}

guest_base
mkdir -p "$OUT"
if has_transport rdma; then
	guest_net rdma
else
	guest_net tcp
fi
guest_export
RNFSD_RDMA=auto
echo "@@ INFO transports=$BENCH_TRANSPORTS servers=$BENCH_SERVERS runtime=${RUNTIME}s ramp=${RAMP}s file=${FILE_MB}MiB meta_files=$META_FILES seq_qd=$SEQ_QD mount_extra=${MOUNT_EXTRA:-none}"
has_transport rdma && fabric_measure
for s in ${BENCH_SERVERS//,/ }; do
	bench_server "$s"
done
guest_end
