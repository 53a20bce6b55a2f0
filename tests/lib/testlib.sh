# testlib.sh - small assertions for the bash integration tests.  Source
# it; call finish at the end.  A test that cannot run here exits 77
# (ctest's SKIP_RETURN_CODE) through skip.
pt_failures=0
pt_checks=0

fail() {
	echo "FAIL: $*" >&2
	pt_failures=$((pt_failures + 1))
}

skip() {
	echo "SKIP: $*"
	exit 77
}

check() { # DESCRIPTION CMD...: CMD must succeed
	local what=$1
	shift
	pt_checks=$((pt_checks + 1))
	"$@" || fail "$what"
}

expect_exit() { # CODE CMD...
	local want=$1 got
	shift
	pt_checks=$((pt_checks + 1))
	"$@" >/dev/null 2>&1
	got=$?
	[ "$got" = "$want" ] || fail "'$*' exited $got, expected $want"
}

expect_out() { # REGEX CMD...
	local re=$1
	shift
	pt_checks=$((pt_checks + 1))
	"$@" 2>/dev/null | grep -Eq -- "$re" ||
		fail "'$*' did not print /$re/ on stdout"
}

expect_err() { # REGEX CMD...
	local re=$1
	shift
	pt_checks=$((pt_checks + 1))
	"$@" 2>&1 >/dev/null | grep -Eq -- "$re" ||
		fail "'$*' did not print /$re/ on stderr"
}

pt_tmpdir() { # make a temporary folder removed at exit
	PT_TMP=$(mktemp -d /tmp/pt-test.XXXXXX)
	[ -n "${PT_KEEP:-}" ] || trap 'rm -rf "$PT_TMP"' EXIT
}

finish() {
	echo "$((pt_checks - pt_failures)) passed, $pt_failures failed"
	[ "$pt_failures" = 0 ]
}
