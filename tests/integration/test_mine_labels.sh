#!/bin/bash
# test_mine_labels.sh - how `mine` labels a generated repository whose
# Fixes: trailers take the forms real trees write (issue 26): the id in
# <>, a doubled "Fixes:", a ':' after the id, a quoted id, no
# parentheses, a subject in curly quotes without an id; the unresolvable
# kinds (Coverity, URL, an id of another project) counted apart; a typo
# fixed in code labels its target while one fixed in a comment and a
# string stays trivial; and `mine --report` printing its references and
# trivial lines once; `train` telling the regime's labelled commits from
# the rows the model counts.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
pt_tmpdir
repo=$PT_TMP/repo
st=$PT_TMP/state
export GIT_CONFIG_NOSYSTEM=1 HOME=$PT_TMP
n=0
commit() { # SUBJECT [BODY]
	n=$((n + 1))
	d=$((1577836800 + n * 86400))
	git -C "$repo" add -A
	GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.org \
		GIT_AUTHOR_DATE="@$d +0000" GIT_COMMITTER_NAME=C \
		GIT_COMMITTER_EMAIL=c@example.org \
		GIT_COMMITTER_DATE="@$d +0000" \
		git -C "$repo" commit -q -m "$1" ${2:+-m "$2"}
}
short() { git -C "$repo" rev-parse --short=12 "$1"; }
target() { # N SUBJECT: a commit adding src/tN.c
	printf 'int t%s(void)\n{\n\treturn %s;\n}\n' "$1" "$1" \
		>"$repo/src/t$1.c"
	commit "$2"
	eval "t$1=\$(short HEAD)"
}
fixer() { # N SUBJECT TRAILER: a code change to src/tN.c
	echo "int fix$n;" >>"$repo/src/t$1.c"
	commit "$2" "$3

Signed-off-by: A <a@example.org>"
}

git init -q -b main "$repo" && mkdir "$repo/src" || skip "no git"
echo 'int main;' >"$repo/src/main.c"
commit "initial"
target 1 "usb: gadget: add t1"
target 2 "t2: add"
target 3 "t3: add"
target 4 "t4: add"
target 5 "t5: add"
target 6 "ARM: dts: add t6"
target 9 "t9: add"
target 7 "reg: add the register map"
target 8 "msg: add messages"
cat >"$repo/src/t7.c" <<'C'
#define REG_CTRL 0x14 /* control */
C
commit "reg: define the control register"
t7=$(short HEAD)
cat >"$repo/src/t8.c" <<'C'
int t8(void)
{
	pr_info("recieve done\n"); /* recieve path */
	return 0;
}
C
commit "msg: say when done"
t8=$(short HEAD)

fixer 1 "usb: gadget: fix t1" "Fixes: <$t1> (\"usb: gadget: add t1\")"
fixer 2 "t2: fix" "Fixes: Fixes: $t2 (\"t2: add\")"
fixer 3 "t3: fix" "Fixes: $t3: (\"t3: add\")"
fixer 4 "t4: fix" "Fixes: \"$t4\": t4: add"
fixer 5 "t5: fix" "Fixes: $t5 \"t5: add\""
fixer 9 "t9: fix" "Fixes: <$t9> \"t9: add\""
fixer 6 "ARM: dts: fix t6" "Fixes: (\"“ARM: dts: add t6”\")"
fixer 1 "cov: fix a leak" "Fixes: Coverity CID 1234567"
fixer 2 "url: fix the report" "Fixes: https://github.com/example/x/issues/1"
fixer 3 "foreign: fix" "Fixes: 0123456789ab (\"a commit of another tree\")"
sed -i 's/0x14/0x41/' "$repo/src/t7.c"
commit "reg: fix typo in register offset that broke probing" \
	"Fixes: $t7 (\"reg: define the control register\")"
sed -i 's/recieve/receive/g' "$repo/src/t8.c"
commit "msg: fix typo" "Fixes: $t8 (\"msg: say when done\")"

out=$("$bin" --state "$st" mine --repo "$repo" --report 2>&1)
check "mine --report succeeds" [ $? = 0 ]
sql() { sqlite3 "$st/state.db" "$1"; }
target_of() { # FIXER-SUBJECT: the subject of the commit it resolves to
	sql "SELECT coalesce(t.subject, '-') || '|' || r.how FROM fix_refs r
	     JOIN commits c ON c.id = r.commit_id LEFT JOIN commits t ON
	     t.id = r.target_id WHERE c.subject = '$1'"
}
expect_target() { # FIXER-SUBJECT WANT
	local got
	pt_checks=$((pt_checks + 1))
	got=$(target_of "$1")
	[ "$got" = "$2" ] || fail "'$1' resolved to '$got', want '$2'"
}
expect_target "usb: gadget: fix t1" "usb: gadget: add t1|prefix"
expect_target "t2: fix" "t2: add|prefix"
expect_target "t3: fix" "t3: add|prefix"
expect_target "t4: fix" "t4: add|prefix"
expect_target "t5: fix" "t5: add|prefix"
expect_target "t9: fix" "t9: add|prefix"
expect_target "ARM: dts: fix t6" "ARM: dts: add t6|subject"
expect_target "cov: fix a leak" "-|unresolved"
expect_target "url: fix the report" "-|unresolved"
expect_target "foreign: fix" "-|unresolved"
expect_target "reg: fix typo in register offset that broke probing" \
	"reg: define the control register|prefix"

# the unresolvable kinds, each counted apart
whys=$(sql "SELECT group_concat(why, ',') FROM (SELECT r.why FROM fix_refs r
	    JOIN commits c ON c.id = r.commit_id WHERE r.how = 'unresolved'
	    ORDER BY c.seq)")
check "unresolved whys are coverity,url,missing (got $whys)" \
	[ "$whys" = "coverity,url,missing" ]
check "report counts the unresolvable apart" \
	grep -q "^unresolvable: coverity 1, url 1, foreign id 1 .*other unresolved 0" \
	<<<"$out"

# a typo in code labels its target; one in a comment and a string does not
bug() { sql "SELECT l.bug FROM labels l JOIN commits c ON c.id = l.commit_id
	     WHERE c.subject = '$1'"; }
check "code typo: not trivial" [ "$(sql "SELECT coalesce(r.trivial, '-') FROM
	fix_refs r JOIN commits c ON c.id = r.commit_id WHERE c.subject =
	'reg: fix typo in register offset that broke probing'")" = "-" ]
check "code typo: its target is bug-introducing" \
	[ "$(bug 'reg: define the control register')" = 1 ]
check "comment and string typo: trivial (spelling)" [ "$(sql "SELECT
	r.trivial FROM fix_refs r JOIN commits c ON c.id = r.commit_id WHERE
	c.subject = 'msg: fix typo'")" = spelling ]
check "comment and string typo: its target is not bug-introducing" \
	[ "$(bug 'msg: say when done')" = 0 ]

# one block: references and trivial once each, their numbers labelled
check "references: printed once" [ "$(grep -c '^references:' <<<"$out")" = 1 ]
check "trivial: printed once" [ "$(grep -c '^trivial:' <<<"$out")" = 1 ]
check "references line labelled" grep -q \
	"^references:  12 from fixing commits (Fixes: and reverts): by full id 0, by id prefix 8, by subject 1, unresolved 3;" \
	<<<"$out"
check "trivial line labelled" grep -q \
	"^trivial:     1 references dropped by a trivial-fix rule: nocode 0, spelling 1, race 0" \
	<<<"$out"
# without --report the same two lines, once
out=$("$bin" --state "$st" mine --repo "$repo" 2>&1)
check "mine: references printed once" \
	[ "$(grep -c '^references:' <<<"$out")" = 1 ]
check "mine: no report lines" [ "$(grep -c '^unresolvable:' <<<"$out")" = 0 ]
[ "$pt_failures" = 0 ] || printf '%s\n' "$out" >&2

# train: a commit that cannot be read as a patch (a diff line over 1 MiB)
# is no row; the output says so, so the regime's count of labelled
# commits and the model's count of rows can be told apart
python3 -c "print('x' * 1100000)" >"$repo/big.txt"
commit "big: add a long line"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do # both classes in every slice
	echo "int more$i;" >>"$repo/src/main.c"
	if [ $((i % 2)) = 0 ]; then
		commit "main: fix more$i" "Cc: stable@vger.kernel.org"
	else
		commit "main: add more$i"
	fi
done
"$bin" --quiet --state "$st" mine --repo "$repo" >/dev/null 2>&1 ||
	fail "cannot mine the long line"
all=$(sql "SELECT count(*) FROM commits")
out=$("$bin" --state "$st" train --task fix 2>&1)
check "train --task fix succeeds" [ $? = 0 ]
check "the regime counts $all labelled commits" \
	grep -q "^label regime: .*($all commits" <<<"$out"
check "rows: $((all - 1)) of $all, the unreadable one named" grep -Eq \
	"^rows: +$((all - 1)) of the $all labelled commits from the regime start; 1 left out, not readable as a patch \(first: commit '[0-9a-f]{12}': line [0-9]+ of the diff is longer than 1048576 bytes\)$" \
	<<<"$out"
check "the model counts $((all - 1)) rows" \
	grep -Eq "^fix  model [^ ]+: $((all - 1)) commits" <<<"$out"
[ "$pt_failures" = 0 ] || printf '%s\n' "$out" >&2
finish
