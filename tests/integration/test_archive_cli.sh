#!/bin/bash
# test_archive_cli.sh - `patchtriage archive import|stats|features` from
# the command line: an mbox and a gzip'd copy of it, a public-inbox epoch
# built with the git CLI (one commit per message, the message in blob
# `m`) read twice (the second import reads nothing), a malformed message
# skipped with its reason, the JSON forms, and usage errors.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
bin=$PT_BIN
pt_tmpdir
st=$PT_TMP/state
mbox=$PT_SOURCE_DIR/tests/data/sample-series.mbox

expect_exit 2 "$bin" --state "$st" archive
expect_exit 2 "$bin" --state "$st" archive import
expect_exit 2 "$bin" --state "$st" archive import --mbox
expect_exit 2 "$bin" --state "$st" archive import --mbox a --public-inbox b
expect_exit 2 "$bin" --state "$st" archive import --bogus x
expect_exit 2 "$bin" --state "$st" archive features --at never
expect_err "cannot open '$PT_TMP/none.mbox'" \
	"$bin" --state "$st" archive import --mbox "$PT_TMP/none.mbox"
expect_exit 1 "$bin" --state "$st" archive import --public-inbox "$PT_TMP"
# the path as given, the problem, and what was expected there
expect_err "^error: '$PT_TMP/nonexistent': No such file or directory \(expected a public-inbox, its epochs in git/0\.git" \
	"$bin" --state "$st" archive import --public-inbox "$PT_TMP/nonexistent"
expect_err "^error: '$PT_TMP' is neither a git directory nor a public-inbox \(expected" \
	"$bin" --state "$st" archive import --public-inbox "$PT_TMP"

# mbox, then the same mail gzip'd: nothing new the second time
expect_out "read 4 messages from 1 sources: 4 new, 0 already stored, 0 skipped" \
	"$bin" --state "$st" archive import --mbox "$mbox"
gzip -c "$mbox" > "$PT_TMP/s.mbox.gz"
expect_out "read 4 messages from 1 sources: 0 new, 4 already stored" \
	"$bin" --state "$st" archive import --mbox "$PT_TMP/s.mbox.gz"
expect_out '"patches": 3, ' "$bin" --state "$st" archive stats --json
expect_out '"sources": 2, ' "$bin" --state "$st" archive stats --json
expect_out '^series +1$' "$bin" --state "$st" archive stats
expect_out '^complete series +1$' "$bin" --state "$st" archive stats
n=$("$bin" --state "$st" archive features | grep -c '"outcome": "none"')
pt_checks=$((pt_checks + 1))
[ "$n" = 3 ] || fail "archive features printed $n postings, expected 3"

# a public-inbox epoch made with git: two messages, one without an id
pi=$PT_TMP/inbox.git
git init -q --bare "$pi"
commit_msg() { # FILE
	local blob tree parent
	blob=$(git -C "$pi" hash-object -w "$1")
	tree=$(printf '100644 blob %s\tm\n' "$blob" | git -C "$pi" mktree)
	parent=$(git -C "$pi" rev-parse -q --verify refs/heads/master || true)
	c=$(GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x GIT_COMMITTER_NAME=l \
		GIT_COMMITTER_EMAIL=l@x git -C "$pi" commit-tree "$tree" \
		${parent:+-p "$parent"} -m m)
	git -C "$pi" update-ref refs/heads/master "$c"
}
cat > "$PT_TMP/1.eml" <<'EOF'
From: Alice <alice@example.org>
Date: Mon, 01 Jan 2024 10:00:00 +0000
Subject: [PATCH] pwm: foo: Add bar
Message-ID: <pi-1@example.org>

Add bar.

Signed-off-by: Alice <alice@example.org>
---
diff --git a/drivers/pwm/pwm-foo.c b/drivers/pwm/pwm-foo.c
--- a/drivers/pwm/pwm-foo.c
+++ b/drivers/pwm/pwm-foo.c
@@ -1,2 +1,3 @@
 a
+b
 c
EOF
cat > "$PT_TMP/2.eml" <<'EOF'
From: Bob <bob@example.org>
Date: Tue, 02 Jan 2024 10:00:00 +0000
Subject: Re: [PATCH] pwm: foo: Add bar
In-Reply-To: <pi-1@example.org>

This reply has no Message-ID.
EOF
cat > "$PT_TMP/3.eml" <<'EOF'
From: Uwe <uwe@example.org>
Date: Wed, 03 Jan 2024 10:00:00 +0000
Subject: Re: [PATCH] pwm: foo: Add bar
Message-ID: <pi-3@example.org>
In-Reply-To: <pi-1@example.org>
References: <pi-1@example.org>

Applied, thanks.
EOF
commit_msg "$PT_TMP/1.eml"
commit_msg "$PT_TMP/2.eml"
expect_out "read 2 messages from 1 sources: 1 new, 0 already stored, 1 skipped" \
	"$bin" --state "$st" archive import --public-inbox "$pi"
expect_out "read 0 messages" \
	"$bin" --state "$st" archive import --public-inbox "$pi"
commit_msg "$PT_TMP/3.eml"
expect_out "read 1 messages from 1 sources: 1 new" \
	"$bin" --state "$st" archive import --public-inbox "$pi"
expect_out "read 3 messages from 1 sources: 0 new, 2 already stored, 1 skipped" \
	"$bin" --state "$st" archive import --full --public-inbox "$pi"
# Uwe's one "Applied, thanks." names no commit: no authority yet
expect_out '"applied": 0, "applied_reply": 0' \
	"$bin" --state "$st" archive stats --json
expect_err "^error: archive import: --maintainers '$PT_TMP/NOPE': .*No such file" \
	"$bin" --state "$st" archive import --maintainers "$PT_TMP/NOPE" \
	--public-inbox "$pi"
printf 'PWM SUBSYSTEM\nM:\tUwe <uwe@example.org>\nF:\tdrivers/pwm/\n' \
	>"$PT_TMP/MAINTAINERS"
expect_out "read 0 messages" "$bin" --state "$st" archive import \
	--maintainers "$PT_TMP/MAINTAINERS" --public-inbox "$pi"
expect_out '"applied": 1, "applied_reply": 1' \
	"$bin" --state "$st" archive stats --json
expect_out '"skipped": 1, ' "$bin" --state "$st" archive stats --json
# one count a line, its unit in the label: patches beside messages
"$bin" --state "$st" archive stats > "$PT_TMP/stats.txt"
expect_out '^applied, patches +1$' cat "$PT_TMP/stats.txt"
expect_out '^applied notices, messages +1$' cat "$PT_TMP/stats.txt"
expect_out '^applied by a maintainer.s reply, patches +1$' cat "$PT_TMP/stats.txt"
pt_checks=$((pt_checks + 1))
sed -n 1,19p "$PT_TMP/stats.txt" > "$PT_TMP/counts.txt"
[ "$(grep -Ec '^[a-z][^0-9]*[a-z)]  +[0-9]+$' "$PT_TMP/counts.txt")" = 19 ] ||
	fail "archive stats: not one labelled count a line: $(cat "$PT_TMP/stats.txt")"
# then a blank line and the table per list, the total last
expect_out '^list +postings applied applied_id applied_reply applied_bot bugs fixes unresolved$' \
	cat "$PT_TMP/stats.txt"
# the sample series carry a List-Id; the epoch's mail has none, so it
# counts under its source; the sample's Fixes: names no applied commit
expect_out "^$pi +1 +1 +0 +1 +0 +0 +0 +0\$" cat "$PT_TMP/stats.txt"
expect_out '^netdev.vger.kernel.org +3 +0 +0 +0 +0 +0 +1 +1$' \
	cat "$PT_TMP/stats.txt"
expect_out '^\(total\) +4 +1 +0 +1 +0 +0 +1 +1$' cat "$PT_TMP/stats.txt"
pt_checks=$((pt_checks + 1))
[ "$(wc -l < "$PT_TMP/stats.txt")" = 24 ] ||
	fail "archive stats: 19 counts, a blank line, a header, 3 rows: $(cat "$PT_TMP/stats.txt")"
expect_out '"lists": \[\{"list": "'"$pi"'", "postings": 1, "applied": 1, "applied_id": 0, "applied_reply": 1, "applied_bot": 0, "bugs": 0, "fixes": 0, "unresolved": 0\}, \{"list": "netdev' \
	"$bin" --state "$st" archive stats --json

# a gzip'd mbox cut short: what was read is stored, the file is named
# with the problem on stderr and the exit status is 1
st3=$PT_TMP/state3
size=$(stat -c %s "$PT_TMP/s.mbox.gz")
head -c $((size - 30)) "$PT_TMP/s.mbox.gz" > "$PT_TMP/cut.mbox.gz"
expect_exit 1 "$bin" --state "$st3" archive import --mbox "$PT_TMP/cut.mbox.gz"
expect_err "^error: archive import: '$PT_TMP/cut.mbox.gz': compressed stream ends early \(message 4 and after not read\)\$" \
	"$bin" --state "$PT_TMP/state4" archive import --mbox "$PT_TMP/cut.mbox.gz"
expect_out '"messages": 3, ' "$bin" --state "$st3" archive stats --json
expect_out '"patches": 2, ' "$bin" --state "$st3" archive stats --json
# with a good file after it, the good one is read too
expect_exit 1 "$bin" --state "$PT_TMP/state5" archive import \
	--mbox "$PT_TMP/cut.mbox.gz" "$mbox"
expect_out '"sources": 2, "messages": 4, ' \
	"$bin" --state "$PT_TMP/state5" archive stats --json
expect_out '"outcome": "applied"' "$bin" --state "$st" archive features \
	--at apply
finish
