#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profd against perf on programs Debian ships (and a Go program): each is
# profiled through the daemon (`profctl record` on a private bus, stacks
# named by its sandboxed unwinder) and by `perf record --call-graph dwarf` at
# once, on the same pid, and crosscheck.py compares the named-leaf share, the
# share of stacks reaching a root and the leaf distributions over the seconds
# both covered (by the samples' times: both on the wall clock). At 4999 Hz
# for 8 s: at 999 Hz for 5 s the ~1500 samples a target gets on a loaded
# machine make two profiles of one distribution differ by a TVD of up to
# 0.08-0.13 by sampling alone, too close to the 0.1 bound to test it.
# Prints the table BENCHMARKS.md shows.
# usage: test-crosscheck.sh PROFCTL PERF CROSSCHECK.PY GO_HOT.GO (PROFD in the environment)
source "$(dirname "$0")/../daemon/lib.sh"
profctl=$1
perf=$2
crosscheck=$3
go_source=$4
seconds=${CROSSCHECK_SECONDS:-8}
hz=${CROSSCHECK_HZ:-4999}
# Debian's interpreters, not whatever a PATH puts first
python=/usr/bin/python3
perl=/usr/bin/perl

tmp=$T
start_bus
start_profd

# The workloads: each runs far longer than the windows, and is killed after.
GOCACHE=$tmp/gocache HOME=$tmp CGO_ENABLED=0 go build -o "$tmp/go-hot" "$go_source"
for i in $(seq 1 4000); do
	echo "SELECT count(*), sum(length(b)) FROM (SELECT b FROM t ORDER BY b LIMIT 20000);"
	echo "SELECT a % 97, count(*) FROM t GROUP BY a % 97 ORDER BY 2 DESC LIMIT 3;"
done >"$tmp/loop.sql"
sqlite_init="CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (VALUES(1) UNION ALL SELECT x + 1 FROM c WHERE x < 50000)
INSERT INTO t SELECT random(), hex(randomblob(16)) FROM c;"
python_loop='
import json, re
words = ["w%d" % i for i in range(5000)]
while True:
    d = {}
    for i, w in enumerate(words):
        d[w] = d.get(w, 0) + i * 3
    s = json.dumps(sorted(d.items()))
    n = len(re.findall(r"w1\d+", s))
'
perl_loop='
my @w = map { "w$_" } 1 .. 5000;
while (1) {
	my %h;
	$h{$_} = length($_) * 3 for @w;
	my $s = join(",", map { "$_=$h{$_}" } sort keys %h);
	my $n = () = $s =~ /w1\d+/g;
}
'
mkfifo "$tmp/bzip2-in"

# start NAME PROGRAM CMD...: run CMD in the background as PROGRAM (an exec, so $! is its pid)
start() {
	local name=$1 program=$2
	shift 2
	"$@" &
	pid=$!
	CHILDREN+=("$pid")
	wait_until 30 runs_program "$pid" "$program" && wait_until 30 has_run "$pid" 5 ||
		fail "$name did not start"
}

# compare NAME: profile $pid with both at once for $seconds, then compare (perf -N: no copies
# of the programs in root's ~/.debug, which every run of the Go program's build would add to)
failed=0
compare() {
	local name=$1 perf_pid exe
	exe=$(readlink -f "/proc/$pid/exe")
	"$perf" record -q -N -k CLOCK_REALTIME -F "$hz" --call-graph dwarf -o "$tmp/$name.data" -p "$pid" -- \
		sleep "$seconds" >/dev/null 2>"$tmp/$name.perf-err" &
	perf_pid=$!
	"$profctl" --address="$BUS" record -p "$pid" -d "$seconds" -F "$hz" --no-kernel \
		-o "$tmp/$name.folded" -o "$tmp/$name.json" || fail "profctl record of $name failed"
	wait "$perf_pid" || fail "perf record of $name failed: $(cat "$tmp/$name.perf-err")"
	kill "$pid"
	"$perf" script -i "$tmp/$name.data" -F comm,tid,time,ip,sym,dso >"$tmp/$name.script" 2>/dev/null
	rm "$tmp/$name.data"
	"$python" "$crosscheck" --check "$name" "$exe" "$tmp/$name.json" "$tmp/$name.script" || failed=1
}

echo "| program | samples profd / perf | named leaf profd / perf | reach root profd / perf | leaf TVD (noise) |"
echo "|---|---|---|---|---|"
start sqlite3 /usr/bin/sqlite3 bash -c "exec sqlite3 :memory: -cmd \"\$1\" <\"\$2\" >/dev/null" \
	sqlite "$sqlite_init" "$tmp/loop.sql"
compare sqlite3
start python3 "$python" "$python" -c "$python_loop"
compare python3
start openssl /usr/bin/openssl bash -c 'exec openssl speed -seconds 60 sha256 aes-128-cbc >/dev/null 2>&1'
compare "openssl speed"
start perl "$perl" "$perl" -e "$perl_loop"
compare perl
base64 /dev/urandom >"$tmp/bzip2-in" &
CHILDREN+=("$!")
start bzip2 /usr/bin/bzip2 bash -c "exec bzip2 -9 <\"\$1\" >/dev/null" bzip2 "$tmp/bzip2-in"
compare bzip2
start go "$tmp/go-hot" "$tmp/go-hot" 600
compare "go (go-hot)"
# and its known hot function, named from .gopclntab, on stacks reaching the goroutine's root
go_total=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/go (go-hot).folded")
go_hot=$(awk '/^runtime\.goexit;runtime\.main;main\.main;main\.goHotHash [0-9]+$/ { n += $NF }
	END { print n + 0 }' "$tmp/go (go-hot).folded")
echo "go: $go_hot of $go_total samples in runtime.goexit;runtime.main;main.main;main.goHotHash"
((go_hot * 2 >= go_total && go_total > 0)) || fail "main.goHotHash is not named on most Go stacks"
exit $failed
