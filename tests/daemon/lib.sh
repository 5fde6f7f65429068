# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the daemon integration tests: a private dbus-daemon, profd on it
# (state in a temporary directory), and busctl helpers. Sourced, not run.
#
# Environment (from tests/daemon/meson.build): PROFD, WORKLOAD_SPLIT,
# FIXTURES_DIR, PROFD_UNIT.

set -euo pipefail

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

# start_bus: a private dbus-daemon on $BUS; a test may write its own policy to $T/bus.conf
# first, otherwise it is a session bus that allows everything
start_bus() {
	[[ -f $T/bus.conf ]] || cat >"$T/bus.conf" <<EOC
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>$BUS</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOC
	dbus-daemon --config-file="$T/bus.conf" --nofork --print-address=3 3>"$T/bus.address" \
		2>"$T/bus.log" &
	BUS_PID=$!
	for _ in $(seq 100); do
		[[ -s $T/bus.address ]] && return 0
		sleep 0.05
	done
	fail "dbus-daemon did not start: $(cat "$T/bus.log")"
}

# start_profd [ARGS...]: start profd on the private bus and wait until it answers
start_profd() {
	[[ -f $T/profd.conf ]] || : >"$T/profd.conf"
	"$PROFD" --address="$BUS" --state-dir="$T/state" --config="$T/profd.conf" "$@" \
		2>>"$T/profd.log" &
	PROFD_PID=$!
	for _ in $(seq 200); do
		if busctl --address="$BUS" get-property $DEST $MGR_PATH $MGR Version >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$PROFD_PID" 2>/dev/null || fail "profd exited during start-up"
		sleep 0.05
	done
	fail "profd did not come up on the bus"
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

# wait_state PATH STATE [SECONDS]
wait_state() {
	local s=
	for _ in $(seq $((${3:-20} * 20))); do
		s=$(prop "$1" State)
		[[ $s == "$2" ]] && return 0
		sleep 0.05
	done
	fail "session $1 is '$s', not '$2'"
}

# wait_finished PATH [SECONDS]: wait for completed or failed, print it
wait_finished() {
	local s=
	for _ in $(seq $((${2:-20} * 20))); do
		s=$(prop "$1" State)
		if [[ $s == completed || $s == failed ]]; then
			echo "$s"
			return 0
		fi
		sleep 0.05
	done
	fail "session $1 did not finish: still '$s'"
}

# export_to FILE PATH FORMAT: the session's export through ExportToFd
export_to() {
	bctl call $DEST "$2" $SES ExportToFd sh "$3" 3 3>"$1"
}
