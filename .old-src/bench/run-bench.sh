#!/bin/bash
# run-bench.sh - rnfsd against knfsd in one qemu guest boot.
#
#   run-bench.sh [--build-dir DIR] [--rnfsd BINARY] [--transports tcp,rdma]
#                [--servers knfsd,rnfsd] [--runtime S] [--timeout S] [--work DIR]
#                [--mount-options OPTS]   (added to vers=3,proto=..,port=..,nolock;
#                                          default rsize=524288,wsize=524288)
#
# Runs bench/bench-guest.sh in the guest (see tests/vm/vm-host.sh): the same
# fio jobs against knfsd and rnfsd (same tmpfs export, same mount options),
# per transport, plus perftest's figure for the fabric itself when rdma is
# benchmarked, and prints a table. A benchmark, not a test: exits 0 whenever
# the guest ran, whatever the figures; 77 if the VM cannot run here; 1 if the
# guest did not boot or hung. How to read the figures: bench/README.md.

set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/../tests/vm/vm-host.sh"

BUILD_DIR=
RNFSD=
TRANSPORTS=tcp,rdma
SERVERS=knfsd,rnfsd
MOUNT_EXTRA=rsize=524288,wsize=524288
RUNTIME=8
TIMEOUT=1500
WORK=
while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) BUILD_DIR=$2; shift 2;;
	--rnfsd) RNFSD=$2; shift 2;;
	--transports) TRANSPORTS=$2; shift 2;;
	--servers) SERVERS=$2; shift 2;;
	--mount-options) MOUNT_EXTRA=$2; shift 2;;
	--runtime) RUNTIME=$2; shift 2;;
	--timeout) TIMEOUT=$2; shift 2;;
	--work) WORK=$2; shift 2;;
	-h|--help) sed -n '2,15p' "$0"; exit 0;;
	*) echo "run-bench.sh: unknown argument $1 (see --help)" >&2; exit 2;;
	esac
done

vm_require_host || { echo "SKIP: $VM_SKIP_REASON"; exit 77; }
BUILD_DIR=$(readlink -f "${BUILD_DIR:-$HERE/../build}")
RNFSD=$(readlink -f "${RNFSD:-$BUILD_DIR/rnfsd}")
[ -x "$RNFSD" ] || { echo "run-bench.sh: $RNFSD not built" >&2; exit 1; }
WORK=${WORK:-$BUILD_DIR/bench-work}
mkdir -p "$WORK"
vm_initramfs "$WORK/cache" || { echo "run-bench.sh: could not build the initramfs" >&2; exit 1; }
LOG=$WORK/console-bench.log

echo "bench: knfsd vs rnfsd ($RNFSD), transports $TRANSPORTS, ${RUNTIME}s per timed job; console $LOG"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
RNFSCTL=$(dirname "$RNFSD")/daemon/rnfsctl
[ -x "$RNFSCTL" ] || RNFSCTL=none
vm_boot "$LOG" "$TIMEOUT" "$HERE/bench-guest.sh" "RNFSD=$RNFSD" "RNFSCTL=$RNFSCTL" \
	"DEADLINE=$((TIMEOUT - 25))" \
	"BENCH_TRANSPORTS=$TRANSPORTS" "BENCH_SERVERS=$SERVERS" "RUNTIME=$RUNTIME" \
	"MOUNT_EXTRA=$MOUNT_EXTRA"
rc=$?
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
grep -E '^@@ (INFO|NOTE|MOUNT)' "$LOG"

perl - "$LOG" <<'EOF'
use strict; use warnings;
my (%v, %unit, %note, %fabric, %res, @order, %seen);
open(my $h, "<", $ARGV[0]) or die "$ARGV[0]: $!\n";
while (<$h>) {
	chomp;
	if (/^@@ BENCH (\S+) (\S+) (\S+) (\S+) (\S+)\s*(.*)$/) {
		my ($srv, $tr, $job, $val, $u, $n) = ($1, $2, $3, $4, $5, $6);
		push @order, "$tr $job" unless $seen{"$tr $job"}++;
		$v{"$srv $tr $job"} = $val; $unit{"$tr $job"} = $u;
		$note{"$srv $tr $job"} = $n if $n ne "";
	} elsif (/^@@ FABRIC (\S+) (\S+) (\S+)/) {
		$fabric{$1} = [$2, $3];
	} elsif (/^@@ RESOURCES (\S+) (.*)$/) {
		$res{$1} = $2;
	}
}
# Which perftest figure bounds which job over RDMA: an NFS WRITE's payload is
# pulled by the server with RDMA Read, an NFS READ's pushed with RDMA Write;
# a 4 KiB random I/O costs at least one 4 KiB-class message exchange.
my %fab_of = ("seq-write-1m" => "read-bw-1m", "seq-read-1m" => "write-bw-1m",
	"randread-4k-qd16" => "send-4k", "randwrite-4k-qd16" => "send-4k");
sub cell { my ($k) = @_; my $x = $v{$k}; return "-" unless defined $x;
	return $x eq "n/a" ? "n/a " . ($note{$k} // "") : $x; }
my $fmt = "%-5s %-18s %-6s %10s %10s %7s %10s %7s %7s\n";
printf "\n$fmt", "xprt", "job", "unit", "knfsd", "rnfsd", "ratio", "fabric", "knfsd%", "rnfsd%";
my @notes;
for my $row (@order) {
	my ($tr, $job) = split / /, $row;
	my ($k, $r) = ($v{"knfsd $row"}, $v{"rnfsd $row"});
	my $num = sub { defined $_[0] && $_[0] =~ /^[0-9.]+$/ };
	my $ratio = ($num->($k) && $num->($r) && $k > 0) ? sprintf("%.2f", $r / $k) : "-";
	my ($fab, $ks, $rs) = ("-", "-", "-");
	if ($tr eq "rdma" && $fab_of{$job} && $fabric{$fab_of{$job}}) {
		my ($fv, $fu) = @{$fabric{$fab_of{$job}}};
		$fab = $fv;
		if ($num->($fv) && $fv > 0) {
			$ks = $num->($k) ? sprintf("%.0f%%", 100 * $k / $fv) : "-";
			$rs = $num->($r) ? sprintf("%.0f%%", 100 * $r / $fv) : "-";
		}
	}
	my ($kc, $rc) = (cell("knfsd $row"), cell("rnfsd $row"));
	for my $c (\$kc, \$rc) {
		if ($$c =~ /^n\/a (.+)$/) { push @notes, "$tr $job: $1"; $$c = "n/a"; }
	}
	printf $fmt, $tr, $job, $unit{$row}, $kc, $rc, $ratio, $fab, $ks, $rs;
}
if (%fabric) {
	print "\nfabric (perftest on rxe0, same boot): ",
		join(", ", map { "$_ $fabric{$_}[0] $fabric{$_}[1]" } sort keys %fabric), "\n";
}
my %uniq; @notes = grep { !$uniq{$_}++ } @notes;
print "n/a: $_\n" for @notes;
for my $s (sort keys %res) {
	my %kv = map { split /=/, $_, 2 } split ' ', $res{$s};
	if ($s eq "rnfsd") {
		printf "rnfsd: peak resident memory (VmHWM) %.1f MiB, CPU %s s (utime+stime, whole run), %s threads\n",
			($kv{hwm_kib} // 0) / 1024, $kv{cpu_s} // "?", $kv{threads} // "?";
	} else {
		printf "%s: CPU %s s (utime+stime of its %s nfsd kernel threads, whole run)\n",
			$s, $kv{cpu_s} // "?", $kv{threads} // "?";
	}
}
exit 0;
EOF

if grep -q '^   rnfsctl|' "$LOG"; then
	echo
	echo "rnfsd's own view at the end of its runs (rnfsctl stats; latency = time in rnfsd):"
	sed -n 's/^   rnfsctl| //p' "$LOG"
fi
if [ "$rc" = 124 ]; then
	echo "bench: the guest hung and was killed after ${TIMEOUT}s; console log follows"
	cat "$LOG"
	exit 1
fi
if ! grep -q '^@@ DONE' "$LOG"; then
	echo "bench: the guest did not finish (qemu status $rc); console log follows"
	cat "$LOG"
	exit 1
fi
echo "bench: guest time ${VM_BOOT_SECONDS}s; host load average before $LOAD_BEFORE, after $LOAD_AFTER ($(nproc) CPUs)"
echo "bench: figures from one boot under TCG emulation: compare only within this run (bench/README.md)"
exit 0
