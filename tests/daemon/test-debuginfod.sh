#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debug info from debuginfod (#12, DESIGN.md §8 "Network"): a stripped copy of
# workload-split (no .symtab, no debuglink) whose debug file only a real
# debuginfod server on localhost has. Without DEBUGINFOD_URLS profd asks no
# server; with it, profd fetches the file once, on its own thread (the session
# does not wait for it), into the cache; the session running names the samples
# after the file arrived, and later sessions name split_* from the cache.
# A build-id the server does not have is asked for once however many
# sessions want it; profctl --local (libdw in-process) never asks a server.
# (The unwinder has no network and an empty environment: it cannot ask one.)
source "$(dirname "$0")/lib.sh"
: "${PROFCTL:?PROFCTL must name the profctl binary}"

mkdir -p "$T/srv" "$T/bin"
objcopy --only-keep-debug "$WORKLOAD_SPLIT" "$T/srv/workload-split.debug"
objcopy --strip-all "$WORKLOAD_SPLIT" "$T/bin/workload-stripped"
build_id=$(readelf -n "$T/bin/workload-stripped" | awk '/Build ID:/ { print $3 }')
[[ $build_id =~ ^[0-9a-f]{40}$ ]] || fail "the stripped workload has no build-id: '$build_id'"
! readelf -S "$T/bin/workload-stripped" | grep -qE '\.symtab|gnu_debuglink' ||
	fail "the stripped workload still has a .symtab or a debuglink"

# another copy whose build-id no server knows (its last byte changed in the note)
python3 - "$T/bin/workload-stripped" "$T/bin/workload-unknown" "$build_id" <<'EOP'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
bid = bytes.fromhex(sys.argv[3])
at = data.find(bid)
assert at > 0 and data.find(bid, at + 1) < 0
data[at + len(bid) - 1] ^= 0xff
open(sys.argv[2], "wb").write(data)
EOP
chmod 755 "$T/bin/workload-unknown"
unknown_id=$(readelf -n "$T/bin/workload-unknown" | awk '/Build ID:/ { print $3 }')

# the server, on a free port of localhost (another process may take a port between the probe
# and the bind: a few tries)
url=
for _ in 1 2 3 4 5; do
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	spawn debuginfod -F "$T/srv" -p "$port" -d "$T/debuginfod.sqlite" -v 2>>"$T/server.log"
	server=$SPAWNED
	# scanned and serving: the file by its build-id
	if wait_until 60 python3 -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5).read()' \
		"http://127.0.0.1:$port/buildid/$build_id/debuginfo" 2>/dev/null; then
		url=http://127.0.0.1:$port
		break
	fi
	kill "$server" 2>/dev/null || true
done
[[ -n $url ]] || fail "debuginfod did not serve $build_id: $(tail -5 "$T/server.log")"
ok "a debuginfod server at $url serves the stripped workload's debug file ($build_id)"

# server_gets ID: how many times the server was asked for ID's debug info
server_gets() {
	grep -c "GET /buildid/$1/debuginfo" "$T/server.log" || true
}
asked_before=$(server_gets "$build_id")

# folded_of PID: a finished 1 s session of PID (as root: its own unwinder), folded
folded_of() {
	local path
	path=$(finished_session "$1" 499 1000000)
	"$EXPORT_TO_FD" "$BUS" "$path" folded "$T/folded" 2>/dev/null || fail "ExportToFd folded failed"
	cat "$T/folded"
}

start_bus

# --- without DEBUGINFOD_URLS: unnamed, and no server asked
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH
start_profd
spawn "$T/bin/workload-stripped" 120 1
wait_until 30 runs_program "$SPAWNED" "$T/bin/workload-stripped" || fail "the stripped workload did not start"
stripped=$SPAWNED
folded=$(folded_of $stripped)
[[ $folded == *workload-stripped* ]] || fail "the session lacks the workload: ${folded:0:300}"
[[ $folded != *split_* ]] || fail "the stripped workload is named without its debug file"
[[ $(server_gets "$build_id") == "$asked_before" ]] || fail "profd asked a server without DEBUGINFOD_URLS"
[[ ! -e $T/state/debuginfod ]] || fail "profd made a debuginfod cache without DEBUGINFOD_URLS"
stop_profd
ok "without DEBUGINFOD_URLS: the stripped workload unnamed, no server asked"

# --- with it: fetched once into the cache while the first session runs, which names the
# samples after the arrival; later sessions name from the cache
export DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/cache
# libdebuginfod remembers a miss itself (cache_miss_s, 600 s): not here, so that only profd's
# own memory of failures keeps it from asking again
mkdir -m 700 "$T/cache"
echo 0 >"$T/cache/cache_miss_s"
start_profd
cached=$T/cache/$build_id/debuginfo
path=$(start_session $stripped 499 8000000)
[[ $path == /org/profd/* ]] || fail "StartSession gave '$path'"
wait_until 60 test -s "$cached" || fail "no debug file in the cache: $(grep -i debuginfod "$T/profd.log" | tail -3)"
[[ $(prop "$path" State) != completed ]] || fail "the session ended before the fetch (the test needs it running)"
[[ $(wait_finished "$path" 60) == completed ]] || fail "the session failed: $(prop "$path" Error)"
"$EXPORT_TO_FD" "$BUS" "$path" folded "$T/folded" 2>/dev/null || fail "ExportToFd folded failed"
heavy=$(awk '/split_heavy/ { n += $NF } END { print n + 0 }' "$T/folded")
unnamed=$(awk '/workload-stripped\+0x/ { n += $NF } END { print n + 0 }' "$T/folded")
((heavy > 0)) || fail "the session during the fetch names no sample split_heavy: $(head -c 300 "$T/folded")"
ok "the session during the fetch names its later samples: $heavy in split_heavy ($unnamed unnamed in the workload)"
cmp -s "$cached" "$T/srv/workload-split.debug" || fail "the cached file is not the server's"
[[ $(stat -c %u "$T/cache") == 0 && $(stat -c %a "$T/cache") == 700 ]] ||
	fail "the cache directory is not profd's alone: $(stat -c '%U %a' "$T/cache")"
folded=$(folded_of $stripped)
heavy=$(awk '/split_heavy/ { n += $NF } END { print n + 0 }' <<<"$folded")
light=$(awk '/split_light/ { n += $NF } END { print n + 0 }' <<<"$folded")
((heavy > light && light > 0)) || fail "a later session does not name split_*: ${folded:0:300}"
grep -q "fetched the debug info of build-id $build_id" "$T/profd.log" ||
	fail "profd did not log the fetch"
gets=$(($(server_gets "$build_id") - asked_before))
((gets == 1)) || fail "the server was asked $gets times for $build_id"
ok "a later session names from the cache: split_heavy $heavy, split_light $light; the server was asked once"

# --- a build-id the server lacks: asked once, not by every session
spawn "$T/bin/workload-unknown" 120 1
wait_until 30 runs_program "$SPAWNED" "$T/bin/workload-unknown" || fail "the second workload did not start"
unknown=$SPAWNED
folded_of $unknown >/dev/null
wait_until 30 grep -q "cannot fetch the debug info of build-id $unknown_id" "$T/profd.log" ||
	fail "profd did not report the failed fetch of $unknown_id"
for _ in 1 2 3; do
	folded_of $unknown >/dev/null
done
gets=$(server_gets "$unknown_id")
((gets == 1)) || fail "the server was asked $gets times for $unknown_id (a failure is to be remembered)"
ok "a build-id the server lacks: asked once across 4 sessions"

# the daemon still names from the cache after a restart, without asking again
stop_profd
[[ $PROFD_RC == 0 ]] || fail "profd exited with $PROFD_RC"
start_profd
folded=$(folded_of $stripped)
[[ $folded == *split_heavy* ]] || fail "after a restart, the cached debug file was not used"
gets=$(($(server_gets "$build_id") - asked_before))
((gets == 1)) || fail "after a restart the server was asked again ($gets)"
stop_profd
ok "after a restart the cache names the workload with no request"

# --- profctl --local with DEBUGINFOD_URLS: libdw in profctl asks no server itself (the file it
# would fetch is the one the server has: a fetch would name split_*)
export DEBUGINFOD_CACHE_PATH=$T/local-cache
gets=$(server_gets "$build_id")
"$PROFCTL" --local record -d 1 -f folded -o "$T/local.folded" -p $stripped 2>"$T/local.err" ||
	fail "profctl --local record failed: $(cat "$T/local.err")"
grep -q workload-stripped "$T/local.folded" || fail "profctl --local did not profile the workload"
[[ $(server_gets "$build_id") == "$gets" && ! -e $T/local-cache ]] ||
	fail "profctl --local asked the debuginfod server"
! grep -q split_ "$T/local.folded" || fail "profctl --local named the stripped workload"
ok "profctl --local asks no debuginfod server"
