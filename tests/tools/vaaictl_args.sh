#!/bin/bash
# ctest tools/vaaictl_args: vaaictl checks its arguments before it talks to the
# daemon. Every malformed command exits 2 with a message naming the problem
# (then the usage); every well-formed one gets as far as the control socket
# (exit 3 here: the socket given does not exist). The daemon's side of each
# request is tested in the guest (tests/vm/t_pool_create.sh, t_thin_stun.sh).
# Usage: vaaictl_args.sh VAAICTL TMPDIR
set -euo pipefail
CTL=${1:?usage: vaaictl_args.sh VAAICTL TMPDIR}
TMP=${2:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/vaaictl_args.XXXXXX")
trap 'rm -rf "$D"' EXIT
SOCK=$D/no-daemon.sock
fail() { echo "vaaictl_args: FAIL: $*" >&2; exit 1; }
# bad RC MESSAGE_REGEX ARGS...: vaaictl exits RC, printing nothing but the message (stderr)
bad() {
	local want=$1 re=$2 rc=0; shift 2
	"$CTL" --socket "$SOCK" "$@" >"$D/out" 2>"$D/err" || rc=$?
	[ "$rc" = "$want" ] || { cat "$D/err" >&2; fail "exit $rc (want $want): vaaictl $*"; }
	grep -qE "$re" "$D/err" || { cat "$D/err" >&2; fail "no '$re' from: vaaictl $*"; }
	[ ! -s "$D/out" ] || fail "printed to stdout: vaaictl $*"
}
# reaches ARGS...: parsed, then refused only for want of a daemon
reaches() { bad 3 "cannot reach vaaid at $SOCK" "$@"; }

bad 2 '^usage: vaaictl'
bad 2 "unknown option '--frob'" --frob status
bad 2 "'--socket' needs a path" --socket
bad 2 "unknown command 'frob'" frob
bad 2 "'status' takes no arguments" status now
bad 2 "'pool' needs a command" pool
bad 2 "'volume' needs a command" volume
bad 2 "unknown pool command 'frob'" pool frob
bad 2 "unknown volume command 'create'.*cfgstring=POOL/VOLUME" volume create default/v 1G
bad 2 "'list' takes no arguments" pool list all
bad 2 "'pool create' needs NAME PATH SIZE" pool create p /var/lib/p
bad 2 "bad size '1Q'" pool create p /var/lib/p 1Q
bad 2 "bad size '0'" pool create p /var/lib/p 0
bad 2 "bad extent size '3M'" pool create p /var/lib/p 1G --extent 3M
bad 2 "bad extent size '32M'" pool create p /var/lib/p 1G --extent 32M
bad 2 "unexpected '--force'" pool create p /var/lib/p 1G --force --force
bad 2 "unexpected '--bogus'" pool create p /var/lib/p 1G --bogus
bad 2 "must be absolute" pool create p var/lib/p 1G
bad 2 "'a b': names and paths may not contain white space" pool create 'a b' /var/lib/p 1G
bad 2 "may not contain white space" pool create p '/var/lib/my pool' 1G
bad 2 "may not contain white space" pool create p $'/var/lib/p\nstatus' 1G
bad 2 "an empty argument" pool create p '' 1G
bad 2 "'pool grow' needs NAME SIZE" pool grow p
bad 2 "'pool takeover' needs NAME" pool takeover
bad 2 "'pool takeover' needs NAME" pool takeover a b
bad 2 "bad size '-5G'" pool grow p -5G
bad 2 "'volume delete' needs POOL/VOLUME" volume delete
bad 2 "'volume delete' needs POOL/VOLUME" volume delete a/b c
bad 2 "'stats' takes at most POOL or POOL/VOLUME" stats default v1
bad 2 "'top' takes only --interval SECONDS" top default
bad 2 "bad interval '0'" top --interval 0
bad 2 "bad interval 'x'" top --interval x

reaches status
reaches --json status
reaches pool list
reaches volume list
reaches pool create p /var/lib/p 1G
reaches pool create p /var/lib/p 1G --extent 4M --force
reaches pool grow p 2T
reaches pool takeover p
reaches pool create c rbd:vaai/c.img 1T
reaches volume delete default/vol0
reaches stats
reaches --json stats default
reaches stats default/ds1
echo "vaaictl_args: ok"
