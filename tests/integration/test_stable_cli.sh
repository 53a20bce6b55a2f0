#!/bin/bash
# test_stable_cli.sh - `patchtriage stable` end to end: a repository made
# here (a main line and a linux-6.6.y branch with a cherry-pick -x, an
# "[ Upstream commit X ]" backport, a fix for code the branch never had,
# a candidate that conflicts, one that depends on another, an untagged
# CI change that keeps the build working, and a later range with a fix of
# a tagged fix the branch has not taken yet), ranked with
# the fix model of tests/lib/trained.sh.  Checks the table, --json (the
# exact candidates and their flags), --mbox in the AUTOSEL review format,
# --top, mined history, and the errors for bad input.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
py=${PT_PYTHON:-/usr/bin/python3}
pt_tmpdir
tmp=$PT_TMP
mkdir "$tmp/t"
bash "$PT_SOURCE_DIR/tests/lib/trained.sh" "$tmp/t" ||
	{ echo "cannot build the trained state" >&2; exit 1; }
state=$tmp/t/state

export HOME=$tmp GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME="Ann Author" \
	GIT_AUTHOR_EMAIL=ann@example.org GIT_COMMITTER_NAME="Ann Author" \
	GIT_COMMITTER_EMAIL=ann@example.org
repo=$tmp/repo
g() { git -C "$repo" "$@" >/dev/null 2>&1 || fail "git $*"; }
# set FILE LINE TEXT, then commit with the message on stdin
change() {
	sed -i "$2s/.*/$3/" "$repo/$1"
	g add -A . && git -C "$repo" commit -q -F - >/dev/null ||
		fail "commit to $1"
}
sha() { git -C "$repo" rev-parse "$1"; }

git init -q -b main "$repo" || fail "git init"
g config commit.gpgsign false
for f in a b c d; do seq 1 20 > "$repo/$f.c"; done
g add -A . && g commit -q -m "base: initial import"
change a.c 10 'int check(void) { return x < 10; }' <<<"a: add the bound check"
c1=$(sha HEAD)
g tag v1
g branch linux-6.6.y v1
g checkout -q linux-6.6.y
change c.c 15 'stable only' <<<"c: stable-only tweak"
g checkout -q main

change a.c 3 'fixed three' <<EOF
a: fix off-by-one in the loop

Fixes: ${c1:0:12} ("a: add the bound check")
Signed-off-by: Ann Author <ann@example.org>
EOF
m1=$(sha HEAD)
change b.c 5 'freed five' <<EOF
b: fix a leak on the error path

Cc: stable@vger.kernel.org
Signed-off-by: Ann Author <ann@example.org>
EOF
m2=$(sha HEAD)
printf 'int e(void)\n{\n\treturn 0;\n}\n' > "$repo/e.c"
g add e.c && g commit -q -m "e: add a new feature"
m3=$(sha HEAD)
change e.c 3 '\treturn p ? 0 : -1;' <<EOF
e: fix a NULL dereference

Fixes: ${m3:0:12} ("e: add a new feature")
Signed-off-by: Ann Author <ann@example.org>
EOF
m4=$(sha HEAD)
change c.c 15 'main fifteen' <<EOF
c: fix the timeout

Cc: stable@vger.kernel.org
EOF
m5=$(sha HEAD)
change d.c 7 'bounded seven' <<EOF
d: fix the bound check

The check let through one value too many, which crashed the driver.

Fixes: ${c1:0:12} ("a: add the bound check")
Cc: stable@vger.kernel.org
Signed-off-by: Ann Author <ann@example.org>
EOF
m6=$(sha HEAD)
change d.c 7 'bounded seven and positive' <<<"d: also reject negative values"
m7=$(sha HEAD)
# tagged, though it reads like no fix: listed whatever its p(fix)
change a.c 18 'renamed eighteen' <<EOF
a: rename the counter

Cc: stable@vger.kernel.org
EOF
m8=$(sha HEAD)
# untagged, no fix wording: ranked after the tagged ones as a CI change
# with toolchain words that touches only CI files (stable_build)
mkdir -p "$repo/.github/workflows"
printf 'on: push\njobs:\n  build:\n    runs-on: clang-18\n' \
	> "$repo/.github/workflows/build.yml"
g add -A . && g commit -q -m "ci: build with clang 18"
m9=$(sha HEAD)

g checkout -q linux-6.6.y
g cherry-pick -x "$m1"
sed -i '5s/.*/freed five/' "$repo/b.c"
g add b.c
printf 'b: fix a leak on the error path\n\n[ Upstream commit %s ]\n' "$m2" |
	git -C "$repo" commit -q -F - || fail "backport of m2"
g checkout -q main

run() { "$bin" --state "$state" stable --repo "$repo" --range v1..main \
	--branch linux-6.6.y "$@"; }

# the table: the summary line, one row per candidate, nothing else
expect_exit 0 run --threshold 0
out=$(run --threshold 0 2>"$tmp/err")
grep -q "^v1\.\.main onto linux-6\.6\.y: 9 commits, 2 already in the branch, 1 fix code the branch lacks, 6 candidates, 6 shown (tagged, hinted, build, or p(fix) >= 0\.00); model " <<<"$out" ||
	fail "table: wrong summary line: $(head -1 <<<"$out")"
grep -q "scoring without history" "$tmp/err" ||
	fail "no warning for a repository that is not mined"
grep -Eq '^ *rank +p\(fix\) +commit +tags +fixes +applies +depends-on +subject$' <<<"$out" ||
	fail "table: no header row"
[ "$(grep -Ec '^ *[0-9]+ +[01]\.[0-9]{3}  [0-9a-f]{12}  ' <<<"$out")" = 6 ] ||
	fail "table: not 6 candidate rows"
grep -Eq "  ${m6:0:12}  S F   present  clean +-  +d: fix the bound check$" <<<"$out" ||
	fail "table: wrong row for the tagged fix"
grep -Eq "  ${m5:0:12}  S     none     conflict +-  +c: fix the timeout$" <<<"$out" ||
	fail "table: wrong row for the conflicting fix"
grep -Eq "  ${m7:0:12}  -     none     conflict +${m6:0:12}  d: also reject negative values$" <<<"$out" ||
	fail "table: wrong row for the dependent commit"
grep -Eq "^ +4 +[01]\.[0-9]{3}  ${m9:0:12}  -     none     clean +-  +ci: build with clang 18$" <<<"$out" ||
	fail "table: the CI change is not 4th, after the tagged ones"
grep -q "keeps the build working: a CI or packaging component, toolchain words, only build files" <<<"$out" ||
	fail "table: no build signal line for the CI change"
for x in "$m1" "$m2" "$m4"; do
	grep -q "${x:0:12}" <<<"$out" && fail "table: lists ${x:0:12}"
done

# --json: the exact candidates and their facts, ranked by tier, then
# by p(fix)
run --json --threshold 0 > "$tmp/out.json" 2>/dev/null || fail "--json failed"
"$py" - "$tmp/out.json" "$m3" "$m5" "$m6" "$m7" "$m8" "$m9" <<'EOF' || fail "--json content"
import json, sys
j = json.load(open(sys.argv[1]))
m3, m5, m6, m7, m8, m9 = sys.argv[2:]
assert (j["commits"], j["in_branch"], j["dropped"], j["candidates_total"],
        j["shown"]) == (9, 2, 1, 6, 6), j
assert j["branch"] == "linux-6.6.y" and j["version"] == "6.6", j
c = {x["commit"]: x for x in j["candidates"]}
assert set(c) == {m3, m5, m6, m7, m8, m9}, c.keys()
keys = [(x["tier"], x["signals"]["hint"], x["signals"]["build"], x["p_fix"])
        for x in j["candidates"]]
assert keys == sorted(keys, reverse=True), keys
assert all(0 <= x["p_fix"] <= 1 for x in j["candidates"])
assert [x["rank"] for x in j["candidates"]] == [1, 2, 3, 4, 5, 6]
# the three tagged ones, then the build change, then the rest by p(fix)
assert [x["tier"] for x in j["candidates"][:3]] == [3, 3, 3]
assert j["candidates"][3]["commit"] == m9, j["candidates"][3]
want = {  # tier, cc_stable, fixes, target, applies, depends_on
    m3: (0, False, False, "none", "clean", []),
    m5: (3, True, False, "none", "conflict", []),
    m6: (3, True, True, "present", "clean", []),
    m7: (0, False, False, "none", "conflict", [m6]),
    m8: (3, True, False, "none", "clean", []),
    m9: (0, False, False, "none", "clean", []),
}
for k, (tier, cc, fx, t, a, d) in want.items():
    got = c[k]
    assert (got["tier"], got["cc_stable"], got["fixes"], got["target"],
            got["applies"], got["depends_on"]) == (tier, cc, fx, t, a, d), \
        (k, got)
assert len(c[m6]["targets"]) == 1 and c[m6]["files"] == 1, c[m6]
assert c[m6]["subject"] == "d: fix the bound check"
assert c[m6]["author"] == "Ann Author <ann@example.org>"
# one author and committer, seconds apart: a single series, and the
# untagged commits name their nearest tagged sibling; no fix wording
for k in (m3, m7):
    sig = c[k]["signals"]
    assert not sig["fix_subject"] and not sig["hint"], sig
    assert sig["series_len"] == 9 and sig["series_sibling"] in (m5, m6, m8)
    assert sig["text"] == "series of 9 with tagged " + \
        sig["series_sibling"][:12], sig
assert c[m7]["signals"]["series_sibling"] == m6
assert c[m6]["signals"]["cites"] is None
# no build facts in the other subjects and paths; m7 needs m6, not m6 m7
def build(k):
    sig = c[k]["signals"]
    return (sig["build_ci"], sig["build_component"], sig["build_words"],
            sig["build_files"], sig["build"], sig["prerequisite_of"])
for k in set(c) - {m9}:
    assert build(k) == (False,) * 5 + (None,), (k, c[k]["signals"])
# m9: "ci:" is a CI component, "clang" toolchain words, .github/ CI files
assert build(m9) == (True,) * 5 + (None,), c[m9]["signals"]
sig = c[m9]["signals"]
assert not sig["fix_subject"] and not sig["hint"], sig
assert sig["text"] == "series of 9 with tagged %s; keeps the build " \
    "working: a CI or packaging component, toolchain words, only build " \
    "files" % m8[:12], sig["text"]
EOF

# --mbox: one mail per candidate, in rank order, AUTOSEL format
run --threshold 0 --mbox "$tmp/out.mbox" >/dev/null 2>&1 || fail "--mbox failed"
"$py" - "$tmp/out.mbox" "$tmp/out.json" "$repo" <<'EOF' || fail "--mbox content"
import json, mailbox, subprocess, sys
msgs = list(mailbox.mbox(sys.argv[1]))
ranked = json.load(open(sys.argv[2]))["candidates"]
assert len(msgs) == 6, len(msgs)
for m, c in zip(msgs, ranked):
    assert m["Subject"] == "[PATCH AUTOSEL 6.6] " + c["subject"], m["Subject"]
    assert m["X-stable"] == "review" and m["X-Patchwork-Hint"] == "ignore"
    assert m["From"] == "Ann Author <ann@example.org>", m["From"]
    assert m["Message-ID"].startswith("<autosel-6.6-" + c["commit"][:12])
    body = m.get_payload()
    first = body.split("\n", 1)[0]
    assert first == "[ Upstream commit %s ]" % c["commit"], first
    # the original changelog (its subject is the Subject:) and diff
    orig = subprocess.run(["git", "-C", sys.argv[3], "log", "-1",
                           "--format=%b", c["commit"]], capture_output=True,
                          text=True).stdout.strip()
    assert orig in body and "\n---\ndiff --git a/" in body, (orig, body)
    p = float(m["X-Patchtriage-P-Fix"])
    assert abs(p - c["p_fix"]) < 0.001, (p, c["p_fix"])
    assert m["X-Patchtriage-Signals"] == (c["signals"]["text"] or None)
    dep = ", ".join(([c["needs"]] if c["needs"] else []) + c["depends_on"])
    assert m["X-Patchtriage-Depends-On"] == (dep or None), (m, c)
assert sum(1 for m in msgs if m["X-Patchtriage-Depends-On"]) >= 1
EOF
run --threshold 0 --mbox "$tmp/v.mbox" --version 6.6.12 >/dev/null 2>&1
[ "$(grep -c '^Subject: \[PATCH AUTOSEL 6\.6\.12\] ' "$tmp/v.mbox")" = 6 ] ||
	fail "--version does not name the mails' version"

# --top and the default threshold cut the list, not the totals; the
# threshold never hides a tagged candidate
run --json --threshold 0 --top 2 > "$tmp/top.json" 2>/dev/null
"$py" -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["shown"] == 2 and len(j["candidates"]) == 2
assert j["candidates_total"] == 6' "$tmp/top.json" || fail "--top 2"
run --json > "$tmp/def.json" 2>/dev/null
"$py" - "$tmp/out.json" "$tmp/def.json" "$m9" <<'EOF' || fail "default threshold"
import json, sys
every = json.load(open(sys.argv[1]))["candidates"]
shown = json.load(open(sys.argv[2]))["candidates"]
assert sys.argv[3] in [x["commit"] for x in shown]  # build: whatever p(fix)
want = [x["commit"] for x in every
        if x["tier"] or x["signals"]["hint"] or x["signals"]["build"] or
        x["p_fix"] >= 0.5]
assert [x["commit"] for x in shown] == want, (shown, want)
assert sum(1 for x in shown if x["tier"]) == 3
EOF

# the next range, before the branch took the tagged m5: a fix of m5 is
# kept and needs m5 first; a fix of the untagged m3 is still dropped
g checkout -q -b later main
change c.c 16 'timeout sixteen' <<EOF
c: fix the timeout fix

Fixes: ${m5:0:12} ("c: fix the timeout")
EOF
n1=$(sha HEAD)
change e.c 1 'int e(int p)' <<EOF
e: fix the prototype

Fixes: ${m3:0:12} ("e: add a new feature")
EOF
g checkout -q main
later() { "$bin" --state "$state" stable --repo "$repo" --range main..later \
	--branch linux-6.6.y --threshold 0 "$@"; }
out=$(later 2>/dev/null) || fail "later: stable failed"
grep -q "^main\.\.later onto linux-6\.6\.y: 2 commits, 0 already in the branch, 1 fix code the branch lacks, 1 candidates, 1 shown " <<<"$out" ||
	fail "later: wrong summary line: $(head -1 <<<"$out")"
grep -Eq "^ +1 +[01]\.[0-9]{3}  ${n1:0:12}  F     pending  conflict +${m5:0:12}  c: fix the timeout fix$" <<<"$out" ||
	fail "later: the fix of a queued fix is not listed as needing it"
later --json > "$tmp/later.json" 2>/dev/null || fail "later: --json failed"
"$py" - "$tmp/later.json" "$n1" "$m5" <<'EOF' || fail "later: --json content"
import json, sys
j = json.load(open(sys.argv[1]))
n1, m5 = sys.argv[2:]
assert (j["commits"], j["dropped"], j["shown"]) == (2, 1, 1), j
c = j["candidates"][0]
assert (c["commit"], c["target"], c["tier"], c["needs"], c["depends_on"]) \
    == (n1, "pending", 2, m5, []), c
EOF
later --mbox "$tmp/later.mbox" >/dev/null 2>&1 || fail "later: --mbox failed"
"$py" - "$tmp/later.mbox" "$m5" <<'EOF' || fail "later: --mbox does not name m5"
import mailbox, sys
msgs = list(mailbox.mbox(sys.argv[1]))
assert len(msgs) == 1 and msgs[0]["X-Patchtriage-Depends-On"] == sys.argv[2]
EOF
"$bin" --state "$state" stable --repo "$repo" --range v1..main \
	--branch linux-6.6.y --threshold 0 --json 2>/dev/null |
	"$py" -c 'import json, sys
assert all(c["needs"] is None for c in json.load(sys.stdin)["candidates"])' ||
	fail "v1..main: a candidate needs a commit before the range"

# with the repository mined, history is used and nothing is warned
"$bin" --quiet --state "$state" mine --repo "$repo" >/dev/null 2>&1 ||
	fail "cannot mine the repository"
run --threshold 0 >/dev/null 2>"$tmp/err2" || fail "mined: stable failed"
grep -q "without history" "$tmp/err2" && fail "mined: still warns"

# bad input: a clear message naming it, and a non-zero exit
expect_exit 1 run --branch no-such-branch
expect_err "'no-such-branch'" run --branch no-such-branch
expect_exit 1 "$bin" --state "$state" stable --repo "$repo" --range \
	v1...main --branch linux-6.6.y
expect_err "range 'v1\.\.\.main': use A\.\.B" "$bin" --state "$state" \
	stable --repo "$repo" --range v1...main --branch linux-6.6.y
expect_exit 1 "$bin" --state "$state" stable --repo "$repo" --range \
	no-such-tag..main --branch linux-6.6.y
expect_err "'no-such-tag'" "$bin" --state "$state" stable --repo "$repo" \
	--range no-such-tag..main --branch linux-6.6.y
expect_exit 1 "$bin" --state "$state" stable --repo "$tmp/nothing" \
	--range v1..main --branch linux-6.6.y
expect_err "cannot open repository '.*nothing'" "$bin" --state "$state" \
	stable --repo "$tmp/nothing" --range v1..main --branch linux-6.6.y
mkdir -p "$tmp/empty"
expect_exit 1 "$bin" --state "$tmp/empty" stable --repo "$repo" \
	--range v1..main --branch linux-6.6.y
expect_err "no fix model in" "$bin" --state "$tmp/empty" stable \
	--repo "$repo" --range v1..main --branch linux-6.6.y
expect_exit 2 "$bin" --state "$state" stable --repo "$repo" --range v1..main
expect_exit 2 run --top many
expect_exit 2 run --threshold 2
expect_exit 2 run --frobnicate
finish
