#!/usr/bin/perl
# bench-report.pl CONSOLE_LOG SERVERS - the tables of bench/run-bench.sh from
# the guest's "@@ BENCH/FABRIC/RESOURCES" lines (see bench-guest.sh):
#   1. each row's figure per server: median of the rounds [min-max], the
#      rnfsd/knfsd and rnfsd/ganesha ratios of the medians, and over rdma the
#      fabric's own limit (perftest) with rnfsd's share of it;
#   2. server CPU seconds per GiB moved (fio rows) or per 1,000 operations
#      (metadata rows), median of the rounds;
#   3. resident and registered memory.
# A figure that was not measured is "n/a", with the reason below the table.
use strict;
use warnings;

my ($log, $servers) = @ARGV;
my @servers = split /,/, $servers;
my (%val, %cpu, %unit, %note, %fabric, %res, @rows, %seen);
open(my $h, "<", $log) or die "$log: $!\n";
while (<$h>) {
	chomp;
	if (/^@@ BENCH (\d+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\s*(.*)$/) {
		my ($round, $srv, $xprt, $job, $v, $u, $c, $w, $n) = ($1, $2, $3, $4, $5, $6, $7, $8, $9);
		my $row = "$xprt $job";
		push @rows, $row unless $seen{$row}++;
		$unit{$row} = $u;
		if ($v eq "n/a") {
			$note{"$srv $row"} = $n;
			next;
		}
		push @{$val{"$srv $row"}}, $v;
		push @{$cpu{"$srv $row"}}, $c / $w if $c =~ /^[0-9.]+$/ && $w =~ /^[0-9.]+$/ && $w > 0;
	} elsif (/^@@ FABRIC (\S+) (\S+) (\S+)/) {
		$fabric{$1} = [$2, $3];
	} elsif (/^@@ RESOURCES (\d+) (\S+) (.*)$/) {
		my ($srv, %kv) = ($2, map { split /=/, $_, 2 } split ' ', $3);
		my $at = delete $kv{at} // "end";
		push @{$res{"$srv $at $_"}}, $kv{$_} for keys %kv;
	}
}
close($h);

sub median { my @v = sort { $a <=> $b } @_; return undef unless @v;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2; }
sub num { my ($x) = @_; return $x >= 100 ? sprintf("%.0f", $x) : $x >= 10 ? sprintf("%.1f", $x) : sprintf("%.2f", $x); }
sub spread {
	my ($k) = @_;
	my $v = $val{$k};
	return "n/a" unless $v && @$v;
	my @s = sort { $a <=> $b } @$v;
	return num(median(@s)) if @s == 1;
	return sprintf("%s [%s-%s]", num(median(@s)), num($s[0]), num($s[-1]));
}
sub med { my $v = $val{$_[0]}; return $v && @$v ? median(@$v) : undef; }
sub ratio { my ($a, $b) = @_; return defined $a && defined $b && $b > 0 ? sprintf("%.2f", $a / $b) : "-"; }

# Which perftest figure bounds which job over RDMA: an NFS WRITE's payload is
# pulled by the server with RDMA Read, an NFS READ's pushed with RDMA Write;
# a 4 KiB random I/O costs at least one 4 KiB-class message exchange.
sub fabric_of {
	my ($job) = @_;
	return "read-bw-1m" if $job =~ /^seq-write-1m/;
	return "write-bw-1m" if $job =~ /^seq-read-1m/;
	return "send-4k" if $job =~ /^rand.*-4k/;
	return undef;
}

my %has = map { $_ => 1 } @servers;
my %notes;
print "\nFigures: median of the rounds [min-max]; higher is better.\n";
my $w = 24;
my $fmt = "%-9s %-20s %-6s" . (" %${w}s" x @servers) . " %6s %6s %9s %6s\n";
printf $fmt, "xprt", "job", "unit", @servers, "r/k", "r/g", "fabric", "r/fab";
for my $row (@rows) {
	my ($xprt, $job) = split / /, $row;
	my @cells;
	for my $s (@servers) {
		my $c = spread("$s $row");
		push @{$notes{"$s $xprt: n/a $note{\"$s $row\"}"}}, $job if $c eq "n/a" && $note{"$s $row"};
		push @cells, $c;
	}
	my $r = med("rnfsd $row");
	my ($fab, $share) = ("-", "-");
	my $f = $xprt eq "rdma" ? fabric_of($job) : undef;
	if ($f && $fabric{$f}) {
		$fab = $fabric{$f}[0];
		$share = ($fab =~ /^[0-9.]+$/ && $fab > 0 && defined $r) ? sprintf("%.0f%%", 100 * $r / $fab) : "-";
	}
	printf $fmt, $xprt, $job, $unit{$row}, @cells,
		ratio($r, med("knfsd $row")), ratio($r, med("ganesha $row")), $fab, $share;
}
print "$_ (", scalar(@{$notes{$_}}) == 1 ? $notes{$_}[0] : scalar(@{$notes{$_}}) . " rows", ")\n"
	for sort keys %notes;
if (%fabric) {
	print "fabric (perftest on rxe0, same boot): ",
		join(", ", map { "$_ $fabric{$_}[0] $fabric{$_}[1]" } sort keys %fabric), "\n";
}

print "\nServer CPU seconds per GiB moved (fio rows) or per 1,000 operations (metadata rows);",
	" median of the rounds; lower is better:\n";
my $fmt2 = "%-9s %-20s %-9s" . (" %10s" x @servers) . " %6s %6s\n";
printf $fmt2, "xprt", "job", "per", @servers, "r/k", "r/g";
for my $row (@rows) {
	my ($xprt, $job) = split / /, $row;
	my (@cells, %m);
	for my $s (@servers) {
		my $c = $cpu{"$s $row"};
		$m{$s} = $c && @$c ? median(@$c) : undef;
		push @cells, defined $m{$s} ? sprintf("%.2f", $m{$s}) : "n/a";
	}
	next unless grep { $_ ne "n/a" } @cells;
	printf $fmt2, $xprt, $job, $job =~ /^meta-/ ? "1000 ops" : "GiB", @cells,
		ratio($m{rnfsd}, $m{knfsd}), ratio($m{rnfsd}, $m{ganesha});
}
print "(knfsd: its nfsd threads only; work done for it in softirq, kworkers and rxe's tasks is not",
	" counted. ganesha, rnfsd: utime+stime of the process. 10 ms clock ticks.)\n";

print "\nMemory (median of the rounds; max for the peak):\n";
for my $s (grep { $_ ne "knfsd" } @servers) {
	for my $at ("rdma", "end") {
		my $rss = $res{"$s $at rss_kib"} or next;
		my @hwm = sort { $a <=> $b } @{$res{"$s $at hwm_kib"} // []};
		my $line = sprintf("%-8s %-38s RSS %.1f MiB, peak (VmHWM) %.1f MiB, %s threads", $s,
			$at eq "rdma" ? "with the rdma mount, after its jobs:" : "at the end of its run:",
			median(@$rss) / 1024, ($hwm[-1] // 0) / 1024, median(@{$res{"$s $at threads"} // [0]}));
		if ($at eq "rdma") {
			my $mrs = $res{"$s $at mrs"};
			my $bytes = $res{"$s $at mr_bytes"};
			$line .= $mrs && median(@$mrs) > 0
				? sprintf("; registered memory %.1f MiB in %d MRs (rdma resource show mr)",
					median(@$bytes) / 1048576, median(@$mrs))
				: "; registered memory n/a (no MR of this process in rdma resource show mr)";
		}
		print "$line\n";
	}
}
if (my $t = $res{"knfsd end threads"}) { print "knfsd    nfsd threads: ", median(@$t), "\n"; }
exit 0;
