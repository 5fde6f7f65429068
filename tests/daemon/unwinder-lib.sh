# SPDX-License-Identifier: LGPL-2.1-or-later
# Helpers of the sandboxed-unwinder tests; sourced after lib.sh.

# libc_compressed_debug: sets build_id and debug, libc's build-id and its separate debug
# file, which must have compressed debug sections (libc6-dbg's); fails without one
libc_compressed_debug() {
	build_id=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ { print $3 }')
	debug=/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug
	if [[ -z $build_id || ! -r $debug ]] ||
		! readelf -SW "$debug" | grep -q '\.debug_info.* C *[0-9]'; then
		fail "no compressed separate debug file of libc: install libc6-dbg (tools/run-tests does)"
	fi
}

# split_session_uncopied CONFIG: profd with CONFIG, on a fresh state directory where system
# debug files get no inflated copies (libdw inflates libc's on the unwinder's heap, what the
# callers weigh), runs a 3 s session of workload-split at 999 Hz with kernel frames as root;
# fails unless it completed with samples. Its path in 'path'.
split_session_uncopied() {
	printf '%s\n' "$1" >"$T/profd.conf"
	rm -rf "$T/state"
	mkdir "$T/state"
	: >"$T/state/inflated-debug"
	start_profd
	spawn_workload 2 "$WORKLOAD_SPLIT" 60 2
	path=$(start_session "$SPAWNED" 999 3000000 1 kernel b false)
	[[ $(wait_finished "$path" 60) == completed ]] || fail "session failed: $(prop "$path" Error)"
	(($(prop "$path" SamplesCaptured) > 0)) || fail "the session took no sample"
	kill "$SPAWNED"
}

# unwinder_pid UID: the pid of the newest unwinder profd started for UID
unwinder_pid() {
	grep -o "started the unwinder of uid $1 (pid [0-9]*)" "$T/profd.log" | tail -n 1 |
		grep -o '[0-9]*)' | tr -d ')'
}

# newer_unwinder UID PID: profd started an unwinder for UID after PID (for wait_until)
newer_unwinder() {
	[[ -n $(unwinder_pid "$1") && $(unwinder_pid "$1") != "$2" ]]
}

# has_unwinder UID: profd started an unwinder for UID (for wait_until: asks again each time)
has_unwinder() {
	[[ -n $(unwinder_pid "$1") ]]
}

# sampled SESSION: it took a sample (for wait_until: asks again each time)
sampled() {
	(($(prop "$1" SamplesCaptured) > 0))
}

# session_as USER... -- PID HZ DURATION_USEC [KEY TYPE VALUE...]: start a session as the user
# (without kernel frames, and with the options given), print its path
session_as() {
	local who=()
	while [[ $1 != -- ]]; do
		who+=("$1")
		shift
	done
	shift
	"${who[@]}" busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"$1" "$2" "$3" $((1 + ($# - 3) / 3)) kernel b false "${@:4}" | awk '{ print $3 }' | tr -d '"'
}

# two_users_sessions DURATION_USEC: uid NOBODY and uid OTHER each profile their own
# workload-split (two busy threads) at 999 Hz at once; sets nobody_target, other_target and
# the sessions a (NOBODY's) and b (OTHER's)
two_users_sessions() {
	spawn_workload 2 "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 2
	nobody_target=$SPAWNED
	spawn_workload 2 "${AS_OTHER[@]}" "$WORKLOAD_SPLIT" 300 2
	other_target=$SPAWNED
	a=$(session_as "${AS_NOBODY[@]}" -- "$nobody_target" 999 "$1")
	b=$(session_as "${AS_OTHER[@]}" -- "$other_target" 999 "$1")
	[[ -n $a && -n $b ]] || fail "the sessions did not start"
}

# lost_nothing SESSION: it lost no sample and no record, by every count its metrics keep
# (samples_dropped, which sums the ring's LOST samples, throttling and the backlog's cap,
# and those parts, and the side-band and other records that name the samples)
lost_nothing() {
	bctl --json=short call $DEST "$1" $SES GetMetrics | python3 -c 'import json, sys
m = json.loads(json.load(sys.stdin)["data"][0])
lost = {k: m[k] for k in ("samples_dropped", "lost_samples", "lost_records", "throttled_samples",
                          "backlog_dropped", "records_dropped", "side_band_lost") if m.get(k)}
sys.exit(" ".join("%s=%s" % kv for kv in sorted(lost.items())) if lost else 0)'
}

# metric SESSION NAME: a field of its metrics (empty when absent)
metric() {
	bctl --json=short call $DEST "$1" $SES GetMetrics | python3 -c 'import json, sys
m = json.loads(json.load(sys.stdin)["data"][0])
print(m.get(sys.argv[1], ""))' "$2"
}
