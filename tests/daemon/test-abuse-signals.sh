#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: eavesdropping on other users' sessions. On a bus that, like the
# system bus, forbids eavesdropping but lets anyone add match rules, uid 2
# subscribes to every signal while uid 65534 profiles its own process with
# profctl (which waits for Finished) and with one-shot busctl calls: uid 2
# sees no signal of those sessions (paths, states, run ids, errors), while
# profctl, the client that started its session, still gets its Finished.
# And what uid 2 learns by asking is the same for "exists but not yours" as
# for "does not exist": sessions, runs, and run ids it submits itself.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}" "${PROFCTL:?}" "${WATCH_SIGNALS:?}"

BUS_POLICY='<allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>'
start_bus
start_profd
health_before

as_other "$WATCH_SIGNALS" "$BUS" >"$T/other-signals" &
watcher=$!
CHILDREN+=("$watcher")
wait_until 120 test -s "$T/other-signals"
[[ $(head -n 1 "$T/other-signals") == ready ]] || fail "the watcher did not start"

spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 1
target=$SPAWNED
mkdir -m 700 "$T/nobody" && chown $NOBODY "$T/nobody"
as_nobody "$PROFCTL" --address="$BUS" record -p "$target" -d 1 -o "$T/nobody/out.folded" 2>"$T/record.err" ||
	fail "profctl record as uid 65534 failed (did its Finished arrive?): $(cat "$T/record.err")"
grep -q split_ "$T/nobody/out.folded" || fail "profctl record wrote no profile"
path=$(as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$target" 99 300000 0 | awk '{ print $3 }' | tr -d '"')
[[ $(wait_finished "$path") == completed ]] || fail "the one-shot session failed"
# the bus delivers in order: once the watcher has seen a NameOwnerChanged of a connection made
# now, it has seen every signal sent to it before
owner_changes() { grep -c '^NameOwnerChanged ' "$T/other-signals" || true; }
seen=$(owner_changes)
bctl get-property $DEST $MGR_PATH $MGR Version >/dev/null
wait_until 30 eval '(($(owner_changes) > seen))' ||
	fail "the watcher saw not even the bus's own broadcasts: it cannot tell"
kill "$watcher"
if grep -q ' /org/profd' "$T/other-signals"; then
	fail "uid $OTHER saw signals of sessions not its own: $(grep ' /org/profd' "$T/other-signals" | head -n 5)"
fi
ok "uid $OTHER's match rules see no signal of uid 65534's sessions; profctl still got its Finished"

# the same answer for "not yours" as for "not there"
norm() { sed -e "s|$2|ID|g"; }
other_run=$(as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR ListRuns | grep -o '"[0-9]*-[0-9]*-[0-9]*"' | head -n 1 | tr -d '"')
[[ -n $other_run ]] || fail "uid 65534 has no run"
for method in GetRun DeleteRun; do
	a=$(expect_error org.profd.Profiler1.Error.NoSuchRun \
		as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR $method s "$other_run" | norm x "$other_run")
	b=$(expect_error org.profd.Profiler1.Error.NoSuchRun \
		as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR $method s no-such-run | norm x no-such-run)
	[[ $a == "$b" ]] || fail "$method tells another user's run ($a) from a missing one ($b)"
done
got=$(as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR SubmitRun s "$(record_with_id "$other_run")" |
	cut -d' ' -f2 | tr -d '"')
[[ $got == "$other_run" ]] || fail "SubmitRun with another user's run id answered differently: $got"
as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR GetRun s "$other_run" | grep -q '\\"status\\":\\"completed\\"' ||
	fail "uid $OTHER's SubmitRun changed uid 65534's run"
for call in "get-property $DEST $path $SES State" "call $DEST $path $SES Stop"; do
	a=$(expect_error org.freedesktop.DBus.Error.UnknownObject \
		as_other busctl --address="$BUS" $call | norm x "${path##*/}")
	b=$(expect_error org.freedesktop.DBus.Error.UnknownObject \
		as_other busctl --address="$BUS" ${call//${path##*/}/0000000000000000} | norm x 0000000000000000)
	[[ $a == "$b" ]] || fail "'$call' tells another user's session ($a) from a missing one ($b)"
done
ok "another user's runs and sessions answer exactly as missing ones; its run ids are free to reuse"
health_after "signal eavesdropping"
