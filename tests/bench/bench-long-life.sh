#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-long-life.sh [SESSIONS [PROGRAMS]]: profd on a private bus runs SESSIONS
# sessions (default 1000) over PROGRAMS copies (default 100) of many-functions,
# each copy with a build-id of its own, once with SymbolCacheMaxBytes at 4 MiB
# and once at 1 GiB, and prints the RSS of profd and of its unwinders as it
# goes (bench-long-life). Environment: PROFD, MANY_FUNCTIONS_SOURCE, WORKLOADS_DIR,
# CC, BENCH_LONG_LIFE, WORKLOAD_SPLIT, DAEMON_TEST_LIB; CAPS (the SymbolCacheMaxBytes
# values to run, default "4194304 1073741824"), MANY_FUNCTIONS (a many-functions built
# before: its compile takes minutes on a loaded machine).
source "$DAEMON_TEST_LIB"
sessions=${1:-1000}
programs=${2:-100}

mkdir "$T/bin"
# built here, as the workloads are (-O2, debug info, no frame pointers), only when this runs
if [[ -z ${MANY_FUNCTIONS:-} ]]; then
	MANY_FUNCTIONS=$T/many-functions
	"${CC:-cc}" -O2 -g -fomit-frame-pointer -I"$WORKLOADS_DIR" -o "$MANY_FUNCTIONS" \
		"$MANY_FUNCTIONS_SOURCE" || fail "cannot build $MANY_FUNCTIONS_SOURCE"
fi
build_id=$(readelf -n "$MANY_FUNCTIONS" | awk '/Build ID/ { print $3 }')
python3 - "$MANY_FUNCTIONS" "$build_id" "$programs" "$T/bin" <<'PY'
import hashlib, os, sys
path, build_id, n, out = sys.argv[1], bytes.fromhex(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
data = open(path, 'rb').read()
assert data.count(build_id) == 1, 'the build-id is not unique in the file'
for i in range(n):
    new = hashlib.sha1(b'%d' % i).digest()[:len(build_id)]
    copy = os.path.join(out, 'many-functions-%03d' % i)
    open(copy, 'wb').write(data.replace(build_id, new))
    os.chmod(copy, 0o755)
PY
start_bus
for cap in ${CAPS:-$((4 << 20)) $((1 << 30))}; do
	printf 'SymbolCacheMaxBytes=%d\nMaxRuns=64\n' $cap >"$T/profd.conf"
	rm -rf "$T/state"
	start_profd
	echo "== SymbolCacheMaxBytes=$cap: $sessions sessions over $programs binaries"
	"$BENCH_LONG_LIFE" "$BUS" "$PROFD_PID" "$sessions" "$T"/bin/many-functions-* ||
		fail "bench-long-life failed"
	stop_profd
done
