#!/bin/bash
# test_faithful.sh - every reason `score` shows is a true statement about
# the patch (issue 21): on the kernel-like history of
# tests/lib/trained.sh, tests/bench/faithful/check.py checks each reason
# of the newest 60 commits against the commit itself (quoted words are
# whole words where claimed, tags hold in the tree, numbers are the
# feature's values); a single false statement fails.  It also makes sure
# the check has something to check: at least 300 reasons, words, tags
# and numbers among them; and that a planted lie is caught.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

py=${PT_PYTHON:-/usr/bin/python3}
check=$PT_SOURCE_DIR/tests/bench/faithful/check.py
tmp=$(mktemp -d /tmp/pt-faithful-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp GIT_CONFIG_NOSYSTEM=1

bash "$PT_SOURCE_DIR/tests/lib/trained.sh" "$tmp" || {
	echo "FAIL: cannot build the trained state" >&2
	exit 1
}

out=$("$py" "$check" "$tmp/state" "$tmp/linux" 60 2>&1)
rc=$?
pt_checks=$((pt_checks + 1))
[ "$rc" = 0 ] || fail "false reasons: $out"
pt_checks=$((pt_checks + 1))
"$py" - "$out" <<'PY' || fail "too little checked: $out"
import json, re, sys
line = sys.argv[1].splitlines()[0]
m = re.search(r'reasons checked (\d+), false (\d+).* by kind (\{.*\})', line)
assert m, line
checked, false, kinds = int(m.group(1)), int(m.group(2)), json.loads(m.group(3))
assert checked >= 300 and false == 0, line
for k in ("text", "number", "tag"):
    assert kinds.get(k, 0) > 0, (k, kinds)
PY

# a lie is caught: the checker fed a reason the commit does not bear
pt_checks=$((pt_checks + 1))
"$py" - "$check" "$tmp/linux" <<'PY' || fail "the checker misses a lie"
import importlib.util, subprocess, sys
spec = importlib.util.spec_from_file_location("check", sys.argv[1])
ck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ck)
repo = sys.argv[2]
c = subprocess.run(["git", "-C", repo, "rev-list", "-1", "--no-merges",
                    "HEAD"], capture_output=True, text=True).stdout.strip()
cm = ck.Commit(repo, c)
lies = [{"reason": "changelog says 'xyzzy'", "feature": "text"},
        {"reason": "adds code with 'xyzzy_frobnicate'", "feature": "text"},
        {"reason": "lines added: 987654", "feature": "size.lines_added"},
        {"reason": "authored while the mainline was at v99.0-rc1",
         "feature": "proc.rc"}]
for r in lies:
    kind, ok = ck.check_reason(repo, cm, r, {"size.lines_added": 3}, {})
    assert ok is False, (r, kind, ok)
twice = {"features": [{"reason": "posted 1.0 days after the mainline's "
                          "v1.6 release"}] * 2, "text": []}
assert ck.duplicates(twice, []), "a sentence stated twice passes"
assert not ck.duplicates({"features": twice["features"][:1]}, [])
PY
finish
