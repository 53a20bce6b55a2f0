#!/bin/bash
# test_score_cli.sh - `train`, `score` and `explain` on the synthetic
# kernel-like history of tests/lib/trained.sh: score --json carries both
# probabilities, the model versions of the saved manifests and five
# reasons in words per task; the text form says the same; a commit and
# the same commit as a mail (git format-patch) get the same p(fix) and
# p(bug) within 0.1 and the same release-cycle columns (the mainline's
# tag when written: "authored ..." / "posted ..."), and a file and stdin
# the same output; explain --json lists every column the model uses and
# the text model's part as the patch's tokens, and their contributions
# plus the base are the uncalibrated log-odds that
# the manifest's calibration maps to p; training twice on the same data writes the same bytes; bad
# input fails with a message and a non-zero exit.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
py=${PT_PYTHON:-/usr/bin/python3}
data=$PT_SOURCE_DIR/tests/data
tmp=$(mktemp -d /tmp/pt-score-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp GIT_CONFIG_NOSYSTEM=1

bash "$PT_SOURCE_DIR/tests/lib/trained.sh" "$tmp" || {
	echo "FAIL: cannot build the trained state" >&2
	exit 1
}
st=$tmp/state
repo=$tmp/linux
pt() { "$bin" --state "$st" "$@"; }
pycheck() { pt_checks=$((pt_checks + 1)); "$py" - "$@"; }
# a fix (planted "fix ..." subjects) and a feature commit
fixrev=$(git -C "$repo" log -1 --format=%H -E --grep='^[a-z0-9]+: fix NULL pointer dereference')
featrev=$(git -C "$repo" log -1 --format=%H --invert-grep --grep=fix)
[ -n "$fixrev" ] && [ -n "$featrev" ] || fail "no fix or feature commit"

# --- score --json: p_fix, p_bug, versions, five reasons in words -------
for rev in "$fixrev" "$featrev"; do
	kind=fix
	[ "$rev" = "$featrev" ] && kind=feat
	pt score --json --commit "$rev" --repo "$repo" > "$tmp/s.json" ||
		fail "score --json --commit $rev failed"
	pycheck "$tmp/s.json" "$st/models" "$kind" <<'EOF' || fail "score --json $rev"
import json, re, sys
j = json.load(open(sys.argv[1]))
for t, key in (("fix", "p_fix"), ("risk", "p_bug")):
    man = json.load(open("%s/%s/manifest.json" % (sys.argv[2], t)))
    assert 0 < j[key] < 1, (key, j[key])
    assert j["models"][t] == man["version"], (j["models"], man["version"])
    assert j["models"][t].startswith(t + "-")
    rs = j["reasons"][t]
    # the fix commit's words carry its p(fix); a feature commit may have
    # fewer than five reasons: its text scores as a changelog with no
    # telling word, which is the base, not a reason
    assert len(rs) == 5 if (t, sys.argv[3]) != ("fix", "feat") else \
        len(rs) <= 5, (t, rs)
    ws = [abs(r["weight"]) for r in rs]
    assert ws == sorted(ws, reverse=True), ws
    for r in rs:
        assert r["weight"] != 0, r
        # words, not a column name: "authored while the mainline was at v1.6-rc7"
        assert re.search(r"[a-z]+ [a-z']+", r["reason"]), r
        assert r["reason"] != r["feature"] and "." not in r["reason"].split()[0], r
assert j["history"] is True
EOF
done
out=$(pt score --commit "$fixrev" --repo "$repo")
[ "$(grep -Ec '^p\(fix\) 0\.[0-9]{3}  \(model fix-[0-9a-f]{16}\)$' <<<"$out")" = 1 ] ||
	fail "text score: no p(fix) line: $out"
[ "$(grep -Ec '^p\(bug\) 0\.[0-9]{3}  \(model risk-[0-9a-f]{16}\)$' <<<"$out")" = 1 ] ||
	fail "text score: no p(bug) line"
[ "$(grep -Ec '^   [+-][0-9]+\.[0-9]{2}  [^ ]' <<<"$out")" = 10 ] ||
	fail "text score: not five reasons per task: $out"
pfix=$(pt score --json --commit "$fixrev" --repo "$repo" |
	"$py" -c 'import json,sys; print(json.load(sys.stdin)["p_fix"])')
pfeat=$(pt score --json --commit "$featrev" --repo "$repo" |
	"$py" -c 'import json,sys; print(json.load(sys.stdin)["p_fix"])')
"$py" -c "import sys; sys.exit(not ($pfix > 0.5 > $pfeat))" ||
	fail "p(fix) of the fix $pfix, of the feature $pfeat"

# --- a mail and the commit it came from -------------------------------
git -C "$repo" format-patch -1 --stdout "$fixrev" > "$tmp/fix.eml"
pt score --json --commit "$fixrev" --repo "$repo" > "$tmp/c.json"
pt score --json "$tmp/fix.eml" > "$tmp/m.json" || fail "score on a mail failed"
pt score --json - < "$tmp/fix.eml" > "$tmp/stdin.json"
cmp -s "$tmp/m.json" "$tmp/stdin.json" || fail "score FILE and score - differ"
# A mail is not mined: its file history comes from the as-of summaries
# of the stored changes before it (histsum.c; the SQL of features.c and
# bughist.c where there is no summary), the same values as the miner's
# here.  What a mail cannot have (the commit's latency, a
# reviewer's MAINTAINERS role) may still move p(bug) a little.
pycheck "$tmp/c.json" "$tmp/m.json" <<'EOF' || fail "mail and commit disagree"
import json, sys
c, m = (json.load(open(f)) for f in sys.argv[1:3])
assert c["models"] == m["models"], (c["models"], m["models"])
assert abs(c["p_fix"] - m["p_fix"]) < 1e-6, (c["p_fix"], m["p_fix"])
assert abs(c["p_bug"] - m["p_bug"]) < 0.1, (c["p_bug"], m["p_bug"])
EOF

# The past-bug columns (bughist.c) of the mail, from SQL over the commits
# dated before it, are the miner's for the commit.
pt explain --json --commit "$fixrev" --repo "$repo" > "$tmp/ce.json" ||
	fail "explain --json --commit failed"
pt explain --json "$tmp/fix.eml" > "$tmp/me.json" || fail "explain on a mail failed"
pycheck "$tmp/ce.json" "$tmp/me.json" <<'EOF2' || fail "mail and commit past bugs differ"
import json, sys
c, m = ({f["feature"]: f["value"] for f in json.load(open(p))["risk"]["features"]}
        for p in sys.argv[1:3])
names = ("hist.file_bugs", "hist.file_bug_rate", "hist.file_fixes",
         "exp.author_bugs", "exp.author_bug_rate", "hist.component_changes",
         "hist.component_bug_rate")
for n in names:
    assert n in c and n in m, (n, sorted(c))
    assert c[n] is not None and abs(c[n] - m[n]) < 1e-6, (n, c[n], m[n])
assert any(c[n] > 0 for n in names[:3]), c
EOF2

# The release-cycle columns are the mainline's state when the patch was
# written: the commit's author date, the mail's Date: (format-patch
# writes the author date), so both get the same values; the commit's
# sentence says "authored", the mail's "posted", neither "merged in".
pycheck "$tmp/ce.json" "$tmp/me.json" <<'EOF2' || fail "mail and commit cycle differ"
import json, sys
names = ("proc.rc", "proc.late_rc", "proc.days_since_tag",
         "proc.days_since_release")
(c, cr), (m, mr) = (
    ({f["feature"]: f["value"] for f in x["features"]},
     {f["feature"]: f["reason"] for f in x["features"]})
    for x in (json.load(open(p))["risk"] for p in sys.argv[1:3]))
for n in names:
    assert c[n] is not None and abs(c[n] - m[n]) < 1e-6, (n, c[n], m[n])
    assert cr[n].startswith("authored ") and mr[n].startswith("posted "), \
        (cr[n], mr[n])
    assert cr[n][len("authored"):] == mr[n][len("posted"):], (cr[n], mr[n])
    assert "merged" not in cr[n], cr[n]
assert cr["proc.rc"] != cr["proc.late_rc"], cr["proc.rc"]
EOF2

# --- explain: every column, and they add up ----------------------------
pt explain --json --commit "$fixrev" --repo "$repo" > "$tmp/e.json" ||
	fail "explain --json failed"
pycheck "$tmp/e.json" "$tmp/c.json" "$st/models" <<'EOF' || fail "explain --json"
import json, math, sys
e = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))
P_EPS = 1e-6
def calibrate(man, f):
    if man["calibration"] == "platt":
        p = 1 / (1 + math.exp(man["platt"]["a"] * f + man["platt"]["b"]))
    else:
        x, y = man["isotonic"]["x"], man["isotonic"]["y"]
        if not x:
            p = 1 / (1 + math.exp(-f))
        elif f <= x[0]:
            p = y[0]
        elif f >= x[-1]:
            p = y[-1]
        else:
            i = max(k for k in range(len(x)) if x[k] <= f)
            p = y[i] + (y[i + 1] - y[i]) * (f - x[i]) / (x[i + 1] - x[i])
    return min(max(p, P_EPS), 1 - P_EPS)
for t, key in (("fix", "p_fix"), ("risk", "p_bug")):
    man = json.load(open("%s/%s/manifest.json" % (sys.argv[3], t)))
    x = e[t]
    names = [f["feature"] for f in x["features"]]
    assert len(names) == len(set(names)), names
    assert set(names) == set(man["features"]["used"]), \
        set(names) ^ set(man["features"]["used"])
    if t == "fix":
        assert not any(n.startswith("label.") for n in names), names
    # the text model's part is told by the patch's tokens: every row,
    # tokens too, is a term of the sum
    f = x["bias"] + sum(c["weight"] for c in x["features"] + x["text"])
    assert abs(calibrate(man, f) - x["p"]) < 1e-6, (t, f, x["p"])
    assert abs(x["p"] - s[key]) < 1e-6, (x["p"], s[key])
    assert x["model"] == s["models"][t]
    assert x["text"] and all(c["feature"] in ("text", "text.other")
                             for c in x["text"])
    texts = [c["reason"] for c in x["text"]]
    assert len(texts) == len(set(texts)), texts
EOF
out=$(pt explain --commit "$fixrev" --repo "$repo")
nused=$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["features"]["used"]))' \
	"$st/models/fix/manifest.json")
got=$(awk '/^p\(fix\)/ { on = 1 } /^p\(bug\)/ { on = 0 }
	on && /^ +[+-][0-9]+\.[0-9][0-9][0-9] / && $2 !~ /^text/ { n++ }
	END { print n + 0 }' <<<"$out")
[ "$got" = "$nused" ] || fail "explain lists $got fix columns, the model uses $nused"
grep -Eq '^  base log-odds [+-][0-9]' <<<"$out" || fail "explain: no base log-odds"

# --- deterministic training ------------------------------------------------
mkdir "$tmp/state2"
cp "$st/state.db" "$tmp/state2/"
rm -rf "$tmp/state2/models"
"$bin" --quiet --state "$tmp/state2" train > "$tmp/train2.log" 2>&1 ||
	fail "second training failed: $(cat "$tmp/train2.log")"
for t in fix risk; do
	for f in manifest.json text.model trees.json; do
		pt_checks=$((pt_checks + 1))
		cmp -s "$st/models/$t/$f" "$tmp/state2/models/$t/$f" ||
			fail "training twice: $t/$f differs"
	done
done

# --- a commit whose blob is missing from the object database --------------
# `mine` counts such a change as uncounted and goes on; score does the
# same: the other files are scored, the unread one named.
cp -r "$repo" "$tmp/holey"
hrepo=$tmp/holey
hfile=$(git -C "$hrepo" ls-files '*.c' | head -1)
echo "/* one more line */" >> "$hrepo/$hfile"
git -C "$hrepo" add "$hfile"
printf 'other\n' > "$hrepo/README.extra"
git -C "$hrepo" add README.extra
git -C "$hrepo" -c user.name=T -c user.email=t@example.org \
	commit -q -m "foo: touch $hfile"
hblob=$(git -C "$hrepo" rev-parse "HEAD:$hfile")
rm -f "$hrepo/.git/objects/${hblob:0:2}/${hblob:2}"
git -C "$hrepo" cat-file -e "$hblob" 2>/dev/null && fail "the blob is still there"
expect_exit 0 pt score --commit HEAD --repo "$hrepo"
expect_err "the change to '$hfile' could not be read .* not counted" \
	pt score --commit HEAD --repo "$hrepo"
expect_exit 0 pt explain --commit HEAD --repo "$hrepo"
pt score --json --commit HEAD --repo "$hrepo" > "$tmp/h.json" 2>/dev/null ||
	fail "score --json on a commit with a missing blob failed"
pycheck "$tmp/h.json" "$hfile" <<'EOF2' || fail "score --json uncounted"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["uncounted"] == [sys.argv[2]], j["uncounted"]
assert j["merge"] is None, j["merge"]
assert 0 < j["p_fix"] < 1 and 0 < j["p_bug"] < 1, j
EOF2

# --- a merge commit: scored against its first parent, and said so ------
mrepo=$tmp/merged
git clone -q "$repo" "$mrepo"
git -C "$mrepo" checkout -q -b side HEAD~1
printf 'side\n' > "$mrepo/side.txt"
git -C "$mrepo" add side.txt
gitc() { git -C "$mrepo" -c user.name=T -c user.email=t@example.org "$@"; }
gitc commit -q -m "side: add a file"
gitc checkout -q -
gitc merge -q --no-ff -m "Merge branch 'side'" side
first=$(git -C "$mrepo" rev-parse HEAD^1)
expect_exit 0 pt score --commit HEAD --repo "$mrepo"
expect_err "is a merge of 2 parents: scored as its diff against the first parent, ${first:0:12}" \
	pt score --commit HEAD --repo "$mrepo"
pt score --json --commit HEAD --repo "$mrepo" > "$tmp/mg.json" 2>/dev/null ||
	fail "score --json on a merge failed"
pycheck "$tmp/mg.json" "$first" <<'EOF2' || fail "score --json merge"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["merge"] == {"parents": 2, "against": sys.argv[2]}, j["merge"]
assert j["uncounted"] == [], j["uncounted"]
EOF2

# --- bad input ---------------------------------------------------------------
expect_exit 1 pt score "$tmp/missing.eml"
no_input() { "$@" < /dev/null; }
for c in score explain; do
	expect_exit 1 no_input pt $c -
	expect_err "^error: no message in '<stdin>'\$" no_input pt $c --json -
done
printf 'not a mail\n' > "$tmp/junk.eml"
expect_exit 1 pt score "$tmp/junk.eml"
expect_err "^error: cannot parse '$tmp/junk.eml': " pt score "$tmp/junk.eml"
expect_err "missing\.eml" pt score "$tmp/missing.eml"
expect_exit 1 pt score "$data/mail/reply.eml"
expect_err "reply\.eml' has no diff" pt score "$data/mail/reply.eml"
expect_exit 1 pt explain "$data/mail/reply.eml"
expect_exit 2 pt train --task bogus
expect_err "--task is fix, risk or all" pt train --task bogus
expect_exit 2 pt score
expect_exit 2 pt score --commit HEAD
expect_err "--commit needs --repo" pt score --commit HEAD
expect_exit 2 pt score --frobnicate "$tmp/fix.eml"
expect_exit 1 pt score --commit no-such-rev --repo "$repo"
expect_err "cannot read commit 'no-such-rev'" pt score --commit no-such-rev --repo "$repo"
mkdir "$tmp/empty"
expect_exit 1 "$bin" --state "$tmp/empty" score "$tmp/fix.eml"
expect_err "no trained model" "$bin" --state "$tmp/empty" explain "$tmp/fix.eml"

finish
