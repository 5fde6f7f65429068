#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# StartSession with pid 0 and one of the options cgroup, unit, system: the
# processes of a cgroup (one started mid-session) and nothing outside it, the
# whole machine, the Target property (and profctl sessions' TARGET column), the run's identity and the cgroup's
# resources; option errors; and who may profile what (DESIGN.md §8) as uid
# 65534 and uid 2: its own cgroup below user@UID.service (two processes in
# it, one started mid-session) is profiled, named by the user's sandboxed unwinder; root's cgroup,
# another user's, an undelegated one and the whole machine are AccessDenied. A
# StartSession of a unit waits for a hung systemd; profd does not.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cgroup-lib.sh"

session_of() { # AS... -- START_SESSION ARGS: the session path, started as AS (or root)
	local as=()
	while [[ $1 != -- ]]; do as+=("$1"); shift; done
	shift
	"${as[@]}" busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' "$@" |
		awk '{ print $3 }' | tr -d '"'
}

folded_of() { # [AS... --] PATH: the session's folded stacks, exported as AS (or root)
	local as=()
	if (($# > 1)); then
		while [[ $1 != -- ]]; do as+=("$1"); shift; done
		shift
	fi
	rm -f "$T/out/folded"
	"${as[@]}" "$EXPORT_TO_FD" "$BUS" "$1" folded "$T/out/folded" >&2 || fail "cannot export session $1"
	cat "$T/out/folded"
}

metrics() {
	bctl call $DEST "$1" $SES GetMetrics | cut -d' ' -f2- | sed 's/\\"/"/g'
}

start_bus
# profd asks "systemd" about units on the test's bus: a hung one, at the end
DBUS_SYSTEM_BUS_ADDRESS=$BUS start_profd
install -d -o $NOBODY "$T/out"

# --- a cgroup: both processes inside (one joins mid-session), by name, nothing of the one outside
cg=/profd-daemon-targets-$$
make_cgroup $cg
spawn_in $cg "$WORKLOAD_SPLIT" 120 1
inside=$SPAWNED
spawn_workload "$WORKLOAD_SPLIT" 120 1
outside=$SPAWNED
s=$(start_session 0 199 3000000 1 cgroup s "$mount$cg")
[[ -n $s ]] || fail "root could not profile cgroup $cg"
[[ $(prop "$s" Target) == "cgroup:$cg" ]] || fail "Target is '$(prop "$s" Target)', not cgroup:$cg"
[[ $(prop "$s" Pid) == 0 ]] || fail "a cgroup session's Pid is $(prop "$s" Pid)"
mgr ListSessions | grep -q "\"${s##*/}\" \"$s\" 0 " || fail "ListSessions lacks pid 0: $(mgr ListSessions)"
"$PROFCTL" --address="$BUS" sessions | grep -qE "^${s##*/} +0 +sampling +cgroup:$cg +$s$" ||
	fail "profctl sessions lacks the target cgroup:$cg: $("$PROFCTL" --address="$BUS" sessions)"
ran() { (($(cpu_ticks "$1") >= $2)); }
wait_until 60 ran "$inside" 10 || fail "the first workload did not run 0.1 s"
spawn_in $cg "$WORKLOAD_SPLIT" 120 1
late=$SPAWNED
[[ $(wait_finished "$s" 120) == completed ]] || fail "the cgroup session failed: $(prop "$s" Error)"
folded=$(folded_of "$s")
for p in $inside $late; do
	[[ $folded == *"workload-split-$p;"*split_heavy* ]] ||
		fail "the cgroup's profile lacks split_heavy of process $p: ${folded:0:300}"
done
[[ $folded != *"-$outside;"* ]] || fail "the cgroup's profile has the process outside it"
run=$(bctl call $DEST $MGR_PATH $MGR GetRun s "$(prop "$s" RunId)" | sed 's/\\"/"/g')
[[ $run == *'"source_kind":"cgroup"'* && $run == *"\"workload_class\":\"$cg\""* ]] ||
	fail "the run's identity is not the cgroup's: ${run:0:400}"
# the cgroup's CPU time (cpu.stat): its two busy processes ran all the window
grep -Eq '"resources":\{[^}]*"cpu_time_ms":[1-9]' <<<"$run" ||
	fail "the run has no CPU time of the cgroup: $(grep -o '"resources":{[^}]*' <<<"$run")"
ok "cgroup: processes $inside and $late (joined mid-session) inside, $outside outside left out; Target (in profctl sessions too), run identity and cgroup CPU time"

# --- the whole machine: the two workloads the test started, each under its own process frame
s=$(start_session 0 99 1500000 1 system b true)
[[ $(prop "$s" Target) == system ]] || fail "Target is '$(prop "$s" Target)', not system"
"$PROFCTL" --address="$BUS" sessions | grep -qE "^${s##*/} +0 +[a-z]+ +system +$s$" ||
	fail "profctl sessions lacks the target system: $("$PROFCTL" --address="$BUS" sessions)"
[[ $(wait_finished "$s" 120) == completed ]] || fail "the system session failed: $(prop "$s" Error)"
folded=$(folded_of "$s")
for p in $inside $outside; do
	[[ $folded == *"workload-split-$p;"* ]] || fail "the system profile lacks process $p: ${folded:0:300}"
done
[[ $folded != *"-$PROFD_PID;"* ]] || fail "the system profile has profd itself"
m=$(metrics "$s")
[[ $m == *'"target": "system"'* ]] || fail "the system session's metrics: ${m:0:300}"
[[ $(bctl call $DEST $MGR_PATH $MGR GetRun s "$(prop "$s" RunId)") == *'\"source_kind\":\"system\"'* ]] ||
	fail "the system run's source_kind is not system"
ok "system: both workloads under their process frames, not profd; $(grep -o '"backend": "[^"]*"' <<<"$m")"

# --- option errors
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs mgr StartSession 'uuta{sv}' 0 99 500000 0)
[[ $msg == *"pid 0 needs one of"* ]] || fail "pid 0 alone: $msg"
expect_error org.freedesktop.DBus.Error.InvalidArgs \
	mgr StartSession 'uuta{sv}' "$inside" 99 500000 1 cgroup s $cg >/dev/null
expect_error org.freedesktop.DBus.Error.InvalidArgs \
	mgr StartSession 'uuta{sv}' 0 99 500000 2 cgroup s $cg system b true >/dev/null
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs \
	mgr StartSession 'uuta{sv}' 0 99 500000 1 cgroup s /no-such-cgroup-$$)
[[ $msg == *"no cgroup '/no-such-cgroup-$$'"* ]] || fail "a missing cgroup: $msg"
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs \
	mgr StartSession 'uuta{sv}' 0 99 500000 1 cgroup s /../etc)
[[ $msg == *"not a cgroup path"* ]] || fail "a cgroup path with '..': $msg"
msg=$(expect_error org.freedesktop.DBus.Error.InvalidArgs \
	mgr StartSession 'uuta{sv}' 0 99 500000 1 unit s basic.target)
[[ $msg == *"not the name of a unit with processes"* ]] || fail "a target unit: $msg"
ok "option errors: pid 0 alone, a pid with a cgroup, two targets, a missing cgroup, '..', a .target unit"

# --- access: uid 65534 and its own cgroup below user@65534.service
own=/user.slice/user-$NOBODY.slice/user@$NOBODY.service/profd-test-$$
make_cgroup /user.slice/user-$NOBODY.slice/user@$NOBODY.service $NOBODY
make_cgroup $own $NOBODY
spawn_in $own "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 120 1
own_first=$SPAWNED
# its own cgroup passes the access rules; its stacks are named by its own sandboxed unwinder,
# which asks profd for each process's files (of the second one, started mid-session, too)
s=$(session_of "${AS_NOBODY[@]}" -- 0 199 3000000 1 cgroup s "$own")
[[ -n $s ]] || fail "uid 65534 could not profile its own cgroup $own"
wait_until 60 ran "$own_first" 10 || fail "uid 65534's first workload did not run 0.1 s"
spawn_in $own "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 120 1
own_second=$SPAWNED
[[ $(wait_finished "$s" 120) == completed ]] || fail "uid 65534's cgroup session failed: $(prop "$s" Error)"
folded=$(folded_of "${AS_NOBODY[@]}" -- "$s")
for p in $own_first $own_second; do
	[[ $folded == *"workload-split-$p;"*split_heavy* ]] ||
		fail "uid 65534's cgroup profile lacks split_heavy of process $p: ${folded:0:300}"
done
[[ $folded != *"-$inside;"* && $folded != *"-$outside;"* ]] ||
	fail "uid 65534's cgroup profile has a process outside its cgroup"
[[ $(prop "$s" Target) == "cgroup:$own" ]] || fail "Target is '$(prop "$s" Target)', not cgroup:$own"
ok "uid 65534's own cgroup: processes $own_first and $own_second (joined mid-session) named (split_heavy) by its unwinder, none outside"

msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' 0 99 500000 1 system b true)
[[ $msg == *"whole machine"* ]] || fail "system as uid 65534: $msg"
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' 0 99 500000 1 cgroup s $cg)
[[ $msg == *"user@$NOBODY.service"* ]] || fail "root's cgroup as uid 65534: $msg"
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' 0 99 500000 1 cgroup s "$own")
[[ $msg == *"user@$OTHER.service"* ]] || fail "uid 65534's cgroup as uid $OTHER: $msg"
# a cgroup in the right place that the user does not own (not delegated to it)
make_cgroup /user.slice/user-$NOBODY.slice/user@$NOBODY.service/profd-root-$$
msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' 0 99 500000 1 cgroup s \
	/user.slice/user-$NOBODY.slice/user@$NOBODY.service/profd-root-$$)
[[ $msg == *"not the caller's"* ]] || fail "a root-owned cgroup below user@$NOBODY.service: $msg"
ok "access: the whole machine, root's cgroup, another user's cgroup and an undelegated one are AccessDenied"

# --- a hung systemd: a StartSession of a unit waits for it (and then fails), not profd
"$HUNG_SYSTEMD" "$BUS" >"$T/hung.out" &
CHILDREN+=($!)
wait_until 10 grep -q ready "$T/hung.out" || fail "the hung systemd did not take its name"
busctl --address="$BUS" --timeout=120 call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	0 99 500000 1 unit s profd-test-$$.service >"$T/unit.out" 2>"$T/unit.err" &
pending=$!
# calls made after it are answered while it waits for systemd (10 s per call to it)
for _ in 1 2 3; do
	mgr ListSessions >/dev/null || fail "ListSessions failed while a unit lookup waits"
	busctl --address="$BUS" get-property $DEST $MGR_PATH $MGR Version >/dev/null ||
		fail "Version failed while a unit lookup waits"
done
kill -0 $pending 2>/dev/null ||
	fail "StartSession of a unit returned before systemd answered: $(cat "$T/unit.out" "$T/unit.err")"
wait $pending && fail "StartSession of a unit succeeded without systemd: $(cat "$T/unit.out")"
grep -q "did not answer in time" "$T/unit.err" ||
	fail "StartSession of a unit of a hung systemd: $(cat "$T/unit.err")"
ok "a hung systemd: StartSession of a unit waits and fails ('did not answer in time'); profd answers other calls meanwhile"
