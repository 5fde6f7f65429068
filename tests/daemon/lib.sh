# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the daemon integration tests: a private dbus-daemon, profd on it
# (state in a temporary directory), and busctl helpers. Sourced, not run.
#
# Environment (from tests/daemon/meson.build): PROFD, WORKLOAD_SPLIT,
# FIXTURES_DIR, PROFD_UNIT.

set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../test-util.sh"

: "${PROFD:?PROFD must name the profd binary}"
: "${WORKLOAD_SPLIT:?WORKLOAD_SPLIT must name the workload-split binary}"

T=$(mktemp -d /tmp/profd-test.XXXXXX)
chmod 755 "$T" # the unprivileged test user reaches the bus socket through it
BUS="unix:path=$T/bus"
DEST=org.profd.Profiler1
MGR_PATH=/org/profd/Profiler1
MGR=org.profd.Profiler1.Manager
SES=org.profd.Profiler1.Session
NOBODY=65534
BUS_PID=
PROFD_PID=
CHILDREN=()

cleanup() {
	local p rc=$? reports
	exec 3>&2 2>/dev/null # the shell reports each killed job otherwise
	for p in "${CHILDREN[@]}" $PROFD_PID $BUS_PID; do
		kill -9 "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [[ $rc != 0 && -f $T/profd.log && -z ${FAILED:-} ]]; then
		echo "--- last lines of the profd log:" >&3
		tail -n 30 "$T/profd.log" >&3
	fi
	# sanitizer findings in profd fail the test even when every check passed
	reports=$(grep -hE -A12 'runtime error|ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer' "$T"/*.log || true)
	rm -rf "$T"
	if [[ -n $reports ]]; then
		echo "FAIL: sanitizer reports in profd's log:" >&3
		echo "$reports" >&3
		exit 1
	fi
	exit $rc
}
trap cleanup EXIT

fail() {
	FAILED=1
	echo "FAIL: $*" >&2
	if [[ -f $T/profd.log ]]; then
		echo "--- last lines of the profd log:" >&2
		tail -n 20 "$T/profd.log" >&2
	fi
	exit 1
}

ok() {
	echo "ok - $*"
}

# start_bus: a private dbus-daemon on $BUS; a test may write its own configuration to
# $T/bus.conf first, otherwise it is a bus of BUS_TYPE (session) with BUS_LIMITS (e.g.
# '<limit name="max_message_size">65536</limit>'), the rules in BUS_POLICY, by default
# allowing everything, and then BUS_INCLUDES (e.g. '<include>FILE</include>')
BUS_TYPE=session
BUS_POLICY='<allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>'
start_bus() {
	[[ -f $T/bus.conf ]] || cat >"$T/bus.conf" <<EOC
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>$BUS_TYPE</type>
  <listen>$BUS</listen>
  <auth>EXTERNAL</auth>
  ${BUS_LIMITS:-}
  <policy context="default">
    $BUS_POLICY
  </policy>
  ${BUS_INCLUDES:-}
</busconfig>
EOC
	dbus-daemon --config-file="$T/bus.conf" --nofork --print-address=3 3>"$T/bus.address" \
		2>"$T/bus.log" &
	BUS_PID=$!
	wait_until 30 test -s "$T/bus.address" || fail "dbus-daemon did not start: $(cat "$T/bus.log")"
}

# start_profd [ARGS...]: start profd on the private bus and wait until it answers (through the
# command in PROFD_WRAPPER, which must exec profd, if a test sets one)
PROFD_WRAPPER=()
start_profd() {
	[[ -f $T/profd.conf ]] || : >"$T/profd.conf"
	# under AddressSanitizer a quarantine far below its 256 MiB default, and freed memory given
	# back, so that profd's RSS shows what it keeps (a test's own ASAN_OPTIONS come after, and win)
	ASAN_OPTIONS="quarantine_size_mb=16:thread_local_quarantine_size_kb=256:allocator_release_to_os_interval_ms=100${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
		"${PROFD_WRAPPER[@]}" "$PROFD" --address="$BUS" --state-dir="$T/state" --config="$T/profd.conf" "$@" \
		2>>"$T/profd.log" &
	PROFD_PID=$!
	wait_until 30 profd_answers || fail "profd did not come up on the bus"
}

profd_answers() {
	kill -0 "$PROFD_PID" 2>/dev/null || fail "profd exited during start-up"
	busctl --address="$BUS" get-property $DEST $MGR_PATH $MGR Version >/dev/null 2>&1
}

# stop_profd [SIGNAL]: signal profd (default TERM) and wait; its exit status in PROFD_RC
stop_profd() {
	PROFD_RC=0
	kill -"${1:-TERM}" "$PROFD_PID"
	{ wait "$PROFD_PID"; } 2>/dev/null || PROFD_RC=$? # no "Killed" noise
	PROFD_PID=
}

bctl() {
	busctl --address="$BUS" "$@"
}

# as_nobody CMD...: run a command as uid/gid 65534 (spawn "${AS_NOBODY[@]}" CMD for a
# background one, so that its pid is the command's)
AS_NOBODY=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
as_nobody() {
	"${AS_NOBODY[@]}" "$@"
}

# as_other CMD...: the same as a second unprivileged uid, 2 ('bin' of base-passwd: dbus-daemon
# refuses uids without a passwd entry)
OTHER=2
getent passwd $OTHER >/dev/null || fail "uid $OTHER has no passwd entry: dbus-daemon would refuse it"
AS_OTHER=(setpriv --reuid=$OTHER --regid=$OTHER --clear-groups)
as_other() {
	"${AS_OTHER[@]}" "$@"
}

mgr() {
	bctl call $DEST $MGR_PATH $MGR "$@"
}

# expect_error NAME CMD...: CMD (a busctl call) must fail with the D-Bus error NAME
expect_error() {
	local want=$1 out got
	shift
	if out=$(SYSTEMD_LOG_LEVEL=debug "$@" 2>&1); then
		fail "expected $want from '$*', but the call succeeded"
	fi
	got=$(grep -o 'error-name=[^ ]*' <<<"$out" | tail -n 1 | cut -d= -f2)
	[[ $got == "$want" ]] ||
		fail "expected $want from '$*', got '${got:-no error}': $(tail -n 2 <<<"$out")"
	# the error message, for callers that check what it says
	grep -o 'error-message=.*' <<<"$out" | tail -n 1 | cut -d= -f2-
}

# spawn CMD...: start a background process that cleanup kills; its pid in SPAWNED
spawn() {
	"$@" &
	SPAWNED=$!
	CHILDREN+=("$SPAWNED")
}

# spawn_workload [THREADS] CMD... (CMD ends in the workload and its arguments): spawn,
# then wait until it runs the workload with THREADS threads (default 1), past the
# shell's fork and setpriv's exec
spawn_workload() {
	local threads=1
	[[ $1 =~ ^[0-9]+$ ]] && { threads=$1; shift; }
	spawn "$@"
	wait_until 30 runs_program "$SPAWNED" "$WORKLOAD_SPLIT" "$threads" ||
		fail "the workload '$*' did not start"
}

# start_session PID HZ DURATION_USEC [N KEY TYPE VALUE...]: print the session path
start_session() {
	local pid=$1 hz=$2 usec=$3
	shift 3
	local opts=("${@:-0}")
	mgr StartSession 'uuta{sv}' "$pid" "$hz" "$usec" "${opts[@]}" | awk '{ print $3 }' | tr -d '"'
}

# prop PATH NAME: a session property's value, unquoted
prop() {
	bctl get-property $DEST "$1" $SES "$2" | cut -d' ' -f2- | tr -d '"'
}

# state_is PATH STATE...: the session's State is one of the STATEs (for wait_until)
state_is() {
	local s want
	s=$(prop "$1" State)
	for want in "${@:2}"; do
		[[ $s == "$want" ]] && return 0
	done
	return 1
}

# wait_state PATH STATE [SECONDS]: SECONDS (default 60) of the wall clock, a hang guard
wait_state() {
	wait_until "${3:-60}" state_is "$1" "$2" || fail "session $1 is '$(prop "$1" State)', not '$2'"
}

# wait_finished PATH [SECONDS]: wait for completed or failed, print it (SECONDS as wait_state's)
wait_finished() {
	wait_until "${2:-60}" state_is "$1" completed failed ||
		fail "session $1 did not finish: still '$(prop "$1" State)'"
	prop "$1" State
}

# finished_session AS... PID HZ USEC: start a session of PID as the command prefix AS (e.g.
# "${AS_NOBODY[@]}", or nothing for root), wait until it completed, print its path
finished_session() {
	local n=$(($# - 3)) path
	path=$("${@:1:n}" busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"${@:n+1:3}" 0 | awk '{ print $3 }' | tr -d '"')
	[[ $(wait_finished "$path") == completed ]] || fail "a session failed: $(prop "$path" Error)"
	echo "$path"
}

# file_says FILE TEXT: FILE holds TEXT (for wait_until)
file_says() {
	[[ $(cat "$1" 2>/dev/null) == "$2" ]]
}

# stall_terminals DIR N SESSION_PATH FORMAT UID: N ExportToFd calls as UID into terminals whose
# output is stopped (pty-exports.py, which needs EXPORT_FD3); returns once all N are waiting
stall_terminals() {
	mkdir -p "$1"
	spawn /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/pty-exports.py" "$@"
	wait_until 120 file_says "$1/pending" "$2" ||
		fail "the $2 terminal exports did not all start waiting"
}

# drain_terminals DIR: read the terminals of stall_terminals; "STATUS BYTES" per call in DIR/drained
drain_terminals() {
	touch "$1/drain"
	wait_until 120 test -s "$1/drained" || fail "the terminal exports did not end once read"
}

# export_to FILE PATH FORMAT: the session's export through ExportToFd
export_to() {
	bctl call $DEST "$2" $SES ExportToFd sh "$3" 3 3>"$1"
}

# --- the abuse suite: profd's descriptors, memory and service to a second user, before and after

profd_fds() {
	ls "/proc/$PROFD_PID/fd" | wc -l
}

# profd_threads_named NAME: how many of profd's threads are named NAME
profd_threads_named() {
	cat /proc/"$PROFD_PID"/task/*/comm 2>/dev/null | grep -cx "$1"
}

# profd_threads_at_least NAME N: for wait_until
profd_threads_at_least() { (($(profd_threads_named "$1") >= $2)); }

# profd_fds_at_most N: for wait_until
profd_fds_at_most() { (($(profd_fds) <= $1)); }

profd_rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$PROFD_PID/status"
}

# record_with_id ID [FIXTURE]: a valid record (default the sparse fixture) with run_id ID
record_with_id() {
	sed "s/77-1764460800000000001-3/$1/" "$FIXTURES_DIR/valid/${2:-sparse}.json"
}

# other_served: the second user is answered in full: a property, its runs, a record of its own
# stored, read back and deleted
other_served() {
	local id=other-$RANDOM$RANDOM
	as_other busctl --address="$BUS" get-property $DEST $MGR_PATH $MGR Version >/dev/null ||
		fail "uid $OTHER got no answer to a property read"
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR ListRuns >/dev/null ||
		fail "uid $OTHER cannot list its runs"
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR SubmitRun s "$(record_with_id "$id")" \
		>/dev/null || fail "uid $OTHER cannot submit a run"
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR GetRun s "$id" >/dev/null ||
		fail "uid $OTHER cannot read its run back"
	as_other busctl --address="$BUS" call $DEST $MGR_PATH $MGR DeleteRun s "$id" ||
		fail "uid $OTHER cannot delete its run"
}

# health_before: note profd's fd count and memory, and check the second user is served
health_before() {
	other_served
	HEALTH_FDS=$(profd_fds)
	HEALTH_RSS=$(profd_rss_kb)
}

# health_after WHAT [MAX_RSS_GROWTH_KB]: profd still runs and serves the second user, its fds are
# back to what they were (sessions and exports of the attack have ended) and its memory grew by
# at most MAX_RSS_GROWTH_KB (default 128 MiB: what the symbol cache learned of the targets'
# binaries and allocator caches may stay; an attack that piles up in memory grows past it)
health_after() {
	local fds rss
	kill -0 "$PROFD_PID" 2>/dev/null || fail "$1: profd exited"
	other_served
	# a leaked fd stays; one a background task (an inflated debug copy, a run record being
	# written) holds for a moment may come back beside the count, so the wait is the verdict
	wait_until 120 profd_fds_at_most "$HEALTH_FDS" ||
		fail "$1: profd holds $(profd_fds) fds, $HEALTH_FDS before: $(ls -lv "/proc/$PROFD_PID/fd")"
	fds=$(profd_fds)
	rss=$(profd_rss_kb)
	((rss - HEALTH_RSS <= ${2:-131072})) ||
		fail "$1: profd's RSS grew from $HEALTH_RSS to $rss KiB (at most ${2:-131072} KiB allowed)"
	ok "$1: profd serves uid $OTHER, holds $fds fds ($HEALTH_FDS before), RSS $HEALTH_RSS -> $rss KiB"
}
