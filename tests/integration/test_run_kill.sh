#!/bin/bash
# test_run_kill.sh - crash safety of `patchtriage run`: 200 series through
# the Patchwork stand-in, the daemon killed with SIGKILL at random moments
# (PT_KILLS times, default 50), then let finish.  The oracle is a --dry-run
# over the same data in a copy of the state: at the end Patchwork must
# hold exactly the checks it listed, one per (patch, context, state), the
# SMTP sink exactly its replies, one per (series, kind) - minus only the
# replies whose outbox row says a kill came between 'sending' and the
# hand-over, which by design are never sent twice - and the queue must be
# empty.  A second phase reads the same series over IMAP only and kills
# the bot PT_MAIL_KILLS times (default 20): every mail is threaded once
# and no series gets two replies of a kind.  The seed is printed.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
kills=${PT_KILLS:-50}
mail_kills=${PT_MAIL_KILLS:-20}
seed=${PT_SEED:-$(date +%s)}
RANDOM=$seed
echo "seed $seed, $kills kills, $mail_kills mail kills"
tmp=$(mktemp -d /tmp/pt-kill.XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
sql() { sqlite3 "$tmp/st/state.db" "$1"; }

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 200 || { echo "FAIL: series" >&2; exit 1; }

# Kill the daemon N times at random moments (20 ms to 1.5 s after start).
kill_loop() { # N CONFIG LOG
	local i ms
	for ((i = 1; i <= $1; i++)); do
		"$bin" --state "$tmp/st" --config "$2" run >>"$3" 2>&1 &
		daemon=$!
		ms=$((20 + RANDOM % 1480))
		sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
		kill -9 "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
		daemon=
	done
}

# ---- phase 1: Patchwork and SMTP -------------------------------------
botenv_start "$tmp" imap || { echo "FAIL: servers" >&2; exit 1; }
cp -r "$tmp/t/state" "$tmp/st"
"$bin" --state "$tmp/st" --config "$tmp/config" run --once --dry-run \
	>"$tmp/oracle.out" 2>"$tmp/oracle.err" ||
	{ cat "$tmp/oracle.err" >&2; exit 1; }
kill_loop "$kills" "$tmp/config" "$tmp/kill.log"
"$bin" --state "$tmp/st" --config "$tmp/config" run --once \
	>>"$tmp/kill.log" 2>&1
check "the last pass exits 0" [ $? = 0 ]
"$bin" --state "$tmp/st" --config "$tmp/config" run --once \
	>>"$tmp/kill.log" 2>&1
"$py" "$PT_SOURCE_DIR/tests/lib/pwdump.py" "http://127.0.0.1:$PW_PORT" \
	>"$tmp/pw.json"

check "checks: exactly the oracle's, one per (patch, context, state)" \
	"$py" - "$tmp/oracle.out" "$tmp/pw.json" <<'EOF'
import collections, json, re, sys
want = set()
for line in open(sys.argv[1]):
    m = re.match(r"would set check: (\S+) patch (\d+): (\S+) (\S+):", line)
    if m:
        want.add((int(m.group(2)), m.group(3), m.group(4)))
got = collections.Counter()
for p in json.load(open(sys.argv[2]))["patches"]:
    for c in p["checks"]:
        got[(p["id"], c["context"], c["state"])] += 1
dups = [k for k, n in got.items() if n > 1]
missing = want - set(got)
extra = set(got) - want
print("checks: %d expected, %d on the server, %d duplicated, %d missing, "
      "%d unexpected" % (len(want), len(got), len(dups), len(missing),
                         len(extra)))
sys.exit(1 if dups or missing or extra or not want else 0)
EOF

check "replies: the oracle's, one per (series, kind), lost only while sending" \
	"$py" - "$tmp/oracle.out" "$SMTP_MAILDIR" "$tmp/st/state.db" <<'EOF'
import collections, email, glob, re, sqlite3, sys
want = set(re.findall(r"^Message-ID: <([^>]+)>", open(sys.argv[1]).read(),
                      re.M))
got = collections.Counter()
for f in glob.glob(sys.argv[2] + "/new/*"):
    got[email.message_from_file(open(f))["Message-ID"].strip("<>")] += 1
db = sqlite3.connect(sys.argv[3])
sending = {r[0] for r in db.execute(
    "SELECT dedupe_key FROM outbox WHERE kind LIKE 'reply-%' AND"
    " state = 'sending'")}
dups = [k for k, n in got.items() if n > 1]
missing = want - set(got)
extra = set(got) - want
print("replies: %d expected, %d received, %d duplicated, %d missing "
      "(%d of them left 'sending' by a kill), %d unexpected" %
      (len(want), len(got), len(dups), len(missing),
       len(missing & sending), len(extra)))
sys.exit(1 if dups or extra or (missing - sending) or not want else 0)
EOF
check "the queue is drained" [ "$(sql "SELECT count(*) FROM work_queue WHERE state != 'done'")" = 0 ]
check "no check left unsent" [ "$(sql "SELECT count(*) FROM outbox WHERE kind = 'check' AND state NOT IN ('sent', 'skipped')")" = 0 ]
n_started=$(grep -c 'running: state' "$tmp/kill.log")
echo "phase 1: $kills kills, $n_started starts got as far as running"
botenv_stop

# ---- phase 2: IMAP only ----------------------------------------------
rm -rf "$tmp/st" "$tmp/smtp"
cp -r "$tmp/t/state" "$tmp/st"
botenv_start "$tmp" patchwork || { echo "FAIL: servers" >&2; exit 1; }
cp "$tmp/config" "$tmp/mail.conf"
kill_loop "$mail_kills" "$tmp/mail.conf" "$tmp/mailkill.log"
"$bin" --state "$tmp/st" --config "$tmp/mail.conf" run --once \
	>>"$tmp/mailkill.log" 2>&1
check "the last mail pass exits 0" [ $? = 0 ]
n_mail=$(ls "$tmp/series/mail" | wc -l)
check "every mail threaded once ($(sql 'SELECT count(*) FROM messages') of $n_mail)" \
	[ "$(sql 'SELECT count(*) FROM messages')" = "$n_mail" ]
check "the mail queue is drained" [ "$(sql "SELECT count(*) FROM work_queue WHERE state != 'done'")" = 0 ]
check "mail replies: one per (series, kind)" \
	"$py" - "$SMTP_MAILDIR" "$tmp/st/state.db" <<'EOF'
import collections, email, glob, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
got = collections.Counter()
for f in glob.glob(sys.argv[1] + "/new/*"):
    m = email.message_from_file(open(f))
    irt = m["In-Reply-To"].strip("<>")
    kind = m["Message-ID"].split("-")[1]
    row = db.execute("SELECT series_id FROM patches WHERE message_id = ?",
                     (irt,)).fetchone()
    got[(row[0] if row else irt, kind)] += 1
dups = [k for k, n in got.items() if n > 1]
print("mail replies: %d, %d duplicated" % (sum(got.values()), len(dups)))
sys.exit(1 if dups or not got else 0)
EOF
finish
