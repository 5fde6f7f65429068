# Sourced by tools/run-tests and tools/demo: install what profd needs to build,
# test and demo on Debian 12, only when something is missing.

profd_packages=(
	meson ninja-build pkg-config gcc g++ clang llvm libclang-rt-14-dev
	libjansson-dev libdw-dev libelf-dev libdebuginfod-dev debuginfod libbpf-dev bpftool libsystemd-dev
	zlib1g-dev protobuf-c-compiler libprotobuf-c-dev
	linux-perf dbus-daemon dbus-bin systemd util-linux procps python3
	golang-go golang-github-google-pprof-dev libxml2-utils chromium
	binutils elfutils bash-completion libc6-dbg
	debootstrap systemd-container
	libseccomp-dev
	sqlite3 bzip2 openssl perl
)

install_dependencies() {
	local missing=() p
	for p in "${profd_packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	# node may come from elsewhere (NodeSource); only Debian's when absent
	command -v npm >/dev/null || missing+=(nodejs npm)
	if [ ${#missing[@]} -gt 0 ]; then
		echo "==> installing ${missing[*]}"
		apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				"${missing[@]}" >/dev/null || {
			echo "cannot install Debian packages: ${missing[*]}" >&2
			return 1
		}
	fi
	# The export tests read profiles with the viewers' own code, pinned in tests/package-lock.json.
	if [ -f tests/package-lock.json ] &&
		! cmp -s tests/package-lock.json tests/node_modules/.profd-lock 2>/dev/null; then
		echo "==> installing npm packages for the export tests"
		(cd tests && npm ci --no-audit --no-fund --loglevel=error &&
			cp package-lock.json node_modules/.profd-lock) || {
			echo "cannot install npm packages from tests/package-lock.json" >&2
			return 1
		}
	fi
}
