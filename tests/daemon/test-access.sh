#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Access control (DESIGN.md §6): uid 65534 may profile only its own dumpable
# processes and sees, stops and deletes only its own sessions and runs; root
# may do everything.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}"

start_bus
start_profd

nobody_mgr() {
	as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR "$@"
}

spawn "$WORKLOAD_SPLIT" 20 1
root_target=$SPAWNED
spawn "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 20 1
own_target=$SPAWNED
spawn "${AS_NOBODY[@]}" /usr/bin/python3 -c '
import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
time.sleep(20)'
undumpable=$SPAWNED
sleep 0.3

msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	nobody_mgr StartSession 'uuta{sv}' "$root_target" 99 1000000 0)
[[ $msg == *"another user"* ]] || fail "denial does not say why: $msg"
ok "uid 65534 cannot profile root's process: $msg"

msg=$(expect_error org.freedesktop.DBus.Error.AccessDenied \
	nobody_mgr StartSession 'uuta{sv}' "$undumpable" 99 1000000 0)
[[ $msg == *dumpable* ]] || fail "denial of a non-dumpable process does not say why: $msg"
ok "uid 65534 cannot profile its own non-dumpable process"

own=$(nobody_mgr StartSession 'uuta{sv}' "$own_target" 199 800000 0 | awk '{ print $3 }' | tr -d '"')
[[ -n $own ]] || fail "uid 65534 could not profile its own process"
root_session=$(start_session "$root_target" 99 800000)

# each sees its own; root sees both
nobody_list=$(nobody_mgr ListSessions)
[[ $nobody_list == *"$own"* && $nobody_list != *"$root_session"* ]] ||
	fail "uid 65534 lists the wrong sessions: $nobody_list"
root_list=$(mgr ListSessions)
[[ $root_list == *"$own"* && $root_list == *"$root_session"* ]] ||
	fail "root does not list every session: $root_list"
expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" call $DEST "$root_session" $SES Stop >/dev/null
expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" get-property $DEST "$root_session" $SES State >/dev/null
ok "sessions: each uid sees only its own, root sees all"

[[ $(wait_finished "$own") == completed ]] || fail "uid 65534's session failed: $(prop "$own" Error)"
[[ $(wait_finished "$root_session") == completed ]] || fail "root's session failed"
as_nobody busctl --address="$BUS" call $DEST "$own" $SES Export s folded >/dev/null ||
	fail "uid 65534 cannot export its own session"
own_run=$(prop "$own" RunId)
root_run=$(prop "$root_session" RunId)
ok "uid 65534 profiled its own process"

# runs: ownership follows the submitter (or the session's owner)
sparse_id=$(nobody_mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/sparse.json")" | cut -d' ' -f2 | tr -d '"')
full_id=$(mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/full.json")" | cut -d' ' -f2 | tr -d '"')
nobody_runs=$(nobody_mgr ListRuns)
[[ $nobody_runs == *"$sparse_id"* && $nobody_runs == *"$own_run"* ]] ||
	fail "uid 65534 does not see its runs: $nobody_runs"
[[ $nobody_runs != *"$full_id"* && $nobody_runs != *"$root_run"* ]] ||
	fail "uid 65534 sees root's runs: $nobody_runs"
expect_error org.profd.Profiler1.Error.NoSuchRun nobody_mgr GetRun s "$full_id" >/dev/null
expect_error org.profd.Profiler1.Error.NoSuchRun nobody_mgr DeleteRun s "$root_run" >/dev/null
expect_error org.freedesktop.DBus.Error.AccessDenied \
	nobody_mgr SubmitRun s "$(cat "$FIXTURES_DIR/valid/full.json")" >/dev/null
mgr GetRun s "$full_id" >/dev/null || fail "root's run is gone"
mgr GetRun s "$root_run" >/dev/null || fail "root's session run is gone"
mgr GetRun s "$sparse_id" >/dev/null || fail "root cannot read uid 65534's run"
nobody_mgr DeleteRun s "$sparse_id" || fail "uid 65534 cannot delete its own run"
ok "runs: uid 65534 cannot read, replace or delete root's; root reads all"
