#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the unit's LimitNOFILE= decides. A session holds one perf event per
# thread of its target and per CPU: under the installed unit profd profiles a
# process whose session needs more descriptors than the 1024 a process starts
# with. profd hands out its open file limit less a reserve, so an operator's
# lower LimitNOFILE= (a drop-in) turns the same request into a clear refusal,
# while profd keeps serving and smaller sessions still work: never EMFILE.
source "$(dirname "$0")/lib.sh"

boot_system
in_container systemctl start profd.service
pid=$(wait_active)

# enough threads that the session needs more than 1024 descriptors, and more
# than profd's share of the LimitNOFILE=2048 below (2048 less 512 reserved)
cpus=$(in_container getconf _NPROCESSORS_ONLN)
threads=$(((1600 + cpus - 1) / cpus + 16))
target=$(spawn_as root $TESTS_BIN/idle-threads $threads 120)
for _ in $(seq 300); do
	n=$(in_container awk '/^Threads:/ { print $2 }' /proc/$target/status 2>/dev/null) || n=0
	((n > threads)) && break
	sleep 0.1
done
((n > threads)) || fail "idle-threads $threads runs $n threads"

reply=$(mgr StartSession 'uuta{sv}' "$target" 99 3000000 0) ||
	fail "root cannot profile a process of $n threads: $reply"
read -r _ _ path <<<"$reply"
path=${path//\"/}
wait_session "$path" sampling
held=$(in_container ls /proc/$pid/fd | wc -l)
((held > 1024)) || fail "profd holds $held descriptors while sampling $n threads on $cpus CPUs"
wait_session "$path" completed 60
seen=$(session_prop "$path" ThreadsAtStart)
samples=$(session_prop "$path" SamplesCaptured)
((seen == n && samples > 0)) ||
	fail "the session saw $seen threads of $n and took $samples samples"
ok "root profiled a process of $n threads on $cpus CPUs: profd held $held descriptors, $samples samples"

# an operator's lower limit: the same request refused up front, saying why
mkdir -p "$ROOT/etc/systemd/system/profd.service.d"
printf '[Service]\nLimitNOFILE=2048\n' >"$ROOT/etc/systemd/system/profd.service.d/fds.conf"
in_container systemctl daemon-reload
in_container systemctl restart profd.service
pid=$(wait_active)
grep -Eq "^Max open files +2048 +2048 " <(in_container cat /proc/$pid/limits) ||
	fail "with LimitNOFILE=2048: $(in_container grep 'open files' /proc/$pid/limits)"
err=$(busctl_error in_container busctl call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$target" 99 3000000 0)
[[ $err == "org.profd.Profiler1.Error.TooManySessions: profd has no file descriptors to spare"* ]] ||
	fail "a session beyond LimitNOFILE=2048: $err"
small=$(spawn_as root $TESTS_BIN/workload-split 30 1)
out=$(in_container profctl record -p "$small" -d 1 -o /root/split.folded 2>&1) ||
	fail "with LimitNOFILE=2048, a one-thread session fails: $out"
in_container grep -q split_heavy /root/split.folded || fail "the one-thread session's profile is unnamed"
! in_container journalctl -q -u profd.service -g 'Too many open files' ||
	fail "profd ran out of descriptors"
ok "with a drop-in LimitNOFILE=2048 the same session is refused ($err); a one-thread session works"
