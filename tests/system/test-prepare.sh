#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The cached test systems of this build directory: the root file system with
# the build's runtime libraries (debootstrap), and the layer with the README's
# build dependencies. tools/run-tests starts this in the background as soon as
# the build is compiled (it mostly waits on downloads), so the other system
# tests find both ready; run alone, it builds them or finds them cached.
source "$(dirname "$0")/lib.sh"

start=$(date +%s)
ensure_rootfs
# every library the build loads is in the tree
missing=$(chroot "$ROOTFS" /bin/sh -c 'command -v ldconfig >/dev/null && ldconfig -p' |
	awk 'NR > 1 { print $1 }' | sort -u | comm -13 - <(ldd "$PROFD" "$PROFCTL" "$UNWINDER" |
	awk '$2 == "=>" { print $1 }' | sort -u))
[[ -z $missing ]] || fail "libraries of the build missing from the test system: $missing"
ok "root file system with the build's runtime libraries ($(($(date +%s) - start)) s): $(sed -n 's/^packages //p' "$ROOTFS.stamp")"
start=$(date +%s)
# shellcheck disable=SC2046
ensure_dev_layer $(readme_packages)
ok "layer with the README's build dependencies ($(($(date +%s) - start)) s)"
