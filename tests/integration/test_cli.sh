#!/bin/bash
# test_cli.sh - the command line contract: --help/--version/help CMD, exit
# codes (0 ok, 1 failure, 2 usage), clear messages for unknown commands
# and options, the warning for a token file others can read, status
# creating no state and naming a missing state or config file, and the
# man page naming exactly the commands of the table.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
expect_exit 0 "$bin" --help
expect_out "usage: patchtriage" "$bin" --help
expect_exit 0 "$bin" --version
expect_out "patchtriage [0-9]+\.[0-9]+" "$bin" --version
expect_exit 0 "$bin" help version
expect_exit 2 "$bin"
expect_exit 2 "$bin" no-such-command
expect_err "'no-such-command' is not a patchtriage command" "$bin" no-such-command
expect_exit 2 "$bin" --no-such-option
expect_err "unknown option '--no-such-option'" "$bin" --no-such-option
expect_exit 2 "$bin" help no-such-command
expect_exit 2 "$bin" --state
expect_exit 2 "$bin" version extra

# every command answers --help with its usage line and exit 0
cmds=$("$bin" --help | awk '/^commands:/{on=1; next} on && /^   [a-z]/{print $1}')
[ -n "$cmds" ] || fail "no commands listed by --help"
for c in $cmds; do
	expect_exit 0 "$bin" "$c" --help
	expect_out "usage: patchtriage $c" "$bin" "$c" --help
done

# one option parser: numbers are checked, errors name the option and the
# value, exit 2; --opt=value works everywhere and '--' ends the options
st=$(mktemp -d /tmp/pt-cli.XXXXXX)
trap 'rm -rf "$st"' EXIT
expect_exit 2 "$bin" --state "$st" stats cycle --horizon abc
expect_err "error: --horizon: 'abc' is not a whole number" \
	"$bin" --state "$st" stats cycle --horizon abc
expect_err "error: --late: '65' is out of range \(2 to 64\)" \
	"$bin" --state "$st" stats cycle --late=65
expect_err "error: --late: '1' is out of range \(2 to 64\)" \
	"$bin" --state "$st" stats cycle --late 1
expect_exit 2 "$bin" --state "$st" stats cycle --late abc
# numbers and dates given as strings are checked too, before anything
# is read or fetched: an id past the range of a number, a date
expect_exit 2 "$bin" --state "$st" pw patch 99999999999999999999
expect_err "error: '99999999999999999999' is not an id" \
	"$bin" --state "$st" pw patch 99999999999999999999
expect_exit 2 "$bin" --state "$st" pw events --since abc
expect_err "error: --since: 'abc' is not a date" \
	"$bin" --state "$st" pw events --since abc
expect_exit 2 "$bin" --state "$st" mine --repo . --since @99999999999999999999
expect_err "error: --late: 'abc' is not a whole number" \
	"$bin" --state "$st" stats cycle --late abc
expect_exit 2 "$bin" --state "$st" mine --repo . --threads 4x
expect_exit 2 "$bin" --state "$st" mine --repo . --horizon 0
expect_exit 2 "$bin" --state "$st" eval --folds 17
expect_exit 2 "$bin" --state "$st" train --max-rows -1
expect_err "error: --for: '0' is out of range" "$bin" --state "$st" run --for 0
expect_exit 2 "$bin" --state "$st" stable --threshold nan
expect_err "error: --threshold: 'nan' is not a number" \
	"$bin" --state "$st" stable --threshold nan
expect_exit 2 "$bin" --state "$st" show --commit
expect_err "error: --commit needs a value" "$bin" --state "$st" show --commit
expect_exit 2 "$bin" --state "$st" imap watch --for
expect_exit 2 "$bin" --state "$st" status --bogus
expect_err "error: unknown option '--bogus'" "$bin" --state "$st" status --bogus
expect_err "error: unknown option '--bogus'" "$bin" --state "$st" pw --bogus=1
expect_exit 2 "$bin" --state "$st" status --json=yes
expect_exit 2 "$bin" --state "$st" status -- --json
expect_out "usage: patchtriage stats" "$bin" stats -h
for c in $("$bin" --help | awk '/^commands:/{on=1; next} on && /^   [a-z]/{print $1}'); do
	expect_exit 2 "$bin" --state "$st" "$c" --no-such-option
done

# a token file others can read is warned about (as the example config
# says), even when the command then fails; the token itself is not shown
printf 'tok-cli-7d3a\n' >"$st/token"
chmod 644 "$st/token"
printf '[patchwork]\n\turl = http://127.0.0.1:1\n\ttoken-file = %s\n\tproject = p\n\tmax-attempts = 1\n' \
	"$st/token" >"$st/config"
warns_token() { # CMD...: a failing command still warns, without the token
	local warned
	warned=$("$bin" --config "$st/config" --state "$st" "$@" 2>&1 >/dev/null)
	pt_checks=$((pt_checks + 1))
	case $warned in
	*"patchwork.token-file: '$st/token' is readable by others (mode 644)"*) ;;
	*) fail "$*: no warning for a token file of mode 644: $warned" ;;
	esac
	case $warned in *tok-cli-7d3a*) fail "$*: the token was printed" ;; esac
}
warns_token pw series 1
warns_token run --once

# read-only commands (status, stats, archive stats and features) never
# create state: a state directory or database
# that is not there is an error naming it, and stays not there; a
# configuration file named with --config must exist
expect_exit 1 "$bin" --state "$st/no/such" status
expect_err "error: .*'$st/no/such/state.db'" "$bin" --state "$st/no/such" status
[ ! -e "$st/no" ] || fail "status created '$st/no'"
mkdir "$st/empty"
expect_exit 1 "$bin" --state "$st/empty" status --json
[ ! -e "$st/empty/state.db" ] || fail "status created a database"
expect_exit 1 "$bin" --state "$st" --config "$st/missing.conf" status
expect_err "error: .*'$st/missing.conf'" \
	"$bin" --state "$st" --config "$st/missing.conf" status
expect_exit 0 "$bin" --state "$st" status --json # run --once made it
# a number out of its key's range is refused, naming the key (it was
# handed to the HTTP client as it was)
printf '[patchwork]\n\turl = http://127.0.0.1:1\n\tproject = x\n\ttimeout = -5\n' \
	>"$st/badnum.conf"
expect_exit 1 "$bin" --state "$st" --config "$st/badnum.conf" pw events
expect_err "error: config '$st/badnum.conf': patchwork.timeout = -5 is out of range: it must be from 1 to 86400" \
	"$bin" --state "$st" --config "$st/badnum.conf" pw events
for ro in "stats cycle" "archive stats" "archive features"; do
	# shellcheck disable=SC2086 # the command's words
	expect_exit 1 "$bin" --state "$st/no/such" $ro
	[ ! -e "$st/no" ] || fail "$ro created '$st/no'"
done

# the man page documents each command in the table, and no other
man=$PT_SOURCE_DIR/docs/patchtriage.1
[ -f "$man" ] || fail "docs/patchtriage.1 is missing"
documented=$(sed -n 's/^\.SS "\{0,1\}patchtriage \([a-z-]*\).*/\1/p' "$man" | sort -u)
listed=$(printf '%s\n' $cmds | sort -u)
[ "$documented" = "$listed" ] ||
	fail "man page commands differ from the table: $(diff <(echo "$documented") <(echo "$listed") | tr '\n' ' ')"
finish
