#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# profd has no network unless the operator adds the README's debuginfod
# drop-in: by default a network namespace of its own with only loopback and
# AF_UNIX sockets, and elfutils' debuginfod client cannot reach a server from
# profd's sandbox; the drop-in, followed literally, gives profd the system's
# network, IP sockets, DEBUGINFOD_URLS and a cache directory — the same
# client, in a copy of the unit with the drop-in, fetches a debug file from a
# debuginfod server on this machine into that cache — and profd still works.
source "$(dirname "$0")/lib.sh"

boot_system
in_container systemctl start profd.service
pid=$(wait_active)

# interfaces profd sees: /proc/<pid>/net/dev is read in the process's namespace
interfaces() {
	in_container awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' "/proc/$1/net/dev" | sort | tr '\n' ' '
}
[[ $(interfaces "$pid") == "lo " ]] || fail "profd sees network interfaces: $(interfaces "$pid")"
[[ $(in_container readlink /proc/$pid/ns/net) != "$(in_container readlink /proc/1/ns/net)" ]] ||
	fail "profd shares the system's network namespace"
[[ $(in_container systemctl show -P RestrictAddressFamilies profd.service) == AF_UNIX ]] ||
	fail "RestrictAddressFamilies=$(in_container systemctl show -P RestrictAddressFamilies profd.service)"
ok "no network by default: loopback only in a namespace of its own, AF_UNIX sockets only"

# A debuginfod server in the system (its network is the host's: the port is
# random and retried if taken) serving the debug information of a workload
in_container mkdir -p /srv/debuginfo
in_container cp $TESTS_BIN/workload-split /srv/debuginfo/
build_id=$(readelf -n "$ROOT$TESTS_BIN/workload-split" | awk '/Build ID:/ { print $3 }')
[[ $build_id =~ ^[0-9a-f]{40}$ ]] || fail "workload-split has no build-id: '$build_id'"
url=
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 20000))
	server=$(spawn_as root debuginfod -F /srv/debuginfo -p $port -d /var/tmp/debuginfod.sqlite)
	for _ in $(seq 300); do
		in_container kill -0 "$server" 2>/dev/null || break
		# a fresh cache each time: the client caches "not found" for 10 minutes
		if in_container sh -c 'rm -rf /root/dcache && DEBUGINFOD_URLS=$0 DEBUGINFOD_CACHE_PATH=/root/dcache \
			debuginfod-find debuginfo "$1"' "http://127.0.0.1:$port" "$build_id" >/dev/null 2>&1; then
			url=http://127.0.0.1:$port
			break 2
		fi
		sleep 0.1
	done
	in_container kill "$server" 2>/dev/null || true
done
[[ -n $url ]] || fail "no debuginfod server serves $build_id (5 ports tried)"
ok "a debuginfod server at $url serves workload-split's debug information ($build_id)"

# the client in profd's sandbox, given only the server's address: no network
probe_unit profd-debuginfod /usr/bin/debuginfod-find debuginfo "$build_id"
dropins=/etc/systemd/system/profd-debuginfod.service.d
in_container mkdir -p $dropins
printf '[Service]\nEnvironment=DEBUGINFOD_URLS=%s DEBUGINFOD_CACHE_PATH=/var/tmp/debuginfod\n' "$url" \
	>"$ROOT$dropins/url.conf"
in_container systemctl daemon-reload
! in_container systemctl start profd-debuginfod.service 2>/dev/null ||
	fail "debuginfod-find reached $url from profd's sandbox without the drop-in"
out=$(in_container journalctl -q -u profd-debuginfod.service -o cat)
[[ $out == *"Server query failed"* ]] || fail "debuginfod-find in profd's sandbox failed otherwise: $out"
ok "without the drop-in, the debuginfod client in profd's sandbox cannot reach $url: $(grep -m 1 "Server query failed" <<<"$out")"

# the README's drop-in, literally
block=$(readme_block 2 profd.service.d)
in_container sh -ec "$block" >"$T/dropin.log" 2>&1 ||
	fail "the README's debuginfod drop-in failed: $(cat "$T/dropin.log")"
pid=$(wait_active)
[[ $(in_container readlink /proc/$pid/ns/net) == "$(in_container readlink /proc/1/ns/net)" ]] ||
	fail "with the drop-in, profd still has a network namespace of its own"
families=$(in_container systemctl show -P RestrictAddressFamilies profd.service)
[[ $families == *AF_INET* && $families == *AF_INET6* && $families == *AF_UNIX* ]] ||
	fail "with the drop-in, RestrictAddressFamilies=$families"
environ=$(in_container cat /proc/$pid/environ | tr '\0' '\n')
grep -qx 'DEBUGINFOD_URLS=https://debuginfod.debian.net' <<<"$environ" ||
	fail "profd's environment has no DEBUGINFOD_URLS: $environ"
grep -qx 'DEBUGINFOD_CACHE_PATH=/var/cache/profd/debuginfod' <<<"$environ" ||
	fail "profd's environment has no DEBUGINFOD_CACHE_PATH: $environ"
target=$(spawn_as root $TESTS_BIN/workload-split 30 1)
out=$(in_container profctl record -p "$target" -d 1 -o /root/split.folded 2>&1) ||
	fail "profd does not work with the debuginfod drop-in: $out"
in_container grep -q split_heavy /root/split.folded || fail "profile unnamed with the debuginfod drop-in"
ok "the README's debuginfod drop-in: the system's network ($(interfaces "$pid")), $families, DEBUGINFOD_URLS and DEBUGINFOD_CACHE_PATH in profd's environment; profiling works"

# the same client in a copy of the unit with the README's drop-in (and this
# test's server instead of Debian's) fetches into profd's cache directory
in_container cp /etc/systemd/system/profd.service.d/debuginfod.conf $dropins/
printf '[Service]\nEnvironment=DEBUGINFOD_URLS=%s\n' "$url" >"$ROOT$dropins/url.conf"
in_container systemctl daemon-reload
in_container systemctl start profd-debuginfod.service ||
	fail "debuginfod-find in profd's sandbox with the drop-in failed: $(in_container journalctl -q -u profd-debuginfod.service -o cat)"
cached=/var/cache/profd/debuginfod/$build_id/debuginfo
in_container cmp /srv/debuginfo/workload-split "$cached" ||
	fail "the fetched debug file is not in $cached: $(in_container ls -lR /var/cache/profd)"
[[ $(in_container stat -c '%U %a' /var/cache/profd) == "root 700" ]] ||
	fail "/var/cache/profd is $(in_container stat -c '%U %a' /var/cache/profd), want root 700"
ok "with the drop-in, the debuginfod client in profd's sandbox fetched $cached"

# profd itself, with the drop-in and this test's server: a stripped copy of
# workload-split (no .symtab, no debuglink) has its debug info only there.
# profd fetches it on its own thread while the first session runs; the cache
# then names the next session's split_heavy.
printf '[Service]\nEnvironment=DEBUGINFOD_URLS=%s\n' "$url" >"$ROOT/etc/systemd/system/profd.service.d/url.conf"
in_container rm -rf "/var/cache/profd/debuginfod/$build_id"
in_container systemctl daemon-reload
in_container systemctl restart profd.service
pid=$(wait_active)
objcopy --strip-all "$ROOT$TESTS_BIN/workload-split" "$ROOT/usr/local/bin/workload-stripped"
target=$(spawn_as root /usr/local/bin/workload-stripped 120 1)
out=$(in_container profctl record -p "$target" -d 1 -o /root/stripped1.folded 2>&1) ||
	fail "profd did not profile the stripped workload: $out"
for _ in $(seq 600); do
	in_container test -s "$cached" && break
	sleep 0.1
done
in_container cmp /srv/debuginfo/workload-split "$cached" ||
	fail "profd did not fetch $build_id into $cached: $(in_container journalctl -q -u profd.service -o cat | grep -i debuginfod | tail -3)"
in_container journalctl -q -u profd.service -o cat | grep -q "fetched the debug info of build-id $build_id" ||
	fail "profd did not log its fetch of $build_id"
out=$(in_container profctl record -p "$target" -d 1 -o /root/stripped2.folded 2>&1) ||
	fail "the second session of the stripped workload failed: $out"
in_container grep -q split_heavy /root/stripped2.folded ||
	fail "the session after the fetch does not name split_heavy: $(in_container head -c 300 /root/stripped2.folded)"
in_container kill "$target"
ok "with the drop-in, profd (pid $pid) fetched $build_id by itself into $cached; the next session names split_heavy"
