#!/bin/bash
# test_run_series.sh - `patchtriage run` on the series the plain
# end-to-end test (test_run.sh) never meets, against the Patchwork
# stand-in, a real Dovecot and a real SMTP server (tests/lib/botenv.sh):
#   - a series that never completes (the list got part of a cross-posted
#     series: the stand-in holds one patch back) gets its checks
#     run.series-wait after its last patch, and no reply; when the rest
#     arrives it is re-scored, with no check posted twice, and replied to;
#   - a series seen only over IMAP (Patchwork has it, the bot reads no
#     event of it) gets its checks, looked up by Message-ID;
#   - a series both paths see, the mail path first, gets one check per
#     patch and context;
#   - a series whose mail comes before Patchwork has it gets its checks
#     on a later lookup.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-series.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

wait_s=20 # run.series-wait: longer than a pass under load
botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" || { echo "FAIL: servers" >&2; exit 1; }
sed -i "s/^\[run\]\$/[run]\n\tseries-wait = $wait_s/" "$tmp/config"
cp -r "$tmp/t/state" "$tmp/st"
pt() { "$bin" --state "$tmp/st" --config "$tmp/config" "$@"; }
sql() { sqlite3 "$tmp/st/state.db" "$1"; }
dump() { "$py" "$PT_SOURCE_DIR/tests/lib/pwdump.py" "http://127.0.0.1:$PW_PORT" >"$1"; }
ctl() { # JSON: POST it to the stand-in's control
	"$py" -c 'import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__control__", method="POST",
    data=sys.argv[2].encode(), headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(req, timeout=10).read().decode())' \
		"http://127.0.0.1:$PW_PORT" "$1"
}
pw_import() { # FILE [EVENTS]: the mail into the stand-in
	ctl "$("$py" -c 'import json, sys
print(json.dumps({"import": open(sys.argv[1]).read(),
                  "events": sys.argv[2] == "true"}))' "$1" "${2:-true}")" >/dev/null
}
msgid() { sed -n 's/^Message-ID: <\(.*\)>$/\1/p' "$1"; }

# A new two-patch series under new Message-IDs (@TAG.example.*): the
# first netdev fix without tags (alone, it gets a reply) as 1/2, the
# first patch of a netdev series as 2/2.
nd=$(grep -l '^List-Id: <netdev' "$tmp"/series/mail/*.eml)
fix=$(grep -l '^Subject: \[PATCH\] .*fix' $nd | head -1)
other=$(grep -l '^Subject: \[PATCH 1/[2-9]\]' $nd | head -1)
copy() { # TAG: prints the series' two mails, $tmp/TAG/[12].eml
	local id1 re="s/@example\.\(com\|org\|net\)>/@$1.example.\1>/g"
	mkdir -p "$tmp/$1"
	sed -e "$re" -e 's/^Subject: \[PATCH\] /Subject: [PATCH 1\/2] /' \
		"$fix" >"$tmp/$1/1.eml"
	id1=$(msgid "$tmp/$1/1.eml")
	sed -e '/^In-Reply-To:/d' -e '/^References:/d' -e "$re" \
		-e 's/^Subject: \[PATCH 1\/[0-9]*\] /Subject: [PATCH 2\/2] /' \
		-e "s/^\(Message-ID: .*\)\$/\1\nIn-Reply-To: <$id1>\nReferences: <$id1>/" \
		"$other" >"$tmp/$1/2.eml"
	echo "$tmp/$1/1.eml"
	echo "$tmp/$1/2.eml"
}
# Facts of one copy in a dump: lines "msgid context state description"
checks_of() { # DUMP TAG
	"$py" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["patches"]:
    if "@" + sys.argv[2] + ".example." not in p["msgid"]:
        continue
    if not p["checks"]:
        print(p["msgid"], "-", "-", "-")
    for c in p["checks"]:
        print(p["msgid"], c["context"], c["state"], json.dumps(c["description"]))' "$1" "$2"
}
# The copy's patches (not its cover) with no risk check
unchecked() { # DUMP TAG
	local f c
	c=$(checks_of "$1" "$2")
	for f in "$tmp/$2"/[12].eml; do
		grep -q "^$(msgid "$f") patchtriage-risk " <<<"$c" ||
			msgid "$f"
	done
}
# One check per patch and context in the copy
one_per_context() { # DUMP TAG
	[ -z "$(checks_of "$1" "$2" | awk '$2 != "-" {print $1, $2}' | sort | uniq -d)" ]
}
no_repeat() { # DUMP TAG: no (patch, context, state, description) twice
	[ -z "$(checks_of "$1" "$2" | sort | uniq -d)" ]
}
replies_to() { # TAG: replies sent in reply to the copy's mails
	grep -l "^In-Reply-To: <[^>]*@$1\.example\." "$SMTP_MAILDIR"/new/* 2>/dev/null | wc -l
}

# ---- the loaded mail: both paths, one check per patch and context ----
pt run --once >/dev/null 2>"$tmp/run0.err"
rc=$?; check "first pass exits 0 ($(tail -2 "$tmp/run0.err"))" [ $rc = 0 ]
dump "$tmp/pw0.json"
check "no patch has two checks of one context (both paths read it)" "$py" -c 'import json, sys
seen = set()
for p in json.load(open(sys.argv[1]))["patches"]:
    for c in p["checks"]:
        assert (p["id"], c["context"]) not in seen, (p["id"], c["context"])
        seen.add((p["id"], c["context"]))' "$tmp/pw0.json"
check "every opted-in patch has a risk check" "$py" -c 'import json, sys
bad = [p["id"] for p in json.load(open(sys.argv[1]))["patches"]
       if p["project"] != "linux-ext9" and
       not any(c["context"] == "patchtriage-risk" for c in p["checks"])]
assert not bad, bad' "$tmp/pw0.json"
check "the complete series leave no wait queued" \
	[ "$(sql "SELECT count(*) FROM work_queue WHERE kind = 'pw-wait' AND state = 'pending'")" = 0 ]

# ---- a series that never completes -----------------------------------
copy held >"$tmp/held.list"
last=$(tail -1 "$tmp/held.list")
ctl "$("$py" -c 'import json, re, sys
print(json.dumps({"hold": re.escape(sys.argv[1])}))' "$(msgid "$last")")" >/dev/null
while read -r f; do pw_import "$f"; done <"$tmp/held.list"
t_held=$(date +%s) # the last patch arrived (the stand-in's event date)
check "the stand-in holds one patch back" grep -q '"held": 1' <(ctl '{}')
n_sent=$(find "$SMTP_MAILDIR/new" -type f | wc -l)
pt run --once >/dev/null 2>"$tmp/runA1.err"
check "a pass on the incomplete series exits 0" [ $? = 0 ]
dump "$tmp/pwA1.json"
check "within the wait its patches have no check" \
	[ -z "$(checks_of "$tmp/pwA1.json" held | awk '$2 != "-"')" ]
check "their waits are queued" \
	[ "$(sql "SELECT count(*) FROM work_queue WHERE kind = 'pw-wait' AND state = 'pending'")" -ge 1 ]
s=$((t_held + wait_s + 1 - $(date +%s)))
[ "$s" -gt 0 ] && sleep "$s"
pt run --once >/dev/null 2>"$tmp/runA2.err"
check "the pass after the wait exits 0 ($(tail -2 "$tmp/runA2.err"))" [ $? = 0 ]
dump "$tmp/pwA2.json"
check "after the wait each patch present has its check ($(unchecked "$tmp/pwA2.json" held | wc -l) missing)" \
	[ "$(unchecked "$tmp/pwA2.json" held)" = "$(msgid "$last")" ]
check "the log says why" grep -q "is not complete ${wait_s}s after its last patch" "$tmp/runA2.err"
check "no reply to an incomplete series" [ "$(replies_to held)" = 0 ]
check "no wait is left queued" \
	[ "$(sql "SELECT count(*) FROM work_queue WHERE kind = 'pw-wait' AND state = 'pending'")" = 0 ]
pt run --once >/dev/null 2>"$tmp/runA3.err"
dump "$tmp/pwA3.json"
check "a pass more posts nothing" [ "$(checks_of "$tmp/pwA2.json" held)" = "$(checks_of "$tmp/pwA3.json" held)" ]
ctl '{"release": true}' >/dev/null
pt run --once >/dev/null 2>"$tmp/runA4.err"
check "the pass after the rest arrived exits 0 ($(tail -2 "$tmp/runA4.err"))" [ $? = 0 ]
dump "$tmp/pwA4.json"
check "the completed series is re-scored: every patch has its check" \
	[ -z "$(unchecked "$tmp/pwA4.json" held)" ]
check "no check is posted twice" no_repeat "$tmp/pwA4.json" held
check "the completed series gets its reply" [ "$(replies_to held)" -ge 1 ]
check "and nothing else was sent meanwhile" \
	[ "$(find "$SMTP_MAILDIR/new" -type f | wc -l)" = $((n_sent + $(replies_to held))) ]

# ---- a series seen only over IMAP -------------------------------------
for f in $(copy imap); do
	mail_deliver "$f" netdev
	pw_import "$f" false # Patchwork has it; the bot reads no event of it
done
pt run --once >/dev/null 2>"$tmp/runB.err"
check "the IMAP-only pass exits 0 ($(tail -2 "$tmp/runB.err"))" [ $? = 0 ]
check "Patchwork has no patch-created event of it" "$py" -c 'import json, sys, urllib.request
u = sys.argv[1] + "/api/events/?project=netdev&per_page=250&category=patch-created"
assert "@imap.example." not in urllib.request.urlopen(u).read().decode()' \
	"http://127.0.0.1:$PW_PORT"
dump "$tmp/pwB.json"
check "each of its patches has its check in Patchwork ($(unchecked "$tmp/pwB.json" imap | wc -l) missing)" \
	[ -z "$(unchecked "$tmp/pwB.json" imap)" ]
check "one per context" one_per_context "$tmp/pwB.json" imap
check "and the series its reply" [ "$(replies_to imap)" -ge 1 ]

# ---- both paths, the mail path first ----------------------------------
for f in $(copy both); do
	mail_deliver "$f" netdev
	pw_import "$f"
done
ctl '{"fail_next": 1000, "fail_status": 503, "match": "/events/"}' >/dev/null
pt run --once >/dev/null 2>"$tmp/runC1.err" # its poll fails: mail only
ctl '{"clear": true}' >/dev/null
dump "$tmp/pwC1.json"
check "the mail path set the checks" [ -z "$(unchecked "$tmp/pwC1.json" both)" ]
pt run --once >/dev/null 2>"$tmp/runC2.err"
check "the Patchwork pass exits 0 ($(tail -2 "$tmp/runC2.err"))" [ $? = 0 ]
check "it read the series' events" grep -Eq '^run: [1-9][0-9]* events' "$tmp/runC2.err"
dump "$tmp/pwC2.json"
check "one check per patch and context" one_per_context "$tmp/pwC2.json" both
check "the Patchwork path posted none again" \
	[ "$(checks_of "$tmp/pwC1.json" both)" = "$(checks_of "$tmp/pwC2.json" both)" ]

# ---- the mail before Patchwork has it ---------------------------------
copy late >"$tmp/late.list"
while read -r f; do mail_deliver "$f" netdev; done <"$tmp/late.list"
pt run --once >/dev/null 2>"$tmp/runD1.err"
check "a pass before Patchwork has it exits 0" [ $? = 0 ]
check "its lookup is queued again" \
	[ "$(sql "SELECT count(*) FROM work_queue WHERE kind = 'mail-checks' AND state = 'pending'")" = 1 ]
while read -r f; do pw_import "$f" false; done <"$tmp/late.list"
sleep $((wait_s / 4 + 1))
pt run --once >/dev/null 2>"$tmp/runD2.err"
check "the later pass exits 0 ($(tail -2 "$tmp/runD2.err"))" [ $? = 0 ]
dump "$tmp/pwD.json"
check "the later lookup set its checks ($(unchecked "$tmp/pwD.json" late | wc -l) missing)" \
	[ -z "$(unchecked "$tmp/pwD.json" late)" ]
check "one per context" one_per_context "$tmp/pwD.json" late
check "no lookup is left queued" \
	[ "$(sql "SELECT count(*) FROM work_queue WHERE kind = 'mail-checks' AND state = 'pending'")" = 0 ]
finish
