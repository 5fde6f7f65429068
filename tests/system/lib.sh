# SPDX-License-Identifier: LGPL-2.1-or-later
# The booted test system (sourced by tests/system/test-*.sh; see README.md here).
#
# A minimal Debian 12 is built once per build directory (debootstrap, cached in
# $BUILD_ROOT/tests/system/rootfs and rebuilt when the package list changes),
# then every test boots its own copy: an overlay on top of the cached tree, the
# build installed into it with `meson install --destdir`, systemd as PID 1
# under systemd-nspawn, the real system bus with the installed policy and
# activation file. Commands run inside with nsenter.
#
# Environment (from tests/system/meson.build): BUILD_ROOT, SOURCE_ROOT, PROFD,
# PROFCTL, UNWINDER (profd-unwinder), and WORKLOADS (space-separated paths, copied to /opt/profd-tests/).

set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../test-util.sh"

: "${BUILD_ROOT:?BUILD_ROOT must name the meson build directory}"
: "${SOURCE_ROOT:?SOURCE_ROOT must name the source tree}"
: "${PROFD:?PROFD must name the profd binary}"
: "${PROFCTL:?PROFCTL must name the profctl binary}"
: "${UNWINDER:?UNWINDER must name the profd-unwinder binary}"

SYSTEM_CACHE=$BUILD_ROOT/tests/system
ROOTFS=$SYSTEM_CACHE/rootfs
DEBIAN_SUITE=${PROFD_DEBIAN_SUITE:-bookworm}
DEBIAN_MIRROR=${PROFD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Bump when the recipe below changes in a way the package list does not show.
ROOTFS_RECIPE=1
# systemd as PID 1, the system bus, logind and user managers (pam_systemd), and
# ps/pgrep for the tests, a debuginfod server and client (debuginfod-find: the
# client library a debuginfod drop-in is for, test-network.sh); the runtime
# libraries of the build are added to these.
ROOTFS_PACKAGES=(systemd systemd-sysv dbus libpam-systemd procps debuginfod)

# the unwinder helper confines itself with Landlock, which nspawn's filter lacks
NSPAWN_EXTRA_CALLS="landlock_create_ruleset landlock_add_rule landlock_restrict_self"

DEST=org.profd.Profiler1
MGR_PATH=/org/profd/Profiler1
MGR=org.profd.Profiler1.Manager
SES=org.profd.Profiler1.Session
TESTS_BIN=/opt/profd-tests

T=
ROOT=
NSPAWN_PID=
CONTAINER_PID=
CGROUPS=()
LOWER_DIRS=

# --- results ---------------------------------------------------------------

ok() {
	echo "ok - $*"
}

fail() {
	echo "FAIL: $*" >&2
	if [[ -n $CONTAINER_PID ]]; then
		echo "--- profd's journal (last lines):" >&2
		in_container journalctl --no-pager -q -n 30 -u profd.service >&2 || true
	fi
	exit 1
}

system_cleanup() {
	local rc=$?
	exec 3>&2 2>/dev/null
	if [[ -n $NSPAWN_PID ]]; then
		kill -TERM "$NSPAWN_PID" || true
		for _ in $(seq 50); do
			kill -0 "$NSPAWN_PID" || break
			sleep 0.1
		done
		kill -KILL "$NSPAWN_PID" || true
		wait "$NSPAWN_PID" || true
	fi
	local cg
	for cg in "${CGROUPS[@]}"; do
		for _ in $(seq 20); do
			[[ -d $cg ]] || break
			find "$cg" -depth -type d -exec rmdir {} + && break
			sleep 0.1
		done
	done
	if [[ -n $ROOT ]] && mountpoint -q "$ROOT"; then
		umount "$ROOT" || umount -l "$ROOT" || true
	fi
	[[ -n $T ]] && rm -rf "$T"
	exit $rc
}

# --- the cached root file system -------------------------------------------

# runtime_packages BINARY...: the Debian packages of every library the binaries
# load (usr-merge aware: dpkg may know a library by its /lib or /usr/lib path)
runtime_packages() {
	local libs lib alt owners pkg
	libs=$(ldd "$@" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' |
		sort -u)
	# one dpkg-query for every name of every library (it is slow per call)
	owners=$(for lib in $libs; do
		case $lib in
		/usr/*) alt=${lib#/usr} ;;
		*) alt=/usr$lib ;;
		esac
		printf '%s\n' "$lib" "$alt" "$(realpath "$lib")"
	done | sort -u | xargs dpkg-query -S 2>/dev/null | grep -v '^diversion') || true # some names are unknown
	for lib in $libs; do
		case $lib in
		/usr/*) alt=${lib#/usr} ;;
		*) alt=/usr$lib ;;
		esac
		pkg=$(awk -v a="$lib" -v b="$alt" -v c="$(realpath "$lib")" -F': ' \
			'$2 == a || $2 == b || $2 == c { sub(/:.*/, "", $1); print $1; exit }' <<<"$owners")
		[[ -n $pkg ]] || { echo "no Debian package owns $lib" >&2; return 1; }
		echo "$pkg"
	done | sort -u
}

# with_lock FILE MODE CMD...: run CMD under flock (MODE -s shared, -x exclusive)
with_lock() {
	local file=$1 mode=$2
	shift 2
	(
		flock "$mode" 9
		"$@"
	) 9>"$file"
}

build_rootfs() { # stamp text
	local stamp=$1 new=$ROOTFS.new log=$SYSTEM_CACHE/debootstrap.log
	[[ -f $ROOTFS.stamp && $(cat "$ROOTFS.stamp") == "$stamp" ]] && return 0
	echo "# building the test system in $ROOTFS (debootstrap $DEBIAN_SUITE, once per build directory)"
	rm -rf "$new" "$ROOTFS" "$ROOTFS.stamp"
	local packages
	packages=$(sed -n 's/^packages //p' <<<"$stamp")
	if ! debootstrap --variant=minbase --include="${packages// /,}" "$DEBIAN_SUITE" "$new" \
		"$DEBIAN_MIRROR" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		echo "debootstrap failed (log: $log)" >&2
		return 1
	fi
	# a machine id per boot (nspawn gives one), no first-boot questions
	: >"$new/etc/machine-id"
	echo profd-test >"$new/etc/hostname"
	rm -rf "$new"/var/cache/apt/archives/*.deb
	mv "$new" "$ROOTFS"
	echo "$stamp" >"$ROOTFS.stamp"
}

# ensure_rootfs: the cached tree, built or rebuilt when its recipe changed
ensure_rootfs() {
	local packages
	command -v debootstrap >/dev/null || fail "debootstrap is missing (apt install debootstrap)"
	command -v systemd-nspawn >/dev/null ||
		fail "systemd-nspawn is missing (apt install systemd-container)"
	mkdir -p "$SYSTEM_CACHE"
	packages=$(runtime_packages "$PROFD" "$PROFCTL" "$UNWINDER" $WORKLOADS) ||
		fail "cannot derive the runtime packages of the build"
	packages=$(printf '%s\n' "${ROOTFS_PACKAGES[@]}" $packages | sort -u | tr '\n' ' ')
	with_lock "$SYSTEM_CACHE/rootfs.lock" -x build_rootfs \
		"recipe $ROOTFS_RECIPE $DEBIAN_SUITE"$'\n'"packages ${packages% }" ||
		fail "cannot build the test system"
	LOWER_DIRS=$ROOTFS
}

# build_dev_layer STAMP PACKAGE...: an overlay upper directory over the root
# file system with PACKAGES installed by apt-get inside
build_dev_layer() {
	local stamp=$1 new=$DEV_LAYER.new log=$SYSTEM_CACHE/dev-layer.log
	shift
	[[ -f $DEV_LAYER.stamp && $(cat "$DEV_LAYER.stamp") == "$stamp" ]] && return 0
	echo "# installing $* over the test system in $DEV_LAYER (once per build directory)"
	rm -rf "$DEV_LAYER" "$DEV_LAYER.stamp" "$new"
	mkdir -p "$new/upper" "$new/work" "$new/root"
	mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$new/upper,workdir=$new/work" "$new/root" ||
		return 1
	systemd-nspawn -q -D "$new/root" --register=no --keep-unit --console=pipe \
		env DEBIAN_FRONTEND=noninteractive sh -c \
		'apt-get update -q && apt-get install -y -q --no-install-recommends "$@"' sh "$@" \
		>"$log" 2>&1 </dev/null
	local rc=$?
	umount "$new/root"
	if [[ $rc != 0 ]]; then
		tail -n 20 "$log" >&2
		echo "apt-get install in the test system failed (log: $log)" >&2
		return 1
	fi
	rm -rf "$new/upper/var/cache/apt/archives/"*.deb
	mv "$new/upper" "$DEV_LAYER"
	rm -rf "$new"
	echo "$stamp" >"$DEV_LAYER.stamp"
}

# ensure_dev_layer PACKAGE...: boot_system then boots the root file system with
# PACKAGES installed (a second cached layer, for tests that build inside)
ensure_dev_layer() {
	[[ -n $LOWER_DIRS ]] || ensure_rootfs
	DEV_LAYER=$SYSTEM_CACHE/dev-layer
	with_lock "$SYSTEM_CACHE/rootfs.lock" -x build_dev_layer \
		"$(cat "$ROOTFS.stamp")"$'\n'"dev $*" "$@" ||
		fail "cannot install $* in the test system"
	LOWER_DIRS=$DEV_LAYER:$ROOTFS
}

# readme_packages: the packages the README's install block installs
readme_packages() {
	local packages
	packages=$(readme_block 1 "meson install -C build" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
		awk '/^apt-get install/ { for (i = 3; i <= NF; i++) if ($i !~ /^-/) print $i }')
	[[ -n $packages ]] || fail "the README's install block has no apt-get install line"
	echo $packages
}

# --- one booted system per test --------------------------------------------

# boot_system: a fresh overlay of the cached tree with the build installed,
# booted; CONTAINER_PID is its PID 1 (as the host sees it)
boot_system() {
	[[ -n $LOWER_DIRS ]] || ensure_rootfs
	T=$(mktemp -d /var/tmp/profd-system.XXXXXX)
	trap system_cleanup EXIT
	mkdir "$T/upper" "$T/work" "$T/root"
	ROOT=$T/root
	mount -t overlay overlay -o "lowerdir=$LOWER_DIRS,upperdir=$T/upper,workdir=$T/work" "$ROOT" ||
		fail "cannot mount an overlay on $LOWER_DIRS"
	[[ ${NO_INSTALL:-} ]] || install_build
	mkdir -p "$ROOT$TESTS_BIN"
	# shellcheck disable=SC2086
	[[ -z ${WORKLOADS:-} ]] || cp $WORKLOADS "$ROOT$TESTS_BIN/"

	# a cgroup of its own: with --keep-unit the container's systemd builds its
	# tree under nspawn's cgroup, and two containers in one cgroup race there
	# (units failing with 219/CGROUP)
	CGROUPS=()
	local h
	if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		CGROUPS=(/sys/fs/cgroup/${T##*/})
	else
		for h in systemd unified; do
			[[ -d /sys/fs/cgroup/$h ]] && CGROUPS+=("/sys/fs/cgroup/$h/${T##*/}")
		done
	fi
	mkdir "${CGROUPS[@]}" || fail "cannot create the container's cgroups ${CGROUPS[*]}"
	(
		for h in "${CGROUPS[@]}"; do echo $BASHPID >"$h/cgroup.procs"; done
		# nspawn's own seccomp filter refuses these inside unless they are added;
		# the open file limits a host's systemd starts with (the hard one is its
		# DefaultLimitNOFILE=) rather than the test runner's, so that the unit's
		# LimitNOFILE= is what profd gets, as on a real system (a runner without
		# CAP_SYS_RESOURCE gets its own hard limit instead, if that is lower)
		exec systemd-nspawn -D "$ROOT" --boot --register=no --keep-unit --console=passive \
			--capability=all --system-call-filter="perf_event_open bpf $NSPAWN_EXTRA_CALLS" \
			--rlimit=NOFILE=1024:524288 --machine="profd-test-$$" >"$T/nspawn.log" 2>&1
	) &
	NSPAWN_PID=$!
	# the container's PID 1 is the child of nspawn in a PID namespace of its
	# own, once it has exec'd systemd; then wait for the boot to finish
	local state= c
	for _ in $(seq 600); do
		kill -0 $NSPAWN_PID 2>/dev/null || fail "systemd-nspawn exited: $(cat "$T/nspawn.log")"
		if [[ -z $CONTAINER_PID ]]; then
			for c in $(cat /proc/$NSPAWN_PID/task/*/children 2>/dev/null); do
				[[ $(readlink /proc/$c/ns/pid) != "$(readlink /proc/$NSPAWN_PID/ns/pid)" &&
					$(cat /proc/$c/comm 2>/dev/null) == systemd ]] && CONTAINER_PID=$c
			done
		fi
		if [[ -n $CONTAINER_PID ]]; then
			state=$(in_container timeout 60 systemctl is-system-running --wait 2>/dev/null) || true
			[[ $state == running || $state == degraded ]] && break
		fi
		sleep 0.1
	done
	[[ -n $CONTAINER_PID ]] || fail "the container's PID 1 did not appear"
	if [[ $state != running ]]; then
		local failed
		failed=$(in_container systemctl list-units --failed --plain --no-legend | awk '{ print $1 }')
		fail "the system did not boot cleanly ($state); failed: $failed
$(for u in $failed; do in_container journalctl -b --no-pager -q -u "$u"; done 2>&1 | tail -n 30)"
	fi
}

install_build() {
	meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$ROOT" >"$T/install.log" 2>&1 ||
		fail "meson install --destdir failed: $(tail -n 20 "$T/install.log")"
}

# in_container CMD...: run CMD inside as root, with a clean environment
in_container() {
	nsenter -t "$CONTAINER_PID" -a env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 ${SYSTEMD_LOG_LEVEL:+SYSTEMD_LOG_LEVEL=$SYSTEMD_LOG_LEVEL} "$@"
}

# add_user NAME: an ordinary user with a home directory; prints its uid
add_user() {
	in_container useradd --create-home --shell /bin/bash "$1" || fail "cannot add user $1"
	in_container id -u "$1"
}

# as_user NAME CMD...: run CMD inside as NAME (no PAM session: setpriv, as a
# service would); start_user_manager gives NAME a logind user manager instead
as_user() {
	local user=$1
	shift
	nsenter -t "$CONTAINER_PID" -a env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$user" \
		USER="$user" LOGNAME="$user" LANG=C.UTF-8 \
		${SYSTEMD_LOG_LEVEL:+SYSTEMD_LOG_LEVEL=$SYSTEMD_LOG_LEVEL} \
		setpriv --reuid="$user" --regid="$user" --init-groups -- "$@"
}

# spawn_as USER CMD...: start CMD in the background inside as USER (root: as
# root); prints its pid as the container sees it. The container's systemd
# reaps it; it dies with the container.
spawn_as() {
	local user=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	if [[ $user == root ]]; then
		in_container sh -c "$cmd >/dev/null 2>&1 </dev/null & echo \$!"
	else
		in_container sh -c "setpriv --reuid=$user --regid=$user --init-groups -- env HOME=/home/$user $cmd >/dev/null 2>&1 </dev/null & echo \$!"
	fi
}

# start_user_manager NAME: NAME's systemd --user (user@UID.service) runs, as a
# login would start it; prints the uid. as_user_manager NAME CMD... runs CMD
# against it (systemctl --user, systemd-run --user).
start_user_manager() {
	local uid
	uid=$(in_container id -u "$1")
	in_container loginctl enable-linger "$1" || fail "loginctl enable-linger $1 failed"
	for _ in $(seq 300); do
		[[ $(in_container systemctl is-active "user@$uid.service" 2>/dev/null) == active ]] &&
			{ echo "$uid"; return 0; }
		sleep 0.1
	done
	fail "user@$uid.service did not start: $(in_container systemctl status --no-pager "user@$uid.service" 2>&1)"
}

as_user_manager() {
	local user=$1 uid
	shift
	uid=$(in_container id -u "$user")
	as_user "$user" env XDG_RUNTIME_DIR="/run/user/$uid" "$@"
}

# readme_block N WANT: the Nth ```sh block of the README's "Install as a system
# service" section, which must contain WANT (so an edit of the README that moves
# blocks fails here instead of running the wrong one)
readme_block() {
	local block
	block=$(awk -v n="$1" '
		/^## / { in_section = ($0 == "## Install as a system service") }
		in_section && /^```sh$/ { i++; if (i == n) { copying = 1; next } }
		copying && /^```$/ { exit }
		copying { print }' "$SOURCE_ROOT/README.md")
	[[ $block == *"$2"* ]] ||
		fail "README.md's install section has no block $1 with '$2' (found: ${block:-nothing})"
	echo "$block"
}

# --- profd inside ----------------------------------------------------------

mgr() { # METHOD SIGNATURE ARGS...: a Manager call as root on the system bus
	in_container busctl call $DEST $MGR_PATH $MGR "$@"
}

# busctl_error CMD...: CMD (in_container or as_user running busctl) must fail;
# prints "ERROR-NAME: message"
busctl_error() {
	local out
	if out=$(SYSTEMD_LOG_LEVEL=debug "$@" 2>&1); then
		fail "'$*' succeeded, an error was expected"
	fi
	echo "$(grep -o 'error-name=[^ ]*' <<<"$out" | tail -n 1 | cut -d= -f2): $(grep -o 'error-message=.*' <<<"$out" | tail -n 1 | cut -d= -f2-)"
}

# probe_unit NAME CMD...: NAME.service, a copy of the installed profd.service
# that runs CMD once instead of profd (only Type=, BusName=, Restart= and
# ExecStart= differ), so CMD runs in profd's sandbox; start it with systemctl
probe_unit() {
	local name=$1 unit=/lib/systemd/system/profd.service changed
	shift
	sed -e "s|^ExecStart=.*|ExecStart=$*|" -e 's|^Type=notify$|Type=oneshot|' \
		-e '/^BusName=/d' -e '/^Restart=/d' "$ROOT$unit" >"$ROOT/etc/systemd/system/$name.service"
	changed=$(diff "$ROOT$unit" "$ROOT/etc/systemd/system/$name.service" | grep -c '^[<>]') || true
	[[ $changed == 6 ]] || fail "$name.service differs from profd's unit in $changed diff lines, not 6"
	in_container systemctl daemon-reload
}

main_pid() {
	in_container systemctl show -P MainPID profd.service
}

# wait_active: profd.service active (running) with a MainPID; prints the MainPID
wait_active() {
	local pid=0
	for _ in $(seq 300); do
		if [[ $(in_container systemctl is-active profd.service) == active ]]; then
			pid=$(main_pid)
			[[ $pid != 0 ]] && { echo "$pid"; return 0; }
		fi
		sleep 0.1
	done
	fail "profd.service is not active: $(in_container systemctl status --no-pager profd.service 2>&1)"
}

# session_prop PATH NAME: a session property's value, unquoted
session_prop() {
	in_container busctl get-property $DEST "$1" $SES "$2" | cut -d' ' -f2- | tr -d '"'
}

# wait_gone PID SECONDS: whether the container's process PID ends within SECONDS
wait_gone() {
	for _ in $(seq $(($2 * 10))); do
		in_container kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# session_is PATH STATE: the session's State is STATE (for wait_until)
session_is() {
	[[ $(session_prop "$1" State) == "$2" ]]
}

# wait_session PATH STATE [SECONDS]: SECONDS (default 30) of the wall clock, a hang guard
wait_session() {
	wait_until "${3:-30}" session_is "$1" "$2" ||
		fail "session $1 is '$(session_prop "$1" State)', not '$2'"
}

# run_ids: the run ids root sees, one a line, sorted
run_ids() {
	in_container profctl --json runs | python3 -c '
import json, sys
print("\n".join(sorted(r["run_id"] for r in json.load(sys.stdin))))'
}
