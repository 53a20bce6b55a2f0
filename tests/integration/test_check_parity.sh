#!/bin/bash
# test_check_parity.sh - what `score` shows is byte for byte what the bot
# posts (issue 20): the bot (`run --once` against the Patchwork stand-in,
# 12 series) posts its checks, and `score --json` gives in "check" the
# very descriptions of the patchtriage-risk and patchtriage-stable checks
# it posted, read back from the stand-in: for every checked patch as
# Patchwork's mbox hands it to the bot (stable checks and a Fixes: line
# blamed in run.repo among them), with no thread in the database; then
# for an unanswered patch as its list mail, after its thread is imported
# (`archive import`) with a Reviewed-by/Tested-by given only on the list
# and a tagless reply reaching Patchwork makes the bot score it again, so
# the thread's features and the list's reviews count on both sides.
# Plain score prints the same "check:" line.  With an archive model
# (train --archive) in the state, the risk of that list mail is the
# archive model's, posted and shown alike.  A commit goes through the
# same path (no Message-ID, so no thread) and its check has the bot's
# form; it is not compared with a posted check: the bot posts only for
# mails, and a commit's features are not its mail's (committer date and
# committer review features against the mail's date and series prefix).
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-parity.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" imap || { echo "FAIL: servers" >&2; exit 1; }
cp -r "$tmp/t/state" "$tmp/st"
pt() { "$bin" --state "$tmp/st" --config "$tmp/config" "$@"; }
dump() { "$py" "$PT_SOURCE_DIR/tests/lib/pwdump.py" "http://127.0.0.1:$PW_PORT"; }
standin_import() { # FILE: as if the list's mail reached Patchwork
	"$py" -c 'import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__control__", method="POST",
    data=json.dumps({"import": open(sys.argv[2]).read()}).encode(),
    headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=10).read()' "http://127.0.0.1:$PW_PORT" "$1"
}

# The newest posted description of each context of the patch MSGID and
# the CLI's "check" must be the same strings; prints what differs.
same_checks() { # PWJSON SCOREJSON MSGID
	"$py" - "$@" <<'EOF'
import json, sys
pw = json.load(open(sys.argv[1]))
cli = json.load(open(sys.argv[2]))["check"]
posted = {}
for p in pw["patches"]:
    if p["msgid"] == sys.argv[3]:
        for c in p["checks"]:  # oldest first: the newest wins
            posted[c["context"]] = c["description"]
assert "patchtriage-risk" in posted, ("no risk check posted", posted)
want = {"patchtriage-risk": cli["risk"]}
if "patchtriage-stable" in posted:
    want["patchtriage-stable"] = cli["fix"]
for ctx, text in want.items():
    if posted[ctx] != text:
        print("%s posted: %r\n%s CLI:    %r" % (ctx, posted[ctx], ctx, text),
              file=sys.stderr)
        sys.exit(1)
if "patchtriage-stable" in want:
    print("stable: " + want["patchtriage-stable"])
EOF
}

# a patch of an opted-in list that no one has answered (its series,
# NNNNN-S-vV-*.eml, has no review mail): the mail is what Patchwork has
mail=
for f in "$tmp"/series/mail/*.eml; do
	grep -Eq '^List-Id: <(netdev|linux-pwm)\.' "$f" || continue
	grep -q '^diff --git' "$f" || continue
	s=$(basename "$f" | cut -d- -f2)
	ls "$tmp"/series/mail/*-"$s"-v*-review.eml >/dev/null 2>&1 && continue
	mail=$f
	break
done
check "an unanswered opted-in patch in the series" [ -n "$mail" ]
msgid=$(sed -n 's/^Message-ID: <\(.*\)>$/\1/p' "$mail")
listid=$(sed -n 's/^List-Id: <\(.*\)>$/\1/p' "$mail")

# ---- no thread known: the bot and the CLI alike ----------------------
pt run --once >"$tmp/run1.out" 2>"$tmp/run1.err"
rc=$?; check "run --once exits 0 ($(tail -3 "$tmp/run1.err"))" [ $rc = 0 ]
dump >"$tmp/pw1.json"
pt score --json "$mail" >"$tmp/score1.json" 2>"$tmp/score1.err"
rc=$?; check "score --json exits 0 ($(cat "$tmp/score1.err"))" [ $rc = 0 ]
check "without a thread, score's check is what the bot posted" \
	same_checks "$tmp/pw1.json" "$tmp/score1.json" "$msgid"

# every checked patch as Patchwork's mbox gives it to the bot (with the
# trailers of its comments): the untagged fixes' stable checks too
"$py" - "http://127.0.0.1:$PW_PORT" "$tmp/pw1.json" "$tmp/mbox" <<'EOF'
import json, os, sys, urllib.request
base, dump, out = sys.argv[1:]
os.makedirs(out, exist_ok=True)
for p in json.load(open(dump))["patches"]:
    if not p["checks"]:
        continue
    url = "%s/api/1.3/patches/%d/" % (base, p["id"])
    with urllib.request.urlopen(url, timeout=10) as r:
        mbox = json.load(r)["mbox"]
    with urllib.request.urlopen(mbox, timeout=10) as r:
        open("%s/%s.mbox" % (out, p["msgid"]), "wb").write(r.read())
EOF
nmbox=0
: >"$tmp/stable.txt"
for f in "$tmp"/mbox/*.mbox; do
	id=$(basename "$f" .mbox)
	pt score --json "$f" >"$tmp/m.json" 2>"$tmp/m.err" ||
		fail "score --json $id: $(cat "$tmp/m.err")"
	same_checks "$tmp/pw1.json" "$tmp/m.json" "$id" >>"$tmp/stable.txt" ||
		fail "patch $id: score's check is not what the bot posted"
	nmbox=$((nmbox + 1))
done
check "every checked patch's mbox scored the bot's way ($nmbox)" [ "$nmbox" -gt 3 ]
check "stable checks among them" grep -q '^stable: untagged fix? p(fix) ' "$tmp/stable.txt"
check "with the Fixes: tag blamed in run.repo" \
	grep -q '^stable: .*; consider Cc: stable and Fixes: [0-9a-f]\{12\} ("' "$tmp/stable.txt"

# ---- its thread in the database, a review given on the list ----------
# The review reaches only the list (the database): Patchwork sees a later
# reply without tags, which makes the bot score the series again, so the
# Tested-by counts for the bot only through the list's reviews.
reply() { # FROM ID BODY
	cat <<EOF
From: $1
To: ${listid%%.*}@vger.kernel.org
Subject: Re: review
Date: $(date -R)
Message-ID: <$2>
In-Reply-To: <$msgid>
References: <$msgid>
List-Id: <$listid>

$3
EOF
}
reply 'Jan Kara <jack@suse.cz>' parity-review-1@suse.cz '> +	ret = foo_xmit(priv, 1);

Looks good, tested on my machine.

Reviewed-by: Jan Kara <jack@suse.cz>
Tested-by: Jan Kara <jack@suse.cz>' >"$tmp/review.eml"
reply 'Ann Other <ann@example.org>' parity-ping-1@example.org \
	'Any news on this one?' >"$tmp/ping.eml"
for f in "$tmp"/series/mail/*.eml "$tmp/review.eml" "$tmp/ping.eml"; do
	printf 'From parity@example.org Thu Jan  1 00:00:00 1970\n'
	cat "$f"
	echo
done >"$tmp/list.mbox"
pt archive import --mbox "$tmp/list.mbox" >"$tmp/import.out" 2>&1
rc=$?; check "archive import exits 0 ($(tail -3 "$tmp/import.out"))" [ $rc = 0 ]
standin_import "$tmp/ping.eml"
pt run --once >"$tmp/run2.out" 2>"$tmp/run2.err"
rc=$?; check "second run exits 0 ($(tail -3 "$tmp/run2.err"))" [ $rc = 0 ]
dump >"$tmp/pw2.json"
pt score --json "$mail" >"$tmp/score2.json" 2>"$tmp/score2.err"
rc=$?; check "score --json exits 0 ($(cat "$tmp/score2.err"))" [ $rc = 0 ]
check "with its thread, score's check is what the bot posted" \
	same_checks "$tmp/pw2.json" "$tmp/score2.json" "$msgid"
check "the thread counts: p(bug) moved" "$py" -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(a["p_bug"] == b["p_bug"])' "$tmp/score1.json" "$tmp/score2.json"
check "the list's Tested-by counts" "$py" -c 'import json, sys
a, b = (json.dumps(json.load(open(f))["reasons"]) for f in sys.argv[1:])
sys.exit(not ("1 Tested-by" in b and "1 Tested-by" not in a))' \
	"$tmp/score1.json" "$tmp/score2.json"
pt score "$mail" >"$tmp/score2.txt"
risk=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["check"]["risk"])' "$tmp/score2.json")
check "plain score prints the same check" grep -qxF "  check: $risk" "$tmp/score2.txt"

# ---- the archive model: list mail the lists know ---------------------
# An archive model (train --archive, here on the synthetic archive of
# mkarchive.py) in the state scores the risk of a patch whose thread the
# database knows, in the bot as in score: the posted check names it.
"$py" "$PT_SOURCE_DIR/tests/lib/mkarchive.py" "$tmp/arch.mbox" 7 >/dev/null
"$bin" --state "$tmp/arch" archive import --mbox "$tmp/arch.mbox" >/dev/null &&
	"$bin" --state "$tmp/arch" train --archive >"$tmp/arch.out" 2>&1
rc=$?; check "train --archive exits 0 ($(tail -3 "$tmp/arch.out"))" [ $rc = 0 ]
cp -r "$tmp/arch/models/risk-archive" "$tmp/st/models/"
reply 'Ann Other <ann@example.org>' parity-ping-2@example.org \
	'Still waiting on this one.' >"$tmp/ping2.eml"
standin_import "$tmp/ping2.eml"
pt run --once >"$tmp/run3.out" 2>"$tmp/run3.err"
rc=$?; check "third run exits 0 ($(tail -3 "$tmp/run3.err"))" [ $rc = 0 ]
dump >"$tmp/pw3.json"
pt score --json "$mail" >"$tmp/score3.json" 2>"$tmp/score3.err"
rc=$?; check "score --json exits 0 ($(cat "$tmp/score3.err"))" [ $rc = 0 ]
check "with the archive model, score's check is what the bot posted" \
	same_checks "$tmp/pw3.json" "$tmp/score3.json" "$msgid"
check "the archive model scored the risk, and the check names it" \
	"$py" -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["models"]["risk"].startswith("risk-archive-"), j["models"]
assert "(model risk-archive-" in j["check"]["risk"], j["check"]' \
	"$tmp/score3.json"

# ---- a commit: the same path, the same text in both forms ------------
rev=$(git -C "$tmp/t/linux" log -1 --format=%H -- drivers/net)
pt score --json --commit "$rev" --repo "$tmp/t/linux" >"$tmp/c.json"
check "score --json --commit exits 0" [ $? = 0 ]
pt score --commit "$rev" --repo "$tmp/t/linux" >"$tmp/c.txt"
crisk=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["check"]["risk"])' "$tmp/c.json")
check "a commit's check has the bot's form" "$py" -c 'import json, re, sys
j = json.load(open(sys.argv[1]))
want = "p(bug) %.2f (model %s): " % (j["p_bug"], j["models"]["risk"])
assert j["check"]["risk"].startswith(want), (j["check"], want)' "$tmp/c.json"
check "plain score --commit prints it" grep -qxF "  check: $crisk" "$tmp/c.txt"
finish
