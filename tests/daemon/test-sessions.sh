#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A session's life as its files and its starter see it: its signals reach the
# connection that started it; at finish only the profile, metrics, record and
# properties are written, the profile formats made on first request and then
# served from the cached file; the run's `reporting` stage covers that writing;
# all of it is still there after a restart.
source "$(dirname "$0")/lib.sh"

start_bus
start_profd

spawn_workload 2 "$WORKLOAD_SPLIT" 30 2
target=$SPAWNED

"$WATCH_SESSION" "$BUS" "$target" 1500000 >"$T/starter" ||
	fail "the starter did not hear Finished: $(cat "$T/starter")"
path=$(head -n 1 "$T/starter")
[[ $(tail -n +2 "$T/starter" | tr '\n' ' ') == "PropertiesChanged resolving PropertiesChanged completed Finished completed " ]] ||
	fail "the starter heard '$(tail -n +2 "$T/starter" | tr '\n' ' ')'"
ok "the starter hears resolving, completed and Finished (others hear nothing: test-abuse-signals.sh)"

id=${path##*/}
dir=$T/state/sessions/$id
files=$(cd "$dir" && ls | sort | tr '\n' ' ')
[[ $files == "metrics profile record session " ]] ||
	fail "a finished session holds '$files', not only its profile, metrics, record and properties"
ok "at finish only the profile, metrics, record and properties are written"

# reporting covers the writing: it began before the profile was written and ended after
# the metrics were (mtimes of the two files bound it from below). mtimes come from the
# kernel's coarse clock: their difference overstates the interval by up to one of its ticks
python3 - "$dir" <<'EOP' || fail "the reporting stage does not cover writing the files"
import json, os, sys, time
d = sys.argv[1]
rec = json.load(open(os.path.join(d, "record")))
rep = [s for s in rec["states"] if s["state"] == "reporting"]
written = os.stat(os.path.join(d, "metrics")).st_mtime_ns - os.stat(os.path.join(d, "profile")).st_mtime_ns
tick = int(time.clock_getres(5) * 1e9)  # CLOCK_REALTIME_COARSE, which stamps mtimes
print("reporting %d ns, profile..metrics written in %d ns (mtime tick %d ns)" % (rep[0]["elapsed_ns"], written, tick))
sys.exit(0 if rep and rep[0]["elapsed_ns"] + tick >= written else 1)
EOP
ok "reporting measures writing the profile, metrics and record"

"$EXPORT_TO_FD" "$BUS" "$path" folded "$T/folded1" 2>/dev/null || fail "ExportToFd folded failed"
[[ -f $dir/folded ]] || fail "the folded export was not kept"
mtime=$(stat -c %Y.%y "$dir/folded")
"$EXPORT_TO_FD" "$BUS" "$path" folded "$T/folded2" 2>/dev/null || fail "the second ExportToFd folded failed"
cmp -s "$T/folded1" "$T/folded2" || fail "two exports of one session differ"
[[ $(stat -c %Y.%y "$dir/folded") == "$mtime" ]] || fail "the second request made the export again"
grep -q split_ "$T/folded1" || fail "the folded export lacks the workload: $(head -c 300 "$T/folded1")"
"$EXPORT_TO_FD" "$BUS" "$path" pprof "$T/p.pb.gz" 2>/dev/null || fail "ExportToFd pprof failed"
gzip -t "$T/p.pb.gz" || fail "the pprof export made on demand is not gzip"
[[ -f $dir/pprof && ! -e $dir/svg ]] || fail "exports made that nobody asked for: $(ls "$dir")"
ok "exports are made on the first request and cached"

# six concurrent first requests for one format make it once and all get the same bytes
pids=()
for i in 1 2 3 4 5 6; do
	"$EXPORT_TO_FD" "$BUS" "$path" svg "$T/svg-$i" 2>/dev/null &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || fail "a concurrent first request for svg failed"
done
for i in 2 3 4 5 6; do
	cmp -s "$T/svg-1" "$T/svg-$i" || fail "concurrent first requests got different bytes"
done
ok "concurrent first requests of a format agree"

# a damaged profile file is refused clearly, never trusted
printf 'PROFDPF1garbage' >"$dir/profile"
expect_error org.freedesktop.DBus.Error.IOError bctl call $DEST "$path" $SES Export s speedscope |
	grep -q "damaged" || fail "a damaged profile was not named"
ok "a damaged profile file is refused"

stop_profd
[[ $PROFD_RC == 0 ]] || fail "profd exited $PROFD_RC on SIGTERM"
start_profd
[[ $(prop "$path" State) == completed ]] || fail "the session did not come back after a restart"
"$EXPORT_TO_FD" "$BUS" "$path" folded "$T/folded3" 2>/dev/null || fail "ExportToFd after restart failed"
bctl call $DEST "$path" $SES Export s folded | grep -q "^ay $(stat -c %s "$T/folded1") " ||
	fail "Export and ExportToFd disagree on the size of the folded export"
cmp -s "$T/folded1" "$T/folded3" || fail "the export changed across a restart"
ok "the session and its cached exports come back after a restart"
