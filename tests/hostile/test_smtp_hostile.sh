#!/bin/bash
# test_smtp_hostile.sh - `patchtriage run --once` against a misbehaving
# SMTP server (smtp_hostile.py): no greeting, 421 greeting, refusals
# (4yz and 5yz) at EHLO, MAIL FROM, RCPT TO (one recipient, all) and
# DATA, 4yz / 5yz after the final dot, the connection dropped after the
# dot, answers dripped a few bytes at a time, the connection the pass
# keeps for its replies closed at the next MAIL FROM.  Each case runs on a
# pristine copy of one trained state against the Patchwork stand-in and
# asserts: bounded time and peak RSS, the exit status, an error naming
# the SMTP URL and the problem, the outbox rows in the matching state;
# then, the fault cleared and the work queue's backoff passed, every
# reply of the healthy baseline arrives exactly once, except those the
# server refused for good (5yz after the dot) or that may have gone
# (dropped after the dot): those stay 'failed' and are never resent.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
. "$PT_SOURCE_DIR/tests/hostile/mailenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d /tmp/pt-hsmtp.XXXXXX)
cleanup() {
	smtp_hostile_stop
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
t_start=$(date +%s)

hostile_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 >/dev/null || { echo "FAIL: series" >&2; exit 1; }
be_start_standin "$tmp" || { echo "FAIL: stand-in" >&2; exit 1; }
smtp_hostile_start "$tmp/hs" || { echo "FAIL: smtp_hostile" >&2; exit 1; }
# Patchwork only (no IMAP), replies only, plain SMTP on the hostile port;
# a low risk threshold so that a dozen series give about ten replies
SMTP_PORT=$HSMTP_PORT SMTP_CA=/dev/null be_write_config "$tmp" imap
sed -i 's|ca-file = /dev/null|starttls = false\n\ttimeout = 5|
	s|actions = check reply|actions = reply|
	s|risk-threshold = 0.30|risk-threshold = 0.02|' "$tmp/config"
url="smtp://127.0.0.1:$HSMTP_PORT"
limit=$(rss_limit)
sql() { sqlite3 "$tmp/st/state.db" "$1"; }
arrived() { # -> "message-id count" per arrived mail
	"$py" -c 'import collections, email, glob, sys
c = collections.Counter(email.message_from_binary_file(open(f, "rb"))["Message-ID"]
                        for f in glob.glob(sys.argv[1] + "/new/*"))
for k, n in sorted(c.items()):
    print(k, n)' "$HSMTP_DIR"
}
fresh() {
	rm -rf "$tmp/st" "$HSMTP_DIR"/new/* "$HSMTP_DIR"/envelope/*
	cp -a "$tmp/t/state" "$tmp/st"
}
pt() { bounded 60 "$tmp/out" "$tmp/err" "$PT_BIN" --state "$tmp/st" \
	--config "$tmp/config" run --once; }

# ---- the healthy baseline: the replies a pass sends -----------------
smtp_hostile_fault none
fresh
conns=$(grep -c ' CONNECT$' "$HSMTP_DIR/log" 2>/dev/null)
pt
conns=$(($(grep -c ' CONNECT$' "$HSMTP_DIR/log") - ${conns:-0}))
check "baseline pass exits 0 ($(tail -1 "$tmp/err"))" [ $B_RC = 0 ]
arrived >"$tmp/want"
nwant=$(wc -l <"$tmp/want")
check "baseline sends replies ($nwant)" [ "$nwant" -ge 3 ]
check "baseline sends each once" [ -z "$(awk '$2 != 1' "$tmp/want")" ]
check "baseline: the pass's $nwant replies on one connection ($conns)" \
	[ "$conns" = 1 ]
awk '{print $1}' "$tmp/want" >"$tmp/want.ids"

# case FAULT RC ERROR-REGEX STATE: STATE is what the reply rows are in
# after the faulty pass (intended: retried later; failed: never again;
# sent: delivered in spite of the fault)
case_smtp() {
	local f=$1 rc=$2 re=$3 state=$4 t_case bad got lost dup
	t_case=$(date +%s)
	smtp_hostile_fault "$f"
	fresh
	pt
	local secs=$B_SECS rss=$B_RSS err
	err=$(grep -m1 -o "smtp '$url'.*" "$tmp/err" | cut -c1-200)
	check "$f: exit $rc (got $B_RC)" [ "$B_RC" = "$rc" ]
	check "$f: within 60 s (${B_SECS}s)" [ "$B_RC" != 124 ]
	check "$f: peak RSS ${B_RSS} KiB <= $limit" [ "$B_RSS" -le "$limit" ]
	if [ "$state" != sent ]; then
		check "$f: stderr names $url and the problem" \
			grep -Eq "smtp '$url': .*$re" "$tmp/err"
	else
		check "$f: stderr names the problem" grep -Eq "$re" "$tmp/err"
	fi
	bad=$(sql "SELECT count(*) FROM outbox WHERE kind LIKE 'reply-%' AND state != '$state'")
	check "$f: every reply row is '$state' ($bad are not)" [ "$bad" = 0 ]
	check "$f: some reply rows exist" \
		[ "$(sql "SELECT count(*) FROM outbox WHERE kind LIKE 'reply-%'")" -ge 1 ]
	if [ "$state" != sent ]; then
		check "$f: each row keeps the error naming $url" \
			[ "$(sql "SELECT count(*) FROM outbox WHERE kind LIKE 'reply-%' AND last_error NOT LIKE 'smtp ''$url'':%'")" = 0 ]
	fi
	sql "SELECT remote_ref FROM outbox WHERE state = 'failed'" >/dev/null
	sql "SELECT dedupe_key FROM outbox WHERE kind LIKE 'reply-%' AND state = 'failed'" |
		sed 's/.*/<&>/' | sort >"$tmp/failed.ids"
	# the fault cleared, the queue's backoff over: twice, to see no resend
	smtp_hostile_fault none
	sql "UPDATE work_queue SET not_before = 0" >/dev/null
	pt
	check "$f: the pass after the fault exits 0 ($(tail -1 "$tmp/err"))" [ "$B_RC" = 0 ]
	sql "UPDATE work_queue SET not_before = 0" >/dev/null
	pt
	arrived >"$tmp/got"
	dup=$(awk '$2 != 1 {print $1}' "$tmp/got" | tr '\n' ' ')
	check "$f: no reply arrived twice ($dup)" [ -z "$dup" ]
	lost=$(awk '{print $1}' "$tmp/got" | sort | comm -23 "$tmp/want.ids" - |
		comm -23 - "$tmp/failed.ids" | tr '\n' ' ')
	check "$f: no reply lost ($lost)" [ -z "$lost" ]
	got=$(awk '{print $1}' "$tmp/got" | sort | comm -12 - "$tmp/failed.ids" | tr '\n' ' ')
	check "$f: no reply failed for good was resent ($got)" [ -z "$got" ]
	check "$f: nothing left intended or sending" \
		[ "$(sql "SELECT count(*) FROM outbox WHERE state IN ('intended', 'sending')")" = 0 ]
	echo "case $f: exit $rc in ${secs}s (case ${B_SECS}s+$(($(date +%s) - t_case))s), peak RSS ${rss} KiB, $(wc -l <"$tmp/failed.ids") failed for good: $err"
}

case_smtp greet421 1 '421' intended
case_smtp ehlo4 1 '.' intended
case_smtp ehlo5 1 '550' intended
case_smtp mail4 1 'MAIL failed: 451' intended
case_smtp mail5 1 'MAIL failed: 550' intended
case_smtp rcpt4-one 0 "recipients refused: 'fran@example.com' \(450" sent
case_smtp rcpt5-one 0 "recipients refused: 'fran@example.com' \(550" sent
case_smtp rcpt4-all 1 'RCPT failed: 450' intended
case_smtp rcpt5-all 1 'RCPT failed: 550' intended
case_smtp data4 1 'DATA failed: 451' intended
case_smtp data5 1 'DATA failed: 554' intended
case_smtp dot4 1 'answered 451 to the end of the message \(not accepted, to be tried again\)' intended
case_smtp dot5 1 'answered 554 to the end of the message \(refused for good, not tried again\)' failed
case_smtp dotdrop 1 'may have been sent' failed
case_smtp drip 0 'replies: [1-9][0-9]* sent' sent
# a connection a reply: each cut at the next one's MAIL FROM, tried anew
case_smtp maildrop 0 'replies: [1-9][0-9]* sent' sent
sed -i 's|timeout = 5|timeout = 1|' "$tmp/config"
case_smtp silent 1 'timed out' intended
echo "test_smtp_hostile: $(($(date +%s) - t_start)) s"
finish
