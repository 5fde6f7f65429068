#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Abuse: the state directory. profd refuses a state directory another user
# owns or could write (a user who creates /tmp/profd-state first could plant
# links in it), or that is a link; it refuses runs/ or sessions/ as links.
# And should something be planted all the same (a state directory that was
# writable once), nothing is followed: a session directory that is a link
# is set aside instead of served (uid 65534 would read, and Release delete,
# files through it), a link planted as the next temporary file does not make
# SubmitRun overwrite its target, a FIFO named like a run file is set aside
# instead of hanging start-up.
source "$(dirname "$0")/lib.sh"
: "${FIXTURES_DIR:?}"

start_bus

refused() { # DIR WHAT: profd must refuse DIR as its state directory, naming it
	local rc=0
	timeout 20 "$PROFD" --address="$BUS" --state-dir="$1" --config=/dev/null 2>"$T/refused.log" || rc=$?
	((rc != 0 && rc != 124)) || fail "profd accepted a state directory that $2 (exit $rc)"
	grep -q "state directory '$1'\|'$1/" "$T/refused.log" ||
		fail "profd's refusal of a state directory that $2 does not name it: $(cat "$T/refused.log")"
	ok "a state directory that $2 is refused: $(tail -n 1 "$T/refused.log")"
}

mkdir -m 1777 "$T/pre" # like /tmp
as_nobody mkdir "$T/pre/state"
refused "$T/pre/state" "uid 65534 created first"
mkdir -m 777 "$T/open"
refused "$T/open" "is writable by everyone"
mkdir -m 770 "$T/group"
refused "$T/group" "is writable by its group"
mkdir -m 700 "$T/real"
ln -s "$T/real" "$T/link"
refused "$T/link" "is a symbolic link"
mkdir -m 700 -p "$T/runslink" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/runslink/runs"
refused "$T/runslink" "has runs/ as a link"

# a state directory that is profd's own, with links planted in it as if it had been writable
start_profd
health_before
spawn_workload "${AS_NOBODY[@]}" "$WORKLOAD_SPLIT" 300 1
target=$SPAWNED
path=$(as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR StartSession 'uuta{sv}' \
	"$target" 99 300000 0 | awk '{ print $3 }' | tr -d '"')
[[ $(wait_finished "$path") == completed ]] || fail "uid 65534's session failed"
id=${path##*/}
stop_profd

mkdir -m 700 "$T/secret"
cp "$T/state/sessions/$id/session" "$T/secret/session"
echo "root's secret" >"$T/secret/folded"
chmod 600 "$T/secret/folded"
rm -rf "$T/state/sessions/$id"
ln -s "$T/secret" "$T/state/sessions/$id"

echo "precious" >"$T/victim"
chmod 600 "$T/victim"
last=$(ls "$T/state/runs" | grep -E '^[0-9a-f]{16}\.run$' | sort | tail -n 1)
next=$(printf '%016x' $((0x${last%.run} + 1)))
ln -s "$T/victim" "$T/state/runs/.#$next.run.tmp"

mkfifo "$T/state/runs/00000000000000ff.run"

start_profd # a FIFO as a run file would hang a blocking open here
[[ -L $T/state/sessions/$id.corrupt && ! -e $T/state/sessions/$id ]] ||
	fail "the session directory planted as a link was not set aside: $(ls -l "$T/state/sessions")"
expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" call $DEST "$path" $SES Export s folded >/dev/null
expect_error org.freedesktop.DBus.Error.UnknownObject \
	as_nobody busctl --address="$BUS" call $DEST "$path" $SES Release >/dev/null
[[ $(cat "$T/secret/folded") == "root's secret" && -f $T/secret/session ]] ||
	fail "files behind the planted link were read or removed"
grep -q "$id" "$T/profd.log" || fail "the set-aside session is not logged"
ok "a session directory planted as a link is set aside: nothing read or deleted through it"

as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR SubmitRun s "$(record_with_id planted)" \
	>/dev/null || fail "SubmitRun failed with a link planted as its temporary file"
[[ $(cat "$T/victim") == precious ]] || fail "SubmitRun wrote through a link planted as its temporary file"
[[ -f $T/state/runs/$next.run && ! -L $T/state/runs/$next.run ]] || fail "the run file is not a regular file"
as_nobody busctl --address="$BUS" call $DEST $MGR_PATH $MGR GetRun s planted >/dev/null ||
	fail "the run stored past the planted link cannot be read"
ok "a link planted as the next temporary file is replaced, its target untouched"

[[ -p $T/state/runs/00000000000000ff.run.corrupt ]] || fail "the FIFO named like a run file was not set aside"
ok "a FIFO named like a run file is set aside at start-up"
HEALTH_FDS=$(profd_fds)
health_after "symlink plants"
