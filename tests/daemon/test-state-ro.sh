#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A read-only state directory (a full or failing disk behaves alike): profd
# starts, serves what it has, and acknowledges only what is durable —
# SubmitRun and DeleteRun fail with the real cause and change nothing, so
# after a restart on a writable directory every run is as the clients were
# told; a file it cannot set aside is logged as such; a session whose
# exports cannot be written says why.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}"

start_bus
start_profd
mgr SubmitRun s "$(record_with_id kept)" >/dev/null || fail "SubmitRun failed"
mgr SubmitRun s "$(record_with_id doomed)" >/dev/null || fail "SubmitRun failed"
stop_profd
echo garbage >"$T/state/runs/00000000000000ee.run"

# the state directory read-only, in a mount namespace of profd's own
PROFD_WRAPPER=(unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
	"$T/state")
start_profd
grep -q "00000000000000ee.run.*cannot be loaded.*nor set aside" "$T/profd.log" ||
	fail "a corrupt file that could not be set aside is not logged as such: $(grep 00ee "$T/profd.log")"
! grep -q "set aside run record.*00000000000000ee" "$T/profd.log" ||
	fail "profd claims it set aside a file it could not rename"
mgr GetRun s kept >/dev/null || fail "a stored run cannot be read from a read-only directory"
msg=$(expect_error System.Error.EROFS mgr SubmitRun s "$(record_with_id lost)")
[[ $msg == *"Read-only file system"* ]] || fail "SubmitRun on a read-only directory does not say why: $msg"
expect_error org.profd.Profiler1.Error.NoSuchRun mgr GetRun s lost >/dev/null
! mgr ListRuns | grep -q '"lost"' || fail "a run that could not be saved is listed"
msg=$(expect_error System.Error.EROFS mgr DeleteRun s doomed)
[[ $msg == *"Read-only file system"* ]] || fail "DeleteRun on a read-only directory does not say why: $msg"
mgr GetRun s doomed >/dev/null || fail "a run whose deletion failed is gone"
spawn_workload "$WORKLOAD_SPLIT" 300 1
target=$SPAWNED
path=$(start_session "$target" 99 300000)
[[ $(wait_finished "$path") == failed ]] || fail "a session whose exports cannot be written did not fail"
[[ $(prop "$path" Error) == *"Read-only file system"* ]] ||
	fail "the session's error does not say why: $(prop "$path" Error)"
ok "read-only state directory: SubmitRun, DeleteRun and sessions fail saying why, nothing acknowledged is lost"
stop_profd

PROFD_WRAPPER=()
start_profd
mgr GetRun s doomed >/dev/null || fail "the run whose deletion was refused did not survive the restart"
mgr GetRun s kept >/dev/null || fail "a run was lost"
expect_error org.profd.Profiler1.Error.NoSuchRun mgr GetRun s lost >/dev/null
mgr DeleteRun s doomed || fail "DeleteRun failed on a writable directory"
stop_profd
start_profd
expect_error org.profd.Profiler1.Error.NoSuchRun mgr GetRun s doomed >/dev/null
ok "after a restart every run is as the clients were told"
