# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced after lib.sh by tests that put processes in cgroups of their own:
# the cgroup2 mount, cgroups made (and removed at exit once their processes
# are gone), processes started inside one.

mount=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[[ -n $mount ]] || fail "cgroup2 is not mounted"
CGROUPS=() # removed at exit, deepest first, once their processes are gone
remove_cgroups() {
	local rc=$? p c
	set +e
	for p in "${CHILDREN[@]}"; do
		kill -9 "$p"
		wait "$p"
	done 2>/dev/null
	for c in "${CGROUPS[@]}"; do
		wait_until 10 rmdir "$c" 2>/dev/null
	done
	(exit $rc)
	cleanup
}
trap remove_cgroups EXIT

# make_cgroup REL [OWNER]: create the cgroup REL (and its missing parents), owned by OWNER
make_cgroup() {
	local rel=$1 path=$mount part=
	IFS=/ read -ra parts <<<"${rel#/}"
	for part in "${parts[@]}"; do
		path=$path/$part
		[[ -d $path ]] && continue
		mkdir "$path" || fail "cannot create cgroup $path"
		CGROUPS=("$path" "${CGROUPS[@]}")
	done
	[[ -z ${2:-} ]] || chown "$2" "$path" "$path/cgroup.procs"
}

# spawn "${IN_CGROUP[@]}" "$mount$REL" CMD...: CMD inside the cgroup REL (moved there by
# this shell's user before it runs, setpriv and all)
IN_CGROUP=(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"')

# spawn_in REL [AS...] CMD...: spawn_workload of CMD moved into the cgroup REL first
spawn_in() {
	local rel=$1
	shift
	spawn_workload "${IN_CGROUP[@]}" "$mount$rel" "$@"
}
