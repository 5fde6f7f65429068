#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The README's "Install as a system service", followed literally on a Debian 12
# system with nothing of profd's installed: its commands run as they stand, in
# a copy of the source tree, then the installed files are where the README
# says, the unit passes the check the README gives, and profd works for root
# and for an ordinary user.
source "$(dirname "$0")/lib.sh"

block=$(readme_block 1 "meson install -C build")
# the packages the README installs: a cached layer, so that its apt-get finds
# them installed (CI's first run downloads them once)
# shellcheck disable=SC2046
ensure_dev_layer $(readme_packages)
NO_INSTALL=1 boot_system

# a copy of the source tree as a clone has it (no build directories)
if git -C "$SOURCE_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$SOURCE_ROOT" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xf - -C "$ROOT/root" --one-top-level=profd
else
	tar -C "$SOURCE_ROOT" --exclude='./build*' --exclude=node_modules -cf - . |
		tar -xf - -C "$ROOT/root" --one-top-level=profd
fi
[[ -f $ROOT/root/profd/meson.build ]] || fail "cannot copy the source tree into the test system"

start=$(date +%s)
in_container sh -ec "cd /root/profd
$block" >"$T/install.log" 2>&1 ||
	fail "the README's install commands failed: $(tail -n 30 "$T/install.log")"
ok "the README's install commands ran in $(($(date +%s) - start)) s: $(tr '\n' ';' <<<"$block" | cut -c1-100)..."

# what the README says is installed
for f in /usr/libexec/profd /usr/libexec/profd-unwinder /usr/bin/profctl /etc/profd/profd.conf \
	/lib/systemd/system/profd.service \
	/usr/share/dbus-1/system.d/org.profd.Profiler1.conf \
	/usr/share/dbus-1/system-services/org.profd.Profiler1.service \
	/usr/share/bash-completion/completions/profctl; do
	in_container test -f "$f" || fail "the install did not put $f in place"
done
grep -qx 'ExecStart=/usr/libexec/profd --bus=system' "$ROOT/lib/systemd/system/profd.service" ||
	fail "the installed unit's ExecStart: $(grep ExecStart "$ROOT/lib/systemd/system/profd.service")"
out=$(in_container systemd-analyze verify /lib/systemd/system/profd.service 2>&1) ||
	fail "systemd-analyze verify: $out"
[[ -z $out ]] || fail "systemd-analyze verify complained: $out"
[[ $(in_container systemctl is-active profd.service) == active ]] ||
	fail "profd is not running after 'systemctl start profd'"
ok "installed where the README says; systemd-analyze verify is silent; profd.service active"

# it works: root, and an ordinary user after a stop (bus activation)
target=$(spawn_as root $TESTS_BIN/workload-split 60 1)
out=$(in_container profctl record -p "$target" -d 1 -o /root/split.svg 2>&1) ||
	fail "root cannot profile with the installed profd: $out"
in_container grep -q split_heavy /root/split.svg || fail "the flame graph lacks split_heavy"
in_container systemctl stop profd.service
alice=$(add_user alice)
target=$(spawn_as alice $TESTS_BIN/workload-split 60 1)
out=$(as_user alice profctl record -p "$target" -d 1 -o /home/alice/split.folded 2>&1) ||
	fail "uid $alice cannot profile her process with the installed profd: $out"
in_container grep -q split_heavy /home/alice/split.folded || fail "uid $alice's profile lacks split_heavy"
ok "the installed profd profiles for root, and for uid $alice after a stop (bus activation)"
