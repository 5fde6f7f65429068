#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kinds of programs through profd on a private bus (profctl record, folded), each
# with a known hot function, profiled by an unprivileged caller (the sandboxed
# unwinder, which gets every file through profd's target-file rules) and by root:
#   container  a workload in its own mount and pid namespaces, run from a path that
#              does not exist on the host (also profctl --local), from a path where the
#              host has another program, stripped with its debug file beside it there,
#              and a JIT with its perf map in its own /tmp: named through the target's
#              root (never the host's files); chroot'd, stripped, its debug file beside it
#   static     a statically linked C program without frame pointers: named, 3:1
#   cxx-throw  C++ that throws and catches in its hot path: frames named through the
#              throw (libstdc++'s and libgcc's unwinder) up to main
#   replaced   a binary replaced on disk (renamed over) while it runs: named from
#              the file that runs, not the new one
# usage: test-programs.sh KIND FILE... (env: PROFD, PROFCTL, WORKLOAD_SPLIT, CHECK_FOLDED)
source "$(dirname "$0")/../daemon/lib.sh"
: "${PROFCTL:?PROFCTL must name the profctl binary}"
: "${CHECK_FOLDED:?CHECK_FOLDED must name check-folded.py}"
kind=$1
shift

# record AS... -- PID OUT: a 3 s profile of PID at 999 Hz, by the caller AS (nothing: root;
# "--local": root, in profctl's own process)
record() {
	local who=() how=--address=$BUS
	while [[ $1 != -- ]]; do
		who+=("$1")
		shift
	done
	[[ ${who[*]} != --local ]] || { how=--local; who=(); }
	"${who[@]}" "$PROFCTL" "$how" record -p "$2" -d 3 -F 999 --no-kernel -f folded \
		>"$3" 2>"$3.err" || fail "profctl $how record of pid $2 failed: $(cat "$3.err")"
}

check() {
	python3 "$CHECK_FOLDED" "$@" || fail "$1: check '${*:2}' failed"
}

# the split workload's profile: its functions named, 3:1, reaching main
check_split() {
	check "$1" split split_heavy split_light 0.65 0.85
	check "$1" reach split_heavy main 0.9
}

# runs_exe PID PATH: PID has exec'd PATH (as its mount namespace names it) and used 2 ticks of CPU
runs_exe() {
	[[ $(readlink "/proc/$1/exe" 2>/dev/null) == "$2" ]] && has_run "$1" 2
}

# child_of PID: its first child (unshare --fork's)
child_of() {
	local c
	c=$(cat "/proc/$1/task/$1/children" 2>/dev/null) && [[ -n $c ]] && echo "${c%% *}"
}

# child_runs PID PATH: print the child of PID that runs_exe PATH
child_runs() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		runs_exe "$c" "$2" && echo "$c" && return 0
	done
	return 1
}

# in_container DIR FILE... -- ARGS...: new mount and pid namespaces where DIR is a fresh tmpfs
# with copies of the FILEs in DIR/opt/app, and the first FILE's copy runs there as nobody; its
# host pid in CONTAINED. With CONTAINER_TMP=1, /tmp is a fresh tmpfs there too (DIR made in it).
# The namespaces' first process stays root, so that it dies with unshare (which cleanup
# kills), and the program with it.
in_container() {
	local dir=$1 files=() inner init
	shift
	while [[ $1 != -- ]]; do
		files+=("$1")
		shift
	done
	shift
	inner=$dir/opt/app/$(basename "${files[0]}")
	spawn env CONTAINER_TMP="${CONTAINER_TMP:-}" \
		unshare --mount --pid --fork --kill-child --mount-proc --propagation private \
		bash -c 'mkdir -p "$1" && mount -t tmpfs -o mode=755 profd-test "$1" &&
			mkdir -p "$1/opt/app" && cp "${@:3:$2}" "$1/opt/app" || exit
			# a /tmp of its own: mounted after the copy, the files may live in the host'"'"'s /tmp
			if [[ -n $CONTAINER_TMP ]]; then
				mount --move "$1" /mnt && rmdir "$1" &&
					mount -t tmpfs -o mode=1777 profd-test /tmp && mkdir -p "$1" &&
					mount --move /mnt "$1" || exit
			fi
			shift $(($2 + 2)); "$@" & wait' \
		_ "$dir" ${#files[@]} "${files[@]}" "${AS_NOBODY[@]}" "$inner" "$@"
	wait_until 30 child_of "$SPAWNED" >/dev/null || fail "the container did not start"
	init=$(child_of "$SPAWNED")
	wait_until 30 child_runs "$init" "$inner" >/dev/null || fail "the container did not run $inner"
	CONTAINED=$(child_runs "$init" "$inner")
}

start_bus
start_profd

case $kind in
container)
	# a stripped program whose debug file lies beside it (.gnu_debuglink), in the container only:
	# only the target's root leads there (map_files has no directory to look beside). First, before
	# profd has learnt the names of workload-split, whose build-id the stripped copy shares.
	mkdir "$T/stripped"
	in_container "$T/stripped" "$2" "$3" -- 120 1
	record "${AS_NOBODY[@]}" -- $CONTAINED "$T/stripped.folded"
	check_split "$T/stripped.folded"
	ok "a stripped program with its debug file beside it in the container: named from that file"

	# a path the host does not have
	mkdir "$T/ct"
	in_container "$T/ct" "$WORKLOAD_SPLIT" -- 120 1
	pid=$CONTAINED
	[[ ! -e $T/ct/opt ]] || fail "the container's files are visible on the host"
	record "${AS_NOBODY[@]}" -- $pid "$T/nobody.folded"
	record -- $pid "$T/root.folded"
	record --local -- $pid "$T/local.folded"
	for f in nobody root local; do
		check_split "$T/$f.folded"
		check "$T/$f.folded" absent "$(basename "$WORKLOAD_SPLIT")+0x"
	done
	ok "a program at a path absent on the host, in its own namespaces: named, 3:1 (nobody, root, --local)"

	# the host has another program at the same path
	mkdir -p "$T/decoy/opt/app"
	in_container "$T/decoy" "$WORKLOAD_SPLIT" -- 120 1
	pid=$CONTAINED
	cp "$1" "$T/decoy/opt/app/$(basename "$WORKLOAD_SPLIT")"
	record "${AS_NOBODY[@]}" -- $pid "$T/decoy.folded"
	check_split "$T/decoy.folded"
	check "$T/decoy.folded" absent 'demo::'
	ok "another program at that path on the host: the container's own is named"

	# chroot'd (no namespaces): /proc/PID/maps names its files from our root, not its own; a
	# stripped static program (nothing else to put in the chroot), its debug file beside it
	mkdir -p "$T/chroot/app"
	objcopy --only-keep-debug "$5" "$T/chroot/app/static.debug"
	objcopy --strip-all --add-gnu-debuglink="$T/chroot/app/static.debug" "$5" "$T/chroot/app/static"
	spawn chroot --userspec=$NOBODY:$NOBODY "$T/chroot" /app/static 120 1
	wait_until 30 runs_exe $SPAWNED "$T/chroot/app/static" || fail "the chroot'd program did not start"
	record "${AS_NOBODY[@]}" -- $SPAWNED "$T/chroot.folded"
	check_split "$T/chroot.folded"
	ok "a chroot'd stripped program, its debug file beside it: named from that file"

	# a JIT writing its perf map into the container's own /tmp, named by its pid in there; the
	# host's /tmp has a map under its host pid, naming everything otherwise
	CONTAINER_TMP=1 in_container "$T/jit" "$4" -- 120
	decoy=/tmp/perf-$CONTAINED.map
	trap 'rc=$?; rm -f "$decoy"; (exit $rc); cleanup' EXIT
	echo "1000 7ffffffff000 decoy_jit" >"$decoy"
	[[ ! -e $T/jit ]] || fail "the container's /tmp is the host's"
	record "${AS_NOBODY[@]}" -- $CONTAINED "$T/jit.folded"
	check "$T/jit.folded" leaf jit_spin_loop 0.5
	check "$T/jit.folded" absent decoy_jit
	ok "a JIT's perf map in the container's /tmp, under its pid there: named from it"
	;;
static)
	# no program interpreter, no dynamic section: nothing but the executable is mapped from a file
	! readelf -lW "$1" | grep -Eq '^ +(INTERP|DYNAMIC) ' || fail "$1 is not statically linked"
	spawn "${AS_NOBODY[@]}" "$1" 120 1
	wait_until 30 runs_exe $SPAWNED "$1" || fail "$1 did not start"
	for who in nobody root; do
		if [[ $who == nobody ]]; then record "${AS_NOBODY[@]}" -- $SPAWNED "$T/$who.folded"
		else record -- $SPAWNED "$T/$who.folded"; fi
		check_split "$T/$who.folded"
	done
	ok "a statically linked program without frame pointers: named, 3:1, reaching main"
	;;
cxx-throw)
	hot='throw_hot(unsigned long)'
	spawn "${AS_NOBODY[@]}" "$1" 120
	wait_until 30 runs_exe $SPAWNED "$1" || fail "$1 did not start"
	record "${AS_NOBODY[@]}" -- $SPAWNED "$T/throw.folded"
	check "$T/throw.folded" reach "$hot" main 0.9
	# inside the throw: called from the function that threw, reaching the catch and main
	check "$T/throw.folded" caller __cxa_throw "$hot" 0.9
	check "$T/throw.folded" reach __cxa_throw 'catch_loop(unsigned long)' 0.9 30
	check "$T/throw.folded" reach _Unwind_RaiseException main 0.9 30
	ok "C++ throwing and catching: named through the throw, up to main"
	;;
replaced)
	mkdir "$T/app"
	exe=$T/app/$(basename "$WORKLOAD_SPLIT")
	cp "$WORKLOAD_SPLIT" "$exe"
	spawn "${AS_NOBODY[@]}" "$exe" 120 1
	wait_until 30 runs_exe $SPAWNED "$exe" || fail "$exe did not start"
	# as a package upgrade does: the new file written beside, renamed over the old
	cp "$1" "$exe.new"
	mv "$exe.new" "$exe"
	record "${AS_NOBODY[@]}" -- $SPAWNED "$T/replaced.folded"
	check_split "$T/replaced.folded"
	check "$T/replaced.folded" absent 'demo::'
	ok "a binary replaced on disk while it runs: named from the file that runs"
	;;
*)
	fail "unknown kind '$kind'"
	;;
esac
