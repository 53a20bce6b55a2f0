#!/bin/bash
# test_run_honest.sh - what `run` and `status` say is what happened
# (issue 23), against the Patchwork stand-in, Dovecot and the SMTP sink
# (tests/lib/botenv.sh):
# - a dry run is rate limited as the real run is: the same count;
# - a token refused for some check posts (the others go) makes `run
#   --once` exit 1, naming Patchwork and the refused token, never the
#   token; so does an IMAP login refused;
# - checks found on Patchwork already are counted apart from those this
#   state sent ('skipped', "already-there"), not as "check sent";
# - `status` lists current errors only: after the token is fixed and
#   work of the same kind succeeds, the old errors are only counted.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-honest.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" || { echo "FAIL: servers" >&2; exit 1; }
fresh() { rm -rf "$tmp/$1"; cp -r "$tmp/t/state" "$tmp/$1"; }
pt() { # STATE CONFIG ARGS...
	local st=$1 cf=$2
	shift 2
	"$bin" --state "$tmp/$st" --config "$tmp/$cf" "$@"
}
sql() { sqlite3 "$tmp/$1/state.db" "$2"; }
sent() { find "$SMTP_MAILDIR/new" -type f | wc -l; }
control() { # JSON: the stand-in's faults
	"$py" -c 'import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__control__", method="POST",
    data=sys.argv[2].encode(), headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=10).read()' \
		"http://127.0.0.1:$PW_PORT" "$1"
}
import_mail() { # FILE: into the stand-in, as if posted now
	"$py" -c 'import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__control__", method="POST",
    data=json.dumps({"import": open(sys.argv[2]).read()}).encode(),
    headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=10).read()' \
		"http://127.0.0.1:$PW_PORT" "$1"
}
limited() { sed -n 's/.* \([0-9]*\) rate limited[;,].*/\1/p' "$1"; }
denied='{"status": 403, "body": "{\"detail\": \"Invalid token.\"}"}'

# ---- a dry run is rate limited as the real run will be ---------------
# one reply an hour per subsystem: the dry run must not say 0
sed 's/rate-limit = 1000/rate-limit = 1/' "$tmp/config" >"$tmp/rate.conf"
fresh st-dry
TMPDIR=$tmp pt st-dry rate.conf run --once --dry-run \
	>"$tmp/dry.out" 2>"$tmp/dry.err"
rc=$?; check "dry run exits 0 ($(tail -1 "$tmp/dry.err"))" [ $rc = 0 ]
nd=$(limited "$tmp/dry.err")
wd=$(grep -c '^would send reply:' "$tmp/dry.out")
check "the dry run counts rate-limited replies (${nd:-none})" [ "${nd:-0}" -gt 0 ]
check "and would send some ($wd)" [ "$wd" -gt 0 ]

# ---- the token refused mid-run: exit 1, say who refused --------------
# The check posts on one patch are refused as a revoked token is; the
# other checks and the replies go out.
fresh st-auth
control "{\"clear\": true, \"canned_next\": 1000, \"match\": \"/patches/4/checks/\", \"method\": \"POST\", \"canned\": $denied}"
n0=$(sent)
pt st-auth config run --once >/dev/null 2>"$tmp/auth.err"
rc=$?; check "a pass with a refused token exits 1 ($(tail -1 "$tmp/auth.err"))" [ $rc = 1 ]
check "it names Patchwork and the refused token" grep -Eq \
	"error: authentication refused \([0-9]+ times\), the last: .*patchwork 'http://127.0.0.1:$PW_PORT' refused the token" \
	"$tmp/auth.err"
check "though other checks were posted" \
	grep -Eq 'checks: [1-9][0-9]* posted' "$tmp/auth.err"
check "and replies sent" [ "$(sent)" -gt "$n0" ]
check "the summary counts the refusals" \
	grep -Eq '[1-9][0-9]* refused authentication' "$tmp/auth.err"
pt st-auth config status >"$tmp/auth-status.txt"
check "status lists the refused checks" \
	grep -q "^action error: check check/netdev/4/.*refused the token" "$tmp/auth-status.txt"
control '{"clear": true}'
pt st-auth config run --once >/dev/null 2>"$tmp/auth2.err"
rc=$?; check "with the token good again the pass exits 0 ($(tail -1 "$tmp/auth2.err"))" [ $rc = 0 ]
pt st-auth config status >"$tmp/auth-status2.txt"
check "status lists no error once they are posted" \
	[ -z "$(grep -E '^(action|work) error' "$tmp/auth-status2.txt")" ]

# ---- an IMAP login refused: exit 1, naming the server and user -------
printf 'wrong\n' >"$tmp/bad-imap-password"
chmod 600 "$tmp/bad-imap-password"
sed "s|token-file = $tmp/imap-password|token-file = $tmp/bad-imap-password|" \
	"$tmp/config" >"$tmp/badimap.conf"
pt st-auth badimap.conf run --once >/dev/null 2>"$tmp/imap.err"
rc=$?; check "a refused IMAP login exits 1" [ $rc = 1 ]
check "it says the login was refused for the user" grep -q \
	"error: authentication refused (1 times), the last: imap '127.0.0.1': .*refused for 'bot'" \
	"$tmp/imap.err"

# ---- checks on Patchwork already are not "sent" -----------------------
# A fresh state on the same stand-in: every check it would set is there
# (the runs above set them), so it posts none, and neither the summary
# nor status may say it sent any.
fresh st-again
n1=$(sent)
pt st-again rate.conf run --once >/dev/null 2>"$tmp/again.err"
rc=$?; check "the pass exits 0 ($(tail -1 "$tmp/again.err"))" [ $rc = 0 ]
check "it posts no check" grep -q 'checks: 0 posted' "$tmp/again.err"
nr=$(limited "$tmp/again.err")
check "the real run rate limits as the dry run said ($nr = $nd)" [ "$nr" = "$nd" ]
check "and sends what it said ($(($(sent) - n1)) = $wd)" [ $(($(sent) - n1)) = "$wd" ]
there=$(sed -n 's/.* \([0-9]*\) already there;.*/\1/p' "$tmp/again.err")
pt st-again rate.conf status --json >"$tmp/again.json"
check "status counts no check as sent, $there as already there" \
	"$py" -c 'import json, sys
s = json.load(open(sys.argv[1]))
a = {(x["kind"], x["state"]): x["count"] for x in s["actions_today"]}
assert ("check", "sent") not in a, a
assert a.get(("check", "skipped")) == int(sys.argv[2]) > 0, a' \
	"$tmp/again.json" "$there"
pt st-again rate.conf status >"$tmp/again.txt"
check "the text says already-there" grep -Eq '^  check +already-there +[1-9]' "$tmp/again.txt"

# ---- status: current errors only -------------------------------------
# Every series fetch is refused: the work fails with the token error.
fresh st-old
control "{\"clear\": true, \"canned_next\": 1000, \"match\": \"/series/\", \"method\": \"GET\", \"canned\": $denied}"
pt st-old config run --once >/dev/null 2>"$tmp/old1.err"
rc=$?; check "refused series fetches exit 1" [ $rc = 1 ]
pt st-old config status --json >"$tmp/old1.json"
nerr=$("$py" -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(sum("refused the token" in e["error"] for e in s["work_errors"]))' "$tmp/old1.json")
check "status lists the token errors ($nerr)" [ "$nerr" -gt 0 ]
# the token fixed; a new series arrives and is worked: the old errors,
# older than that success, are no longer listed, only counted
control '{"clear": true}'
fix=$(grep -l '^List-Id: <netdev' "$tmp"/series/mail/*.eml | xargs grep -l 'Subject: .*fix' | head -1)
key=$(sed -n 's/^Message-ID: <\([^.]*\)\..*/\1/p' "$fix")
for f in "$tmp"/series/mail/*.eml; do
	grep -q "^Message-ID: <$key\." "$f" || continue
	sed "s/@example\.\(com\|org\|net\)>/@new.example.\1>/g" "$f" >"$tmp/new-$(basename "$f")"
	import_mail "$tmp/new-$(basename "$f")"
done
sleep 1 # the new work finishes in a later second than the old errors
pt st-old config run --once >/dev/null 2>"$tmp/old2.err"
check "the new series is worked" \
	[ "$(sql st-old "SELECT count(*) FROM work_queue WHERE kind = 'pw-series' AND state = 'done'")" -ge 1 ]
pt st-old config status --json >"$tmp/old2.json"
check "status lists no old error, and counts them" "$py" -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert not [e for e in s["work_errors"] if "refused the token" in e["error"]], s["work_errors"]
o = {x["of"]: x["count"] for x in s["older_errors"]}
assert o["work"] >= int(sys.argv[2]), o' "$tmp/old2.json" "$nerr"
expect_out '^older errors \(not listed: the same source worked since\): [1-9][0-9]* work items' pt st-old config status

no_token() { ! grep -q 0123456789abcdef0123456789abcdef01234567 "$@"; }
check "no token in any log or status" no_token "$tmp"/*.err "$tmp"/*.txt \
	"$tmp"/*.json
finish
