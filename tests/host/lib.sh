# shellcheck shell=bash
# Shared helpers of the host tests that boot the guest from the Debian package
# (sourced; tests/host/systemd_reboot.sh, tests/host/power_cut.sh).

# deb_fresh: true when build/deb/ holds exactly one vaaid_*.deb and no file of
# the tree (tracked, or untracked and not ignored) is newer than it. (The paths
# go before find's expression: `xargs find -maxdepth 0 -newer DEB` would append
# them after it, find would refuse them, and every package would look fresh,
# as it did until 2026-11-26.)
deb_fresh() {
	local debs=(build/deb/vaaid_*.deb)
	[ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || return 1
	[ -z "$(git ls-files -z --cached --others --exclude-standard 2>/dev/null |
		xargs -0 -r sh -c 'find "$@" -maxdepth 0 -newer "$0" 2>/dev/null' "${debs[0]}" | head -1)" ]
}

# need_deb NAME: (re)build the package with scripts/build-deb unless it is fresh.
need_deb() {
	deb_fresh && return 0
	echo "== $1: building the package (scripts/build-deb)" >&2
	scripts/build-deb >/dev/null || { echo "$1: scripts/build-deb FAILED" >&2; return 1; }
}
