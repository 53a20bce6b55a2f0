#!/bin/bash
# test_cli.sh - the command line contract: --help/--version/help CMD, exit
# codes (0 ok, 1 failure, 2 usage), clear messages for unknown commands
# and options, and the man page naming exactly the commands of the table.
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

# the man page documents each command in the table, and no other
man=$PT_SOURCE_DIR/docs/patchtriage.1
[ -f "$man" ] || fail "docs/patchtriage.1 is missing"
documented=$(sed -n 's/^\.SS "\{0,1\}patchtriage \([a-z-]*\).*/\1/p' "$man" | sort -u)
listed=$(printf '%s\n' $cmds | sort -u)
[ "$documented" = "$listed" ] ||
	fail "man page commands differ from the table: $(diff <(echo "$documented") <(echo "$listed") | tr '\n' ' ')"
finish
