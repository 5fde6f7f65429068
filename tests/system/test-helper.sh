#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The unwinder helper as deployed (DESIGN.md §8): while an ordinary user's
# session runs under the installed unit, the profd-unwinder profd started for
# her has no capability, NoNewPrivs and a seccomp filter of its own on top of
# the unit's; it holds no file but the target's; it survives a SIGSTOP and
# SIGCONT; asked from inside the running helper (open-inside, by ptrace),
# opening another user's 0600 file, root's, hers and a world-readable one all
# fail, where her own process opens what her uid may. Root's session gets an
# unwinder of its own. Her profile is named. Her unwinder crashing mid-session
# is replaced: her session goes on with a new one, named; profd and root's
# session carry on. (The helper runs as uid 0
# without capabilities: profd has no CAP_SETUID.)
source "$(dirname "$0")/lib.sh"

boot_system
alice=$(add_user alice)
bob=$(add_user bob)

# files to ask for: bob's and root's private ones, alice's own, one anybody reads
in_container sh -c 'echo bob > /home/bob/secret && chown bob:bob /home/bob/secret &&
	chmod 0600 /home/bob/secret && chmod 0755 /home/bob &&
	echo root > /etc/profd-test-secret && chmod 0600 /etc/profd-test-secret &&
	echo alice > /home/alice/mine && chown alice:alice /home/alice/mine && chmod 0600 /home/alice/mine' ||
	fail "cannot create the files to ask for"
files="/home/bob/secret /etc/profd-test-secret /home/alice/mine /etc/passwd"

# the control: the same question from a process of alice's own gets her rights
control=$(spawn_as alice sleep 600)
out=$(in_container $TESTS_BIN/open-inside "$control" $files 2>&1) ||
	fail "open-inside cannot ask uid $alice's process $control: $out"
[[ $out == $'/home/bob/secret EACCES\n/etc/profd-test-secret EACCES\n/home/alice/mine ok\n/etc/passwd ok' ]] ||
	fail "uid $alice's own process opened other files than her rights allow: $out"
ok "control: uid $alice's own process opens what she may and no more: ${out//$'\n'/, }"

# alice's session, running until profctl is interrupted (it then stops the session and writes;
# -d 60: profd's default MaxDurationSec, the longest it gives)
alice_pid=$(spawn_as alice $TESTS_BIN/workload-split 120 2)
prof=$(in_container sh -c "setpriv --reuid=alice --regid=alice --init-groups -- env HOME=/home/alice \
	profctl record -p $alice_pid -F 999 -d 60 -o /home/alice/split.folded \
	>/home/alice/profctl.log 2>&1 </dev/null & echo \$!")
profd=$(wait_active)
helper=
for _ in $(seq 300); do
	helper=$(in_container pgrep -P "$profd" -x profd-unwinder) && break
	in_container kill -0 "$prof" 2>/dev/null ||
		fail "uid $alice's profctl ended before an unwinder ran: $(in_container cat /home/alice/profctl.log)"
	sleep 0.1
done
[[ $helper =~ ^[0-9]+$ ]] || fail "no single profd-unwinder under profd ($profd) during uid $alice's session: '$helper'"

# status_field PID NAME: the value of NAME: in /proc/PID/status
status_field() {
	in_container awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ +/, ""); print }' "/proc/$1/status"
}
for f in Seccomp NoNewPrivs CapInh CapPrm CapEff CapAmb; do
	declare "h_$f=$(status_field "$helper" $f)"
done
[[ $h_Seccomp == 2 && $h_NoNewPrivs == 1 ]] ||
	fail "unwinder $helper: Seccomp '$h_Seccomp' (2: a filter), NoNewPrivs '$h_NoNewPrivs'"
[[ $h_CapInh$h_CapPrm$h_CapEff$h_CapAmb == "$(printf '0%.0s' $(seq 64))" ]] ||
	fail "unwinder $helper has capabilities: inheritable $h_CapInh, permitted $h_CapPrm, effective $h_CapEff, ambient $h_CapAmb"
# its own filter over profd's (the unit's SystemCallFilter=, and nspawn's under it)
profd_filters=$(status_field "$profd" Seccomp_filters)
helper_filters=$(status_field "$helper" Seccomp_filters)
((helper_filters > profd_filters)) ||
	fail "unwinder $helper has $helper_filters seccomp filters, profd $profd_filters: none of its own"
# the bounding set only profd's unit's: dropping it takes CAP_SETPCAP, which
# DESIGN §8 does not give profd; inert anyway with nothing permitted and
# NoNewPrivs (an exec, which the filter refuses too, could add nothing)
h_CapBnd=$(status_field "$helper" CapBnd)
[[ $h_CapBnd == "$(status_field "$profd" CapBnd)" ]] ||
	fail "unwinder $helper's bounding set $h_CapBnd is not profd's $(status_field "$profd" CapBnd)"
uids=$(status_field "$helper" Uid)
ok "uid $alice's unwinder $helper: Seccomp 2 with $helper_filters filters (profd $profd_filters), NoNewPrivs 1, no capability (bounding set $h_CapBnd, profd's unit's), uids $uids"

# what it holds open: its socket, shared memory, and files of the target's
# mappings that profd opened for it, nothing else
held=$(in_container find /proc/$helper/fd -mindepth 1 -printf '%l\n') || fail "cannot list the unwinder's descriptors"
mapped=$(in_container awk '$6 ~ /^\// { print $6 }' /proc/$alice_pid/maps | sort -u)
held_files=0
while read -r f; do
	case $f in
	socket:* | anon_inode:* | /memfd:* | /dev/null | pipe:*) ;;
	*)
		grep -qxF "$f" <<<"$mapped" || fail "the unwinder $helper holds '$f', which process $alice_pid does not map"
		held_files=$((held_files + 1))
		;;
	esac
done <<<"$held"
ok "the unwinder $helper holds $(wc -l <<<"$held") descriptors: its socket, shared memory and $held_files of process $alice_pid's mapped files"

# stopped and continued (job control, a debugger) it carries on: the kernel
# resumes its interrupted poll() with restart_syscall, which its filter allows
in_container kill -STOP "$helper"
for _ in $(seq 100); do
	[[ $(status_field "$helper" State) == T* ]] && break
	sleep 0.1
done
[[ $(status_field "$helper" State) == T* ]] || fail "the unwinder $helper did not stop"
in_container kill -CONT "$helper"

# from inside the running unwinder: nothing opens, whoever's it is (files come as descriptors)
out=$(in_container $TESTS_BIN/open-inside "$helper" $files 2>&1) ||
	fail "open-inside cannot ask the unwinder $helper: $out"
[[ $out == $'/home/bob/secret EPERM\n/etc/profd-test-secret EPERM\n/home/alice/mine EPERM\n/etc/passwd EPERM' ]] ||
	fail "the unwinder $helper opened files, or was refused by something else than its filter: $out"
in_container kill -0 "$helper" 2>/dev/null ||
	fail "the unwinder $helper did not survive a stop and the question: $(in_container journalctl -q -b -u profd.service | grep -F "[$helper]")"
ok "inside uid $alice's unwinder openat is refused by its filter: ${out//$'\n'/, }"

# root's session has an unwinder of its own (one per caller uid), confined the same
root_pid=$(spawn_as root $TESTS_BIN/workload-split 120 1)
root_prof=$(in_container sh -c "profctl record -p $root_pid -d 60 -o /root/split.folded \
	>/root/profctl.log 2>&1 </dev/null & echo \$!")
root_helper=
for _ in $(seq 300); do
	root_helper=$(in_container pgrep -P "$profd" -x profd-unwinder | grep -vx "$helper") && break
	sleep 0.1
done
[[ $root_helper =~ ^[0-9]+$ ]] || fail "no second profd-unwinder for root's session: '$root_helper'"
[[ $(status_field "$root_helper" Seccomp)$(status_field "$root_helper" NoNewPrivs)$(status_field "$root_helper" CapEff) == 210000000000000000 ]] ||
	fail "root's unwinder $root_helper: $(in_container grep -E '^(Seccomp|NoNewPrivs|Cap)' /proc/$root_helper/status)"
ok "root's session has its own unwinder $root_helper, confined the same"

# interrupted, profctl stops her session and writes what it has (root's runs on)
stop_profctl() { # PID: SIGINT, then wait for it to end
	in_container kill -INT "$1"
	wait_gone "$1" 60 || fail "profctl $1 did not end after SIGINT"
}
stop_profctl "$prof"
heavy=$(in_container awk '/split_heavy/ { n += $NF } END { print n + 0 }' /home/alice/split.folded) ||
	fail "uid $alice's profctl wrote no profile: $(in_container cat /home/alice/profctl.log)"
((heavy > 0)) || fail "uid $alice's profile has no split_heavy: $(in_container head -n 5 /home/alice/split.folded)"
! in_container journalctl -q -b -u profd.service | grep -q 'unwinder.*exited\|unwinder.*killed' ||
	fail "an unwinder ended early: $(in_container journalctl -q -b -u profd.service | grep unwinder)"
ok "uid $alice's profile is named after all that ($heavy samples in split_heavy)"

# her unwinder crashing (SIGSEGV) fails only her session in flight: profd is
# not restarted, root's session and unwinder carry on, her next session gets a
# new one
unwinder_of() { # UID: the pid of the unwinder profd last started for UID
	in_container journalctl -q -b -u profd.service |
		sed -n "s/.*started the unwinder of uid $1 (pid \([0-9]*\)).*/\1/p" | tail -n 1
}
restarts=$(in_container systemctl show -P NRestarts profd.service)
sessions_of_alice() {
	in_container journalctl -q -b -u profd.service | grep -c ": uid $alice samples pid:$alice_pid "
}
before=$(sessions_of_alice)
prof=$(in_container sh -c "setpriv --reuid=alice --regid=alice --init-groups -- env HOME=/home/alice \
	profctl record -p $alice_pid -d 60 -o /home/alice/crash.folded \
	>/home/alice/crash.log 2>&1 </dev/null & echo \$!")
for _ in $(seq 300); do
	(($(sessions_of_alice) > before)) && break
	sleep 0.1
done
(($(sessions_of_alice) > before)) || fail "uid $alice's session did not start: $(in_container cat /home/alice/crash.log)"
crashed=$(unwinder_of "$alice")
in_container kill -0 "$crashed" 2>/dev/null || fail "uid $alice's unwinder $crashed is not running during her session"
in_container kill -SEGV "$crashed"
for _ in $(seq 300); do
	[[ $(unwinder_of "$alice") != "$crashed" ]] && break
	sleep 0.1
done
[[ $(unwinder_of "$alice") != "$crashed" ]] || fail "no new unwinder for uid $alice's session after hers crashed"
in_container kill -0 "$prof" 2>/dev/null || fail "uid $alice's session ended when her unwinder crashed"
sleep 2 # samples for the new unwinder to name
stop_profctl "$prof"
log=$(in_container cat /home/alice/crash.log)
in_container journalctl -q -b -u profd.service |
	grep -q "unwinder of uid $alice (pid $crashed): killed by signal 11 (Segmentation fault); 1 session(s) go on" ||
	fail "profd did not say why it replaced uid $alice's unwinder"
named_crash=$(in_container awk '/split_heavy/ { n += $NF } END { print n + 0 }' /home/alice/crash.folded)
((named_crash > 0)) || fail "uid $alice's session across the crash is unnamed: $log"
[[ $(main_pid) == "$profd" && $(in_container systemctl show -P NRestarts profd.service) == "$restarts" ]] ||
	fail "profd ($profd) was restarted: MainPID $(main_pid)"
in_container kill -0 "$root_helper" 2>/dev/null || fail "root's unwinder $root_helper went with uid $alice's"
out=$(as_user alice profctl record -p "$alice_pid" -d 1 -o /home/alice/after.folded 2>&1) ||
	fail "uid $alice cannot profile after her unwinder crashed: $out"
named_after=$(in_container awk '/split_heavy/ { n += $NF } END { print n + 0 }' /home/alice/after.folded)
((named_after > 0)) || fail "uid $alice's profile after the crash is unnamed"
[[ $(unwinder_of "$alice") != "$crashed" ]] || fail "uid $alice's next session did not get a new unwinder"
ok "uid $alice's unwinder $crashed crashed: her session went on ($named_crash split_heavy samples), profd $profd and root's unwinder stayed, her next session has unwinder $(unwinder_of "$alice")"

stop_profctl "$root_prof"
in_container grep -q split_heavy /root/split.folded ||
	fail "root's profile has no split_heavy: $(in_container cat /root/profctl.log)"
ok "root's session ran across uid $alice's crash: its profile names split_heavy"
