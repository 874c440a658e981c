#!/usr/bin/perl
# microbench-report.pl RESULTS BASELINE SERVERS OPS WRITE_BASELINE DESCRIBE UNITS DEPTH
# Prints bench/microbench.sh's tables from RESULTS ("SERVER OP METRIC VALUE"
# lines): each figure of a server with its change in percent against
# BASELINE (same format; "-" where the baseline has none), and the
# ganesha/rnfsd ratios. With WRITE_BASELINE=1, replaces BASELINE with this run.
use strict;
use warnings;

my ($results, $baseline, $servers, $ops, $write, $describe, $units, $depth) = @ARGV;
my @servers = split /,/, $servers;
my @ops = split /,/, $ops;

sub load {
	my ($path) = @_;
	my %v;
	open(my $h, "<", $path) or return \%v;
	while (<$h>) {
		next if /^#/ || !/\S/;
		my ($s, $op, $m, $val) = split;
		$v{"$s $op $m"} = $val if defined $val;
	}
	return \%v;
}
my $r = load($results);
my $b = load($baseline);

sub fig { my ($s, $op, $m) = @_; return $r->{"$s $op $m"}; }
sub delta {
	my ($s, $op, $m) = @_;
	my ($now, $was) = (fig($s, $op, $m), $b->{"$s $op $m"});
	return "-" unless defined $now && defined $was && $was > 0;
	return sprintf("%+.1f%%", 100 * ($now - $was) / $was);
}
sub cell { my $v = fig(@_); return defined $v ? $v : "n/a"; }
sub ratio {
	my ($op, $m) = @_;
	my ($g, $n) = (fig("ganesha", $op, $m), fig("rnfsd", $op, $m));
	return "-" unless defined $g && defined $n && $n > 0;
	return sprintf("%.2f", $g / $n);
}
my $has_g = grep { $_ eq "ganesha" } @servers;
my $has_r = grep { $_ eq "rnfsd" } @servers;

print "\nInstructions per unit (valgrind --tool=callgrind; all server threads, user space only;",
	" units $units; d1 = one call in flight, d$depth = $depth pipelined on one connection):\n";
my $f1 = "%-17s %9s %8s %9s %8s %10s %10s %8s %8s\n";
printf $f1, "op", "rnfsd d1", "vs base", "d$depth", "vs base", "ganesha d1", "d$depth", "g/r d1", "g/r d$depth";
for my $op (@ops) {
	printf $f1, $op, cell("rnfsd", $op, "instr1"), delta("rnfsd", $op, "instr1"),
		cell("rnfsd", $op, "instr"), delta("rnfsd", $op, "instr"),
		cell("ganesha", $op, "instr1"), cell("ganesha", $op, "instr"),
		ratio($op, "instr1"), ratio($op, "instr");
}

print "\nPer unit, native run (perf stat -p on the server; CPU = task-clock):\n";
my $f2 = "%-17s %5s %9s %8s %7s %8s %9s %7s %8s %10s\n";
printf $f2, "op", "rpcs", "rnfsd sys", "vs base", "cs", "CPU us", "ganesha sys", "cs", "CPU us", "CPU g/r";
for my $op (@ops) {
	my $rpcs = fig("rnfsd", $op, "rpcs") // fig("ganesha", $op, "rpcs") // "n/a";
	printf $f2, $op, $rpcs, cell("rnfsd", $op, "syscalls"), delta("rnfsd", $op, "syscalls"),
		cell("rnfsd", $op, "cs"), cell("rnfsd", $op, "cpu_us"),
		cell("ganesha", $op, "syscalls"), cell("ganesha", $op, "cs"), cell("ganesha", $op, "cpu_us"),
		ratio($op, "cpu_us");
}
for my $s (@servers) {
	my @changed = grep { defined fig($s, $_, "note") } @ops;
	print "note: $s started or ended threads during the perf run of @changed;",
		" perf stat -p counts only the threads present when it attached\n" if @changed;
	my @missing = grep { !defined fig($s, $_, "instr1") } @ops;
	print "n/a: $s: no callgrind figure for @missing (see the log lines above)\n" if @missing;
}
print "\nvs base: change against $baseline. Instructions are deterministic up to thread",
	" interleaving: run-to-run noise is about 1-2 % at d1, up to about 5 % at d$depth (how many calls",
	" one wake-up carries varies); syscalls and context switches vary with that batching too.\n";

if ($write) {
	open(my $h, ">", $baseline) or die "$baseline: $!\n";
	my @t = gmtime;
	printf $h "# bench/microbench.sh baseline: rnfsd %s, %04d-%02d-%02d; units %s, depth %s\n",
		$describe, $t[5] + 1900, $t[4] + 1, $t[3], $units, $depth;
	print $h "# SERVER OP METRIC VALUE (instr1, instr: instructions/unit at depth 1 and $depth;",
		" syscalls, cs, cpu_us: per unit, native, depth $depth)\n";
	for my $s (@servers) {
		for my $op (@ops) {
			for my $m (qw(instr1 instr syscalls cs cpu_us rpcs)) {
				my $v = fig($s, $op, $m);
				print $h "$s $op $m $v\n" if defined $v;
			}
		}
	}
	close($h);
	print "baseline written to $baseline\n";
}
exit 0;
