#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# #17 item 7, cache poisoning: an unprivileged user (uid 65534) runs a program
# on a forged copy of libc — the same build-id, the same code, but its debug
# info calls __libc_start_call_main "__evil_start_call_main" — and profiles
# it through profd. Root's profile of a process on the real libc, taken
# next by the same daemon, must still name __libc_start_call_main: names
# computed from one caller's file never reach another caller's profile
# (DESIGN.md §8 "Caches").
source "$(dirname "$0")/lib.sh"

for tool in eu-unstrip objcopy readelf python3; do
	command -v $tool >/dev/null || fail "$tool is missing (packages elfutils, binutils, python3)"
done

# profile PID OUT AS...: a 1.5 s session of PID, started and exported to OUT by AS (a command
# prefix: as_nobody, or command for root)
profile() {
	local pid=$1 out=$2 path state
	shift 2
	path=$("$@" busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
		"$pid" 999 1500000 0 | awk '{ print $3 }' | tr -d '"')
	[[ $path == /org/profd/* ]] || fail "StartSession on $pid gave '$path'"
	state=$(wait_finished "$path")
	[[ $state == completed ]] || fail "session of $pid $state: $(prop "$path" Error)"
	"$@" "$EXPORT_TO_FD" "$BUS" "$path" folded "$out" || fail "cannot export the session of $pid"
}

# map_path PID NAME: the path PID maps a file called NAME from (waits until it does)
map_path() {
	local p
	for _ in $(seq 600); do # 30 s: a hang guard
		p=$(awk -v n="/$2" 'index($6, n) == length($6) - length(n) + 1 { print $6; exit }' \
			"/proc/$1/maps" 2>/dev/null)
		[[ -n $p ]] && { echo "$p"; return 0; }
		sleep 0.05
	done
	fail "process $1 maps no $2"
}

start_bus
start_profd

# the real libc, as the workload maps it, and its separate debug info (libc6-dbg)
spawn_workload "$WORKLOAD_SPLIT" 120 1 # outlives the look at its maps, however slow a loaded machine
libc=$(readlink -f "$(map_path "$SPAWNED" libc.so.6)")
loader=$(readlink -f "$(map_path "$SPAWNED" ld-linux-x86-64.so.2)")
build_id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
debug=/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug
[[ -f $debug ]] || fail "no debug file $debug for $libc: install libc6-dbg"

# the forged libc: the real one with its debug info merged in, one name changed
evil=$T/evil
mkdir "$evil"
eu-unstrip -o "$evil/merged" "$libc" "$debug" || fail "eu-unstrip $libc failed"
objcopy --decompress-debug-sections "$evil/merged" "$evil/plain" || fail "objcopy failed"
python3 - "$evil/plain" "$evil/libc.so.6" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
assert b'__libc_start_call_main' in data, 'no __libc_start_call_main in libc debug info'
open(sys.argv[2], 'wb').write(data.replace(b'__libc_start_call_main', b'__evil_start_call_main'))
EOF
rm "$evil/merged" "$evil/plain"
[[ $(readelf -n "$evil/libc.so.6" | awk '/Build ID/ { print $3 }') == "$build_id" ]] ||
	fail "the forged libc lost libc's build-id"
chown -R $NOBODY:$NOBODY "$evil"
chmod 755 "$evil" "$evil/libc.so.6"

# the attacker profiles its own process on the forged libc: its profile has its name
spawn "${AS_NOBODY[@]}" "$loader" --library-path "$evil" "$WORKLOAD_SPLIT" 120 1
attacker=$SPAWNED
# past setpriv's exec: the shell that forks it maps the real libc
wait_until 30 runs_program $attacker "$loader" || fail "the attacker's process did not start"
[[ $(map_path $attacker libc.so.6) == "$evil/libc.so.6" ]] ||
	fail "the attacker's process does not map the forged libc"
profile $attacker "$evil/attacker.folded" as_nobody
grep -q '__evil_start_call_main' "$evil/attacker.folded" ||
	fail "the forged libc's name is not in the attacker's own profile:" \
		"$(head -3 "$evil/attacker.folded")"
ok "uid $NOBODY profiled its process on a forged libc (build-id $build_id)"

# root profiles a process on the real libc: the real name, never the planted one
spawn_workload "$WORKLOAD_SPLIT" 120 1
victim=$SPAWNED
[[ $(readlink -f "$(map_path $victim libc.so.6)") == "$libc" ]] ||
	fail "the victim does not map the real libc"
profile $victim "$T/root.folded" command
if grep -q '__evil_start_call_main' "$T/root.folded"; then
	fail "a name from uid $NOBODY's forged libc reached root's profile:" \
		"$(grep -m1 __evil "$T/root.folded")"
fi
grep -q '__libc_start_call_main' "$T/root.folded" ||
	fail "root's profile does not name __libc_start_call_main: $(head -3 "$T/root.folded")"
ok "root's profile names __libc_start_call_main, not the planted name"

bctl get-property $DEST $MGR_PATH $MGR Version >/dev/null || fail "profd stopped answering"
ok "profd still serves"
