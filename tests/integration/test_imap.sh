#!/bin/bash
# test_imap.sh - `patchtriage imap` against a real Dovecot: a series sent
# in pieces and out of order is assembled, v2 links to v1, list review
# updates the patch, IDLE delivers within a second, a Dovecot restart and
# a UIDVALIDITY reset lose and repeat nothing, STARTTLS + AUTHENTICATE
# PLAIN work, an untrusted certificate is refused, oversized mail is
# skipped, and polling works where the server has no IDLE.
set -u
. "$PT_SOURCE_DIR/tests/lib/mailservers.sh"

bin=$PT_BIN
data=$PT_SOURCE_DIR/tests/data/thread
tmp=$(mktemp -d /tmp/pt-imap.XXXXXX)
watch_pid=
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	mailservers_cleanup
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }
check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok; else fail "$what"; fi
}
sql() { sqlite3 "$tmp/state/state.db" "$1"; }
now_ms() { date +%s%3N; }

start_dovecot "$tmp/dovecot" >/dev/null || exit 1
mail_folder linux-pwm

# $1: config file; rest: extra config lines
write_config() {
	local f=$1
	shift
	printf 'secret\n' >"$tmp/pass"
	chmod 600 "$tmp/pass"
	{
		echo '[imap]'
		echo "	url = imaps://127.0.0.1:$DOVECOT_IMAPS_PORT"
		echo '	user = bot'
		echo "	token-file = $tmp/pass"
		echo "	ca-file = $DOVECOT_CA"
		echo '	folder = INBOX'
		echo '	folder = linux-pwm'
		echo '	backoff-max = 1'
		echo '	poll-interval = 1'
		for l in "$@"; do echo "	$l"; done
		echo "[mail]"
		echo "	sentiment-file = $PT_SOURCE_DIR/conf/sentiment.txt"
	} >"$f"
}
write_config "$tmp/config"
pt() { "$bin" --state "$tmp/state" --config "$tmp/config" "$@"; }

# ---- a series in pieces, out of order -------------------------------
mail_deliver "$data/v1-3.eml" linux-pwm
mail_deliver "$data/r1-2.eml" linux-pwm
pt imap fetch >"$tmp/out1" 2>"$tmp/err1" || fail "fetch 1: $(cat "$tmp/err1")"
check "first fetch sees two messages" [ "$(wc -l <"$tmp/out1")" = 2 ]
check "nothing complete yet" [ "$(sql 'SELECT count(*) FROM series WHERE complete')" = 0 ]
mail_deliver "$data/v1-1.eml" linux-pwm
mail_deliver "$data/v1-0.eml" linux-pwm
pt imap fetch >"$tmp/out2" 2>&1 || fail "fetch 2"
check "second fetch sees only the two new" [ "$(wc -l <"$tmp/out2")" = 2 ]
mail_deliver "$data/v1-2.eml" linux-pwm
mail_deliver "$data/r1-0.eml" linux-pwm
mail_deliver "$data/bot1-3.eml" linux-pwm
pt imap fetch >"$tmp/out3" 2>&1 || fail "fetch 3"
check "series assembled from pieces" \
	[ "$(sql "SELECT received || '/' || total || ' ' || complete FROM series")" = "3/3 1" ]
check "early reply attached to its patch" \
	[ "$(sql "SELECT p.message_id FROM replies r JOIN patches p ON p.id = r.patch_id WHERE r.message_id = 'r1-2@example.com'")" = v1-2@example.org ]
check "review trailers from the list" \
	[ "$(sql "SELECT group_concat(kind, ',') FROM (SELECT kind FROM mail_reviews ORDER BY kind)")" = "Acked-by,Tested-by" ]
check "the ack on the cover covers the series" \
	[ "$(sql "SELECT patch_id FROM mail_reviews WHERE kind = 'Acked-by'")" = 0 ]
check "the test robot's report is on patch 3" \
	[ "$(sql "SELECT bot || ' ' || bot_verdict || ' ' || bot_arch FROM replies WHERE bot IS NOT NULL")" = "0day error arm64" ]

# ---- v2 links to v1 -------------------------------------------------
for f in v2-0 v2-1 v2-2 v2-3; do mail_deliver "$data/$f.eml" linux-pwm; done
pt imap fetch >"$tmp/out4" 2>&1 || fail "fetch 4"
check "v2 links to v1" [ "$(sql "SELECT count(*) FROM series_versions v JOIN series s ON s.id = v.series_id JOIN series p ON p.id = v.prev_series_id WHERE s.version = 2 AND p.version = 1")" = 1 ]
check "v2 patches link to v1 patches" [ "$(sql "SELECT count(*) FROM patches WHERE version = 2 AND prev_patch_id IS NOT NULL")" = 3 ]

# ---- IDLE: a new mail within a second; restart survived ---------------
msg() { # MSGID SUBJECT [IRT]
	printf 'From: Jane Dev <jane@example.org>\nTo: linux-pwm@vger.kernel.org\nSubject: %s\nMessage-ID: <%s>\nDate: Tue, 9 Jan 2024 10:00:00 +0000\n' "$2" "$1"
	[ -n "${3:-}" ] && printf 'In-Reply-To: <%s>\nReferences: <%s>\n' "$3" "$3"
	printf '\nReviewed-by: Rev Iewer <rev@example.com>\n'
}
msg idle1@example.org "Re: [PATCH v2 2/3] pwm: foo: add bar support" v2-2@example.org >"$tmp/idle1.eml"
msg idle2@example.org "Re: [PATCH v2 1/3] pwm: foo: drop unused field" v2-1@example.org >"$tmp/idle2.eml"
msg idle3@example.org "Re: [PATCH v2 3/3] dt-bindings: pwm: foo: document bar" v2-3@example.org >"$tmp/idle3.eml"

"$bin" --state "$tmp/state" --config "$tmp/config" imap watch --for 30 \
	>"$tmp/watch" 2>"$tmp/watch.err" &
watch_pid=$!
wait_line() { # FILE PATTERN SECONDS
	local i
	for ((i = 0; i < $3 * 50; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}
sleep 1.5 # connected, synced, idling on the last folder
t0=$(now_ms)
mail_deliver "$tmp/idle1.eml" linux-pwm
if wait_line "$tmp/watch" idle1@example.org 5; then
	t1=$(awk '/idle1@example.org/ {print $1}' "$tmp/watch")
	lat=$((t1 - t0))
	echo "IDLE latency: ${lat} ms"
	check "IDLE delivers within a second (${lat} ms)" [ "$lat" -lt 1000 ]
else
	fail "IDLE: the new mail never arrived"
fi
restart_dovecot >/dev/null || fail "restart"
check "the restart is noticed" wait_line "$tmp/watch.err" reconnecting 10
mail_deliver "$tmp/idle2.eml" linux-pwm
check "mail after a Dovecot restart arrives" wait_line "$tmp/watch" idle2@example.org 10
kill "$watch_pid"
wait "$watch_pid" 2>/dev/null
watch_pid=
check "nothing repeated across the restart" \
	[ "$(grep -c duplicate "$tmp/watch")" = 0 ]
check "each message seen once" \
	[ "$(awk '{print $6}' "$tmp/watch" | sort | uniq -d | wc -l)" = 0 ]
check "review by list updates the v2 patch" \
	[ "$(sql "SELECT count(*) FROM mail_reviews r JOIN patches p ON p.id = r.patch_id WHERE p.message_id = 'v2-2@example.org' AND r.kind = 'Reviewed-by'")" = 1 ]

# ---- UIDVALIDITY reset: resync without reprocessing -------------------
before=$(sql "SELECT count(*) FROM messages")
mail_reset_uidvalidity linux-pwm 4242 || fail "uidvalidity reset"
mail_deliver "$tmp/idle3.eml" linux-pwm
pt imap fetch >"$tmp/out5" 2>"$tmp/err5" || fail "fetch after reset"
check "resync was logged" grep -q "UIDVALIDITY changed" "$tmp/err5"
check "old messages are recognised, not reprocessed" \
	[ "$(grep -c ' duplicate ' "$tmp/out5")" = "$before" ]
check "the new one is processed once" \
	[ "$(grep -v ' duplicate ' "$tmp/out5" | grep -c idle3@example.org)" = 1 ]
check "uidvalidity stored" \
	[ "$(sql "SELECT uidvalidity FROM imap_folders WHERE folder = 'linux-pwm'")" = 4242 ]
pt imap fetch >"$tmp/out6" 2>&1
check "then nothing more" [ ! -s "$tmp/out6" ]

# ---- STARTTLS + AUTHENTICATE PLAIN; verification; size cap ------------
write_config "$tmp/config2" "auth = plain" "max-message-size = 1500"
sed -i "s|url = .*|url = imap://127.0.0.1:$DOVECOT_IMAP_PORT|" "$tmp/config2"
mail_deliver "$data/v1-2.eml" # 1.4 KB, under the cap
head -c 4000 /dev/zero | tr '\0' 'x' | fold -w 70 >"$tmp/big.txt"
{ msg big@example.org "big"; cat "$tmp/big.txt"; } >"$tmp/big.eml"
mail_deliver "$tmp/big.eml"
"$bin" --state "$tmp/state2" --config "$tmp/config2" imap fetch \
	>"$tmp/out7" 2>"$tmp/err7"
check "STARTTLS + AUTHENTICATE PLAIN fetch works" grep -q v1-2@example.org "$tmp/out7"
check "oversized mail skipped and logged" grep -q "over imap.max-message-size" "$tmp/err7"
check "oversized mail not loaded" [ "$(grep -c big@example.org "$tmp/out7")" = 0 ]

write_config "$tmp/config3"
sed -i '/ca-file/d' "$tmp/config3"
if "$bin" --state "$tmp/state3" --config "$tmp/config3" imap fetch \
	>/dev/null 2>"$tmp/err8"; then
	fail "an untrusted certificate was accepted"
else
	check "untrusted certificate refused" grep -q "not trusted" "$tmp/err8"
fi
write_config "$tmp/config4"
sed -i 's/token-file = .*/password-command = echo wrong/; /token-file/d' "$tmp/config4"
if "$bin" --state "$tmp/state4" --config "$tmp/config4" imap fetch \
	>/dev/null 2>"$tmp/err9"; then
	fail "a wrong password was accepted"
else
	check "wrong password is an auth error" grep -q "refused" "$tmp/err9"
fi

# ---- no IDLE: polling -----------------------------------------------
stop_dovecot
DOVECOT_EXTRA_CONF='imap_capability = IMAP4rev1 SASL-IR LITERAL+ UIDPLUS'
start_dovecot "$tmp/dovecot-noidle" >/dev/null || exit 1
write_config "$tmp/config5"
"$bin" --state "$tmp/state5" --config "$tmp/config5" imap watch --for 8 \
	>"$tmp/watch5" 2>"$tmp/watch5.err" &
watch_pid=$!
sleep 1
mail_deliver "$tmp/idle1.eml" linux-pwm
check "polling without IDLE delivers" wait_line "$tmp/watch5" idle1@example.org 5
kill "$watch_pid"
wait "$watch_pid" 2>/dev/null
watch_pid=

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
