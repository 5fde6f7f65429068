# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by the shell tests, sourced: wait for what a test needs instead of
# sleeping and hoping it happened, so that a loaded machine makes a test
# slower, never wrong (tests/README.md).

# wait_until SECONDS CMD...: run CMD every 50 ms until it succeeds; status 1 if it
# still fails after SECONDS. The deadline only guards against a hang: make it generous.
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}

# runs_program PID PROGRAM [THREADS]: PID has exec'd PROGRAM (it is no longer the
# shell that forked it) and runs at least THREADS threads (default 1)
runs_program() {
	local threads
	[[ $(readlink "/proc/$1/exe" 2>/dev/null) == "$(readlink -f "$2")" ]] || return 1
	threads=$(awk '/^Threads:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	((${threads:-0} >= ${3:-1}))
}

# catches_signal PID NUMBER [PROGRAM]: PID has its handler for signal NUMBER in place (2: Ctrl-C
# is now its to handle; 10: SIGUSR1 no longer kills it). Give PROGRAM for a process started with
# '&': until it has exec'd PROGRAM, PID is a fork of the shell, whose own handlers would count.
catches_signal() {
	local caught
	[[ -z ${3:-} ]] || runs_program "$1" "$3" || return 1
	caught=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	(((16#${caught:-0} >> ($2 - 1) & 1) != 0))
}

# cpu_ticks PID: the CPU time PID's threads have used so far, user + system, in clock ticks
cpu_ticks() {
	# the command name may hold spaces: count the fields after its last ')'
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# has_run PID TICKS: PID's threads have used at least TICKS clock ticks of CPU time (a
# program that has run 2 ticks is past its dynamic loader and in its own code)
has_run() {
	local ticks
	ticks=$(cpu_ticks "$1" 2>/dev/null)
	((${ticks:-0} >= $2))
}
