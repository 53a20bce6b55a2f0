#!/bin/bash
# test_run.sh - `patchtriage run` end to end against the Patchwork
# stand-in, a real Dovecot and a real SMTP server (tests/lib/botenv.sh):
# --dry-run sends nothing and moves no state; --once scores every series,
# sets one risk check per opted-in patch and none elsewhere, sends one
# reply per series and kind with the right threading; a second pass does
# nothing; list review re-scores without a second reply; the daemon picks
# up a new series, refuses a second instance, reloads on SIGHUP and
# drains on SIGTERM; status reports it all; bad configurations are named;
# a --once pass whose every reply fails TLS exits 1, and sends them later;
# a fresh state on old mail reads and sends nothing (first start), and
# with run.since reaching back the age guard holds.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-run.XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" || { echo "FAIL: servers" >&2; exit 1; }
cp -r "$tmp/t/state" "$tmp/st"
pt() { "$bin" --state "$tmp/st" --config "$tmp/config" "$@"; }
sql() { sqlite3 "$tmp/st/state.db" "$1"; }
dump() { "$py" "$PT_SOURCE_DIR/tests/lib/pwdump.py" "http://127.0.0.1:$PW_PORT"; }
sent() { find "$SMTP_MAILDIR/new" -type f | wc -l; }

# Facts of the stand-in's Patchwork: checks per patch and context.
summarise() { # JSON -> lines "project patch context state"
	"$py" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["patches"]:
    if not p["checks"]:
        print(p["project"], p["id"], "-", "-")
    for c in p["checks"]:
        print(p["project"], p["id"], c["context"], c["state"])' "$1"
}

# ---- dry run: printed, nothing sent, no state moved ------------------
TMPDIR=$tmp pt run --once --dry-run >"$tmp/dry.out" 2>"$tmp/dry.err"
rc=$?; check "dry run exits 0 ($(tail -3 "$tmp/dry.err"))" [ $rc = 0 ]
check "dry run prints checks" grep -q '^would set check: netdev patch' "$tmp/dry.out"
check "dry run prints a reply" grep -q '^would send reply:' "$tmp/dry.out"
check "dry run reply is threaded" grep -q '^In-Reply-To: <' "$tmp/dry.out"
check "dry run sends no mail" [ "$(sent)" = 0 ]
dump >"$tmp/pw0.json"
check "dry run posts no check" [ "$(grep -c '"context"' "$tmp/pw0.json")" = 0 ]
check "dry run moves no event position" [ "$(sql 'SELECT count(*) FROM pw_positions')" = 0 ]
check "dry run moves no folder" [ "$(sql 'SELECT count(*) FROM imap_folders')" = 0 ]
check "dry run leaves the outbox empty" [ "$(sql 'SELECT count(*) FROM outbox')" = 0 ]
check "dry run leaves no copy behind" [ -z "$(ls "$tmp" | grep patchtriage-dry-run)" ]

# ---- one real pass ---------------------------------------------------
pt run --once >"$tmp/run1.out" 2>"$tmp/run1.err"
rc=$?; check "run --once exits 0 ($(tail -3 "$tmp/run1.err"))" [ $rc = 0 ]
dump >"$tmp/pw1.json"
summarise "$tmp/pw1.json" >"$tmp/checks1"
n_opted=$(awk '$1 != "linux-ext9"' "$tmp/checks1" | awk '{print $2}' | sort -u | wc -l)
n_risk=$(awk '$1 != "linux-ext9" && $3 == "patchtriage-risk"' "$tmp/checks1" | wc -l)
check "every opted-in patch has one risk check ($n_risk of $n_opted)" \
	[ "$n_risk" = "$n_opted" -a "$n_opted" -gt 0 ]
check "no patch has two checks of one context and state" \
	[ -z "$(awk '$3 != "-" {print $2, $3, $4}' "$tmp/checks1" | sort | uniq -d)" ]
check "a subsystem that did not opt in gets no check" \
	[ -z "$(awk '$1 == "linux-ext9" && $3 != "-"' "$tmp/checks1")" ]
check "ext9 patches are in Patchwork at all" grep -q '^linux-ext9 ' "$tmp/checks1"
check "stable check only on untagged patches" "$py" -c 'import json, sys, glob, email
mails = {}
for f in glob.glob(sys.argv[2] + "/*.eml"):
    m = email.message_from_file(open(f))
    mails[m["Message-ID"].strip("<>")] = m.get_payload()
bad = [p["id"] for p in json.load(open(sys.argv[1]))["patches"]
       for c in p["checks"] if c["context"] == "patchtriage-stable" and
       ("Fixes:" in mails[p["msgid"]] or "stable@" in mails[p["msgid"]])]
sys.exit(1 if bad else 0)' "$tmp/pw1.json" "$tmp/series/mail"
check "an untagged fix gets the stable check, suggesting the tags" \
	grep -q 'consider Cc: stable and Fixes' "$tmp/pw1.json"
n1=$(sent)
check "replies were sent" [ "$n1" -gt 0 ]

# each reply: threaded under a patch of an opted-in list, one per
# (series, kind), marked automatic, with the derived Message-ID
check "replies are threaded and unique per series and kind" "$py" -c '
import email, glob, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
seen = set()
for f in glob.glob(sys.argv[1] + "/new/*"):
    m = email.message_from_file(open(f))
    irt = m["In-Reply-To"].strip("<>")
    kind = m["Message-ID"].split("-")[1]
    row = db.execute("SELECT series_id, list_id FROM patches p JOIN series s"
                     " ON s.id = p.series_id WHERE message_id = ?",
                     (irt,)).fetchone()
    assert row, "reply to an unknown patch " + irt
    assert row[1] != "linux-ext9.vger.kernel.org", "reply on ext9"
    assert (row[0], kind) not in seen, "second reply %r" % ((row[0], kind),)
    seen.add((row[0], kind))
    assert m["Auto-Submitted"] == "auto-generated"
    assert m["X-Patchwork-Hint"] == "ignore"
    assert ("<%s>" % irt) in m["References"]
    assert m["Subject"].startswith("Re: ")
' "$SMTP_MAILDIR" "$tmp/st/state.db"

# ---- a second pass does nothing new ---------------------------------
pt run --once >/dev/null 2>"$tmp/run2.err"
check "second pass exits 0" [ $? = 0 ]
dump >"$tmp/pw2.json"
check "second pass posts no check" [ "$(summarise "$tmp/pw2.json" | sort | md5sum)" = "$(sort "$tmp/checks1" | md5sum)" ]
check "second pass sends no reply" [ "$(sent)" = "$n1" ]
check "second pass summary" grep -q 'checks: 0 posted' "$tmp/run2.err"

# ---- list review arrives: re-scored, no second reply ----------------
target=$(sql "SELECT p.message_id FROM patches p JOIN series s ON s.id = p.series_id WHERE s.list_id = 'netdev.vger.kernel.org' ORDER BY p.id LIMIT 1")
cat >"$tmp/review.eml" <<EOF
From: Jan Kara <jack@suse.cz>
To: netdev@vger.kernel.org
Subject: Re: review
Date: $(date -R)
Message-ID: <review-1@suse.cz>
In-Reply-To: <$target>
References: <$target>
List-Id: <netdev.vger.kernel.org>

> +	if (!skb)

Looks good, tested on my machine.

Reviewed-by: Jan Kara <jack@suse.cz>
EOF
mail_deliver "$tmp/review.eml" netdev
"$py" -c 'import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__control__", method="POST",
    data=json.dumps({"import": open(sys.argv[2]).read()}).encode(),
    headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=10).read()' "http://127.0.0.1:$PW_PORT" "$tmp/review.eml"
pt run --once >/dev/null 2>"$tmp/run3.err"
check "review pass exits 0" [ $? = 0 ]
check "the review is stored" [ "$(sql "SELECT count(*) FROM mail_reviews WHERE email = 'jack@suse.cz'")" -ge 1 ]
check "the series is re-scored" grep -Eq 'run: [0-9]+ events, [0-9]+ mails, [1-9][0-9]* series scored' "$tmp/run3.err"
check "no second reply after review" [ "$(sent)" = "$n1" ]
dump >"$tmp/pw3.json"
# a changed estimate is a new check (Patchwork shows the newest of a
# context); the same state and description is never posted twice
check "no check posted twice after review" "$py" -c 'import json, sys
seen = set()
for p in json.load(open(sys.argv[1]))["patches"]:
    for c in p["checks"]:
        k = (p["id"], c["context"], c["state"], c["description"])
        assert k not in seen, k
        seen.add(k)' "$tmp/pw3.json"

# ---- status ----------------------------------------------------------
pt status --json >"$tmp/status.json"
check "status --json" "$py" -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert not s["daemon"]["running"]
assert {p["project"] for p in s["patchwork"]} == {"netdev", "linux-pwm"}
assert {f["folder"] for f in s["imap"]} == {"netdev", "linux-pwm", "linux-ext9"}
kinds = {(a["kind"], a["state"]) for a in s["actions_today"]}
assert ("check", "sent") in kinds, kinds
assert s["last_pass"]' "$tmp/status.json"
expect_out '^queue:' pt status

# ---- the daemon: a new series, the lock, SIGHUP, SIGTERM -------------
"$bin" --state "$tmp/st" --config "$tmp/config" run \
	>"$tmp/daemon.out" 2>"$tmp/daemon.err" &
daemon=$!
for ((i = 0; i < 100; i++)); do
	grep -q 'running: state' "$tmp/daemon.err" && break
	sleep 0.1
done
expect_err 'another patchtriage \(pid [0-9]+\) is running' pt run --once
# a new series: the first netdev fix series under new Message-IDs
fix=$(grep -l '^List-Id: <netdev' "$tmp"/series/mail/*.eml | xargs grep -l 'Subject: .*fix' | head -1)
key=$(sed -n 's/^Message-ID: <\([^.]*\)\..*/\1/p' "$fix")
for f in "$tmp"/series/mail/*.eml; do
	grep -q "^Message-ID: <$key\." "$f" || continue
	sed "s/@example\.\(com\|org\|net\)>/@new.example.\1>/g" "$f" >"$tmp/new-$(basename "$f")"
	mail_deliver "$tmp/new-$(basename "$f")" netdev
done
t0=$(date +%s)
for ((i = 0; i < 300; i++)); do
	[ "$(sent)" -gt "$n1" ] && break
	sleep 0.1
done
check "the daemon replied to the new series ($(sent) > $n1)" [ "$(sent)" -gt "$n1" ]
check "within 30 s" [ $(($(date +%s) - t0)) -le 30 ]
kill -HUP "$daemon"
for ((i = 0; i < 50; i++)); do
	grep -q 'reloaded' "$tmp/daemon.err" && break
	sleep 0.1
done
check "SIGHUP reloads" grep -q "configuration '.*' reloaded" "$tmp/daemon.err"
kill -TERM "$daemon"
for ((i = 0; i < 100; i++)); do
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
done
gone() { ! kill -0 "$1" 2>/dev/null; }
check "SIGTERM stops the daemon within 10 s" gone "$daemon"
wait "$daemon"
check "and it exits 0" [ $? = 0 ]
daemon=

# ---- bad configurations ----------------------------------------------
printf '[reply]\n\tfrom = x <x@example.org>\n' >"$tmp/empty.conf"
expect_err "neither patchwork.url nor imap.url" \
	"$bin" --state "$tmp/st" --config "$tmp/empty.conf" run --once
expect_exit 1 "$bin" --state "$tmp/st" --config "$tmp/empty.conf" run --once
printf '[run]\n\tpoll-interval = 0\n[patchwork]\n\turl = http://127.0.0.1:1\n\tproject = x\n' >"$tmp/bad.conf"
expect_err "run.poll-interval" "$bin" --state "$tmp/st" --config "$tmp/bad.conf" run --once
expect_exit 2 pt run --bogus

# ---- every reply fails its certificate check: --once says so --------
# A fresh state on the same servers, its SMTP CA one the server's
# certificate was not signed by: every reply is refused by TLS before a
# byte of it leaves.  The pass must not exit 0, the queue must name the
# SMTP error (not "rate limited"), and with the right CA the replies left
# intended go out.
cp -r "$tmp/t/state" "$tmp/st-ca"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other \
	-keyout "$tmp/other.key" -out "$tmp/other.pem" >/dev/null 2>&1
sed "s|ca-file = $SMTP_CA|ca-file = $tmp/other.pem|" "$tmp/config" >"$tmp/badca.conf"
ca_sql() { sqlite3 "$tmp/st-ca/state.db" "$1"; }
n2=$(sent)
"$bin" --state "$tmp/st-ca" --config "$tmp/badca.conf" run --once \
	>/dev/null 2>"$tmp/badca.err"
rc=$?; check "a pass in which every reply failed exits 1 ($(tail -2 "$tmp/badca.err"))" [ $rc = 1 ]
check "it says no reply went out and why" \
	grep -q "no reply went out: all [1-9][0-9]* attempts failed, the last with: smtp '" "$tmp/badca.err"
check "the summary counts the failed replies" \
	grep -Eq 'failures: [0-9]+ checks, [1-9][0-9]* replies' "$tmp/badca.err"
check "nothing was sent" [ "$(sent)" = "$n2" ]
check "the queue names the SMTP error" \
	[ "$(ca_sql "SELECT count(*) FROM work_queue WHERE last_error LIKE 'smtp ''%'")" -ge 1 ]
check "and no item says rate limited" \
	[ "$(ca_sql "SELECT count(*) FROM work_queue WHERE last_error = 'rate limited'")" = 0 ]
nint=$(ca_sql "SELECT count(*) FROM outbox WHERE kind LIKE 'reply-%' AND state = 'intended'")
check "the replies stay intended ($nint)" [ "$nint" -ge 1 ]
"$bin" --state "$tmp/st-ca" --config "$tmp/config" run --once \
	>/dev/null 2>"$tmp/goodca.err"
rc=$?; check "with the right CA the pass exits 0 ($(tail -2 "$tmp/goodca.err"))" [ $rc = 0 ]
check "each reply left intended is sent once" [ "$(sent)" = $((n2 + nint)) ]
check "none is left intended" \
	[ "$(ca_sql "SELECT count(*) FROM outbox WHERE kind LIKE 'reply-%' AND state = 'intended'")" = 0 ]
# ---- old mail gets nothing: first start and the age guard ------------
# The series are dated years ago.  Without the test's wide settings
# (run.since, reply.max-age, check.max-age) a fresh state must send
# nothing: the first start takes no Patchwork backlog and no mail the
# IMAP folders held before it (test_run_first.sh has the details); with
# run.since reaching back, the mail is threaded but too old for a reply
# or a check.
nchecks() { dump | grep -c '"context"'; }
grep -Ev '^[[:space:]]*(since|max-age) = ' "$tmp/config" >"$tmp/age.conf"
n3=$(sent)
c3=$(nchecks)
cp -r "$tmp/t/state" "$tmp/st-new"
"$bin" --state "$tmp/st-new" --config "$tmp/age.conf" run --once \
	>/dev/null 2>"$tmp/new.err"
rc=$?; check "a first start on old mail exits 0 ($(tail -1 "$tmp/new.err"))" [ $rc = 0 ]
check "it takes no Patchwork or IMAP backlog" grep -q '^run: 0 events, 0 mails' "$tmp/new.err"
check "it sends no reply" [ "$(sent)" = "$n3" ]
check "it sets no check" [ "$(nchecks)" = "$c3" ]
# the position reaching back (run.since), the ages left at 3 and 14 days
grep -Ev '^[[:space:]]*max-age = ' "$tmp/config" >"$tmp/age2.conf"
cp -r "$tmp/t/state" "$tmp/st-old"
"$bin" --state "$tmp/st-old" --config "$tmp/age2.conf" run --once \
	>/dev/null 2>"$tmp/old.err"
rc=$?; check "a backlog of old patches exits 0 ($(tail -1 "$tmp/old.err"))" [ $rc = 0 ]
check "the events and mails are read" grep -q '^run: [1-9][0-9]* events, [1-9][0-9]* mails' "$tmp/old.err"
check "still no reply" [ "$(sent)" = "$n3" ]
check "still no check" [ "$(nchecks)" = "$c3" ]
"$bin" --state "$tmp/st-old" --config "$tmp/age2.conf" status --json >"$tmp/old.json"
check "status counts the replies left out for age" "$py" -c 'import json, sys
a = json.load(open(sys.argv[1]))["skipped_for_age"]
assert a["replies"] > 0 and a["checks"] > 0, a' "$tmp/old.json"
check "the log says why" grep -q 'older than reply.max-age (3 days): no' "$tmp/old.err"
# the stand-in holds these checks already: a post would be reconciled,
# so the summary, not the count, shows that none was tried
check "no check was even tried" grep -q 'checks: 0 posted, 0 unchanged, 0 already there' "$tmp/old.err"
check "the log names check.max-age" grep -q 'older than check.max-age (14 days): no check' "$tmp/old.err"
"$bin" --state "$tmp/st-old" --config "$tmp/age2.conf" status >"$tmp/old.txt"
check "status says how many were left out" grep -Eq '^skipped for age: [1-9][0-9]* checks' "$tmp/old.txt"

no_token() { ! grep -q 0123456789abcdef0123456789abcdef01234567 "$@"; }
check "no token in any log or state" no_token "$tmp"/*.err "$tmp"/*.out \
	"$tmp/st/state.db"
finish
