#!/bin/bash
# test_show.sh - `patchtriage show`: the README's first command on the
# sample series, --json lines, stdin, an mbox with one broken message
# (reported, the others still shown, exit 1), usage and file errors, and
# --commit on a repository made here.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
data=$PT_SOURCE_DIR/tests/data
tmp=$(mktemp -d /tmp/pt-show-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

series=$data/sample-series.mbox
expect_exit 0 "$bin" show "$series"
out=$("$bin" show "$series")
[ "$(grep -c '^\[PATCH net-next [0-3]/3\]' <<<"$out")" = 4 ] ||
	fail "show did not print the 4 subjects"
grep -q '^  version   v1, patch 2/3$' <<<"$out" || fail "no version line"
grep -q '^  trailers  .*1 fixes.*(1 stable)$' <<<"$out" ||
	fail "no trailer counts"
grep -Eq '^            drivers/net/ethernet/acme/acme_ethtool.c  \+39 -0 \(new\)$' <<<"$out" ||
	fail "no aligned file line"

[ "$("$bin" show --json "$series" | wc -l)" = 4 ] || fail "--json: not 4 lines"
"$bin" show --json "$series" | /usr/bin/python3 -c '
import json, sys
ps = [json.loads(l) for l in sys.stdin]
assert [p["subject"]["number"] for p in ps] == [0, 1, 2, 3], ps
assert ps[3]["files"][1]["status"] == "added"
assert ps[1]["in_reply_to"] == ps[0]["message_id"]
' || fail "--json output is not the series"
expect_out '"message_id":"reply-1@example.org"' sh -c \
	"'$bin' show --json - < '$data/mail/reply.eml'"

# a broken message in the middle: reported with its number, others shown
{ sed -n '1,/^-- $/p' "$series"; printf '\nFrom x Mon Sep 17 00:00:00 2001\nnot a header\n\nFrom y Mon Sep 17 00:00:00 2001\n'; cat "$data/mail/notes.eml"; } > "$tmp/bad.mbox"
expect_exit 1 "$bin" show "$tmp/bad.mbox"
expect_err "error: cannot parse '.*bad.mbox' \(message 2\): no header" "$bin" show "$tmp/bad.mbox"
[ "$("$bin" show --json "$tmp/bad.mbox" 2>/dev/null | wc -l)" = 2 ] ||
	fail "the good messages around the broken one were not shown"

# empty input: said, naming it, and exit 1, with --json too
no_input() { "$@" < /dev/null; }
: > "$tmp/empty.eml"
for json in "" --json; do
	expect_exit 1 no_input "$bin" show $json -
	expect_err "^error: no message in '<stdin>'\$" no_input "$bin" show $json -
	expect_exit 1 "$bin" show $json "$tmp/empty.eml"
	expect_err "^error: no message in '$tmp/empty.eml'\$" "$bin" show $json "$tmp/empty.eml"
done
expect_exit 1 "$bin" show "$tmp/missing.eml"
expect_err "missing.eml" "$bin" show "$tmp/missing.eml"
expect_exit 2 "$bin" show
expect_exit 2 "$bin" show --frobnicate "$series"
expect_exit 2 "$bin" show "$series" "$series"
expect_exit 2 "$bin" show --commit
expect_exit 2 "$bin" show --repo "$tmp"

# --commit
export HOME=$tmp GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME="Ada Lovelace" \
	GIT_AUTHOR_EMAIL=ada@example.com GIT_COMMITTER_NAME="Ada Lovelace" \
	GIT_COMMITTER_EMAIL=ada@example.com
git init -q "$tmp/repo" && printf 'a\nb\n' > "$tmp/repo/f.c" &&
	git -C "$tmp/repo" add f.c &&
	git -C "$tmp/repo" commit -q -m "f: add" -m "Signed-off-by: Ada Lovelace <ada@example.com>" ||
	fail "cannot make a repository"
expect_exit 0 "$bin" show --commit HEAD --repo "$tmp/repo"
expect_out '^  files     1 file, \+2 -0$' "$bin" show --commit HEAD --repo "$tmp/repo"
expect_out '"source":"git"' "$bin" show --json --commit HEAD --repo "$tmp/repo"
expect_exit 1 "$bin" show --commit no-such-rev --repo "$tmp/repo"
expect_err "unknown revision 'no-such-rev'" "$bin" show --commit no-such-rev --repo "$tmp/repo"
expect_exit 1 "$bin" show --commit HEAD --repo "$tmp/no-repo"

finish
