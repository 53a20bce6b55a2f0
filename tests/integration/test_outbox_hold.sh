#!/bin/bash
# test_outbox_hold.sh - replies held in the outbox, end to end against
# Dovecot and the SMTP sink (tests/lib/botenv.sh): with reply-mode =
# approve (netdev) a reply waits until `outbox approve ID`, is then sent
# by the next pass and says a person approved it; `outbox drop ID` drops
# one for good; unknown IDs and rows not waiting are errors (exit 1), a
# malformed ID a usage error (2).  With embargo-hours (pwm) replies wait;
# when the embargo is over (moved back in the state here: it is an
# hour) one whose series got a v2 is dropped, one whose thread a
# reviewer answered is dropped, the others are sent.  A mute drops the
# replies of its series that wait.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-hold.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" patchwork || { echo "FAIL: servers" >&2; exit 1; }
cp -r "$tmp/t/state" "$tmp/st"
sed -i 's/risk-threshold = 0.30/risk-threshold = 0.0/' "$tmp/config"
sed -i '/^\[subsystem "netdev"\]/a \	reply-mode = approve' "$tmp/config"
sed -i '/^\[subsystem "pwm"\]/a \	embargo-hours = 1' "$tmp/config"
pt() { "$bin" --state "$tmp/st" --config "$tmp/config" "$@"; }
sql() { sqlite3 "$tmp/st/state.db" "$1"; }
sent() { find "$SMTP_MAILDIR/new" -type f | wc -l; }
to_list() { # LIST: sent mails Cc'd to the list
	grep -l "^Cc:.*$1@vger.kernel.org" "$SMTP_MAILDIR"/new/* 2>/dev/null | wc -l
}

# ---- everything is held ------------------------------------------------
pt run --once >/dev/null 2>"$tmp/run1.err"
check "first pass exits 0 ($(tail -2 "$tmp/run1.err"))" [ $? = 0 ]
check "nothing is sent" [ "$(sent)" = 0 ]
n_app=$(sql "SELECT count(*) FROM outbox WHERE state = 'waiting' AND hold = 'approve' AND subsystem = 'netdev'")
n_emb=$(sql "SELECT count(*) FROM outbox WHERE state = 'waiting' AND hold = 'embargo' AND subsystem = 'pwm'")
check "netdev replies wait for approval ($n_app)" [ "$n_app" -ge 2 ]
check "pwm replies wait for the embargo ($n_emb)" [ "$n_emb" -ge 2 ]
check "the summary counts them held" grep -Eq "[1-9][0-9]* held, 0 dropped" "$tmp/run1.err"
pt outbox list >"$tmp/list.out"
check "outbox list shows them" [ "$(grep -c ' approve \| embargo ' "$tmp/list.out")" = $((n_app + n_emb)) ]
pt outbox list --json >"$tmp/list.json"
check "outbox list --json" "$py" -c 'import json, sys
a = json.load(open(sys.argv[1]))
assert len(a) == int(sys.argv[2]), len(a)
assert all(r["hold"] in ("approve", "embargo") for r in a)' "$tmp/list.json" $((n_app + n_emb))
id1=$(sql "SELECT min(id) FROM outbox WHERE hold = 'approve'")
id2=$(sql "SELECT max(id) FROM outbox WHERE hold = 'approve'")
expect_out '^state: waiting' pt outbox show "$id1"
expect_out 'maintainer read this note and approved it before it' pt outbox show "$id1"
expect_out '^In-Reply-To: <' pt outbox show "$id1"
expect_exit 1 pt outbox show 99999
expect_err "error: no action 99999 in the outbox" pt outbox show 99999
expect_exit 2 pt outbox approve abc
expect_exit 2 pt outbox approve
expect_exit 2 pt outbox frobnicate 1
check "pwm replies do not claim an approval" \
	[ -z "$(sql "SELECT id FROM outbox WHERE hold = 'embargo' AND payload LIKE '%approved it%'")" ]

# ---- approve one, drop one ---------------------------------------------
expect_out "^approved $id1" pt outbox approve "$id1"
expect_exit 1 pt outbox approve "$id1"
expect_err "error: action $id1 is intended, not waiting" pt outbox approve "$id1"
expect_out "^dropped $id2" pt outbox drop "$id2"
expect_exit 1 pt outbox drop "$id2"
pt run --once >/dev/null 2>"$tmp/run2.err"
check "second pass exits 0" [ $? = 0 ]
check "the approved reply is sent, alone" [ "$(sent)" = 1 ]
check "it says a person approved it" grep -lq 'approved it before it' "$SMTP_MAILDIR"/new/*
check "it is the approved row" [ "$(sql "SELECT state || ':' || approved_by FROM outbox WHERE id = $id1")" = "sent:${USER:-$(id -un)}" ]
check "the dropped one stays dropped" [ "$(sql "SELECT state FROM outbox WHERE id = $id2")" = dropped ]
check "pwm still waits" [ "$(to_list linux-pwm)" = 0 ]

# ---- a mute drops the replies of its series that wait -----------------
id3=$(sql "SELECT min(id) FROM outbox WHERE state = 'waiting' AND hold = 'approve'")
check "another netdev reply waits ($id3)" [ -n "$id3" ]
about3=$(sql "SELECT about FROM outbox WHERE id = $id3")
s3=$(sql "SELECT series_id FROM patches WHERE message_id = '$about3'")
auth3=$(sql "SELECT author_email FROM series WHERE id = $s3")
n3=$(sql "SELECT count(*) FROM outbox o JOIN patches p ON p.message_id = o.about WHERE p.series_id = $s3 AND o.state = 'waiting'")
printf 'From: <%s>\nTo: netdev@vger.kernel.org\nSubject: Re: x\nDate: %s\nMessage-ID: <mute-3@test.example>\nIn-Reply-To: <%s>\nReferences: <%s>\nList-Id: <netdev.vger.kernel.org>\n\npatchtriage: mute\n' \
	"$auth3" "$(date -R)" "$about3" "$about3" >"$tmp/mute3.eml"
mail_deliver "$tmp/mute3.eml" netdev
pt run --once >/dev/null 2>"$tmp/run2b.err"
check "the mute pass exits 0" [ $? = 0 ]
check "the series' waiting replies are dropped ($n3)" \
	[ "$(sql "SELECT count(*) FROM outbox o JOIN patches p ON p.message_id = o.about WHERE p.series_id = $s3 AND o.state = 'dropped' AND o.last_error = 'dropped: series muted by $auth3'")" = "$n3" ]
expect_exit 1 pt outbox approve "$id3"
check "nothing more is sent" [ "$(sent)" = 1 ]

# ---- the embargo ends: v2 drops one series' replies, others go -----------
p1=$(sql "SELECT about FROM outbox WHERE hold = 'embargo' ORDER BY id LIMIT 1")
s1=$(sql "SELECT series_id FROM patches WHERE message_id = '$p1'")
check "the first embargoed reply's series is known ($s1)" [ -n "$s1" ]
n1=$(sql "SELECT count(*) FROM outbox o JOIN patches p ON p.message_id = o.about WHERE p.series_id = $s1 AND o.state = 'waiting'")
for m in $(sql "SELECT message_id FROM patches WHERE series_id = $s1"); do
	f=$(grep -l "^Message-ID: <$m>" "$tmp"/series/mail/*.eml)
	sed -e 's/^Subject: \[PATCH\( [0-9]*\/[0-9]*\)\?\]/Subject: [PATCH v2\1]/' \
		-e "/^\(Message-ID\|In-Reply-To\|References\|[ \t]\)/ s/@example\.\(com\|org\|net\)>/@v2.example.\1>/g" \
		-e "s/^Date: .*/Date: $(date -R)/" "$f" >"$tmp/v2-$(basename "$f")"
	mail_deliver "$tmp/v2-$(basename "$f")" linux-pwm
done
sql "UPDATE outbox SET release_at = 0 WHERE state = 'waiting' AND hold = 'embargo'"
pt run --once >/dev/null 2>"$tmp/run3.err"
check "third pass exits 0 ($(tail -2 "$tmp/run3.err"))" [ $? = 0 ]
check "v2 is linked as a newer version" \
	[ "$(sql "SELECT count(*) FROM series_versions WHERE prev_series_id = $s1")" = 1 ]
check "the v1 replies are dropped ($n1)" \
	[ "$(sql "SELECT count(*) FROM outbox o JOIN patches p ON p.message_id = o.about WHERE p.series_id = $s1 AND o.state = 'dropped' AND o.last_error LIKE 'dropped: a newer version%'")" = "$n1" ]
check "the log says why" grep -q 'dropped: a newer version of the series arrived during the embargo' "$tmp/run3.err"
check "the other pwm series' replies are sent" [ "$(to_list linux-pwm)" = $((n_emb - n1)) ]
check "v2's own reply waits for its embargo" \
	[ "$(sql "SELECT count(*) FROM outbox WHERE state = 'waiting' AND hold = 'embargo' AND about LIKE '%@v2.example.%'")" -ge 1 ]

# ---- a reviewer answers v2 during its embargo: dropped ------------------
v2p=$(sql "SELECT about FROM outbox WHERE state = 'waiting' AND hold = 'embargo' AND about LIKE '%@v2.example.%' LIMIT 1")
printf 'From: Rev Iewer <rev@iewer.example>\nTo: linux-pwm@vger.kernel.org\nSubject: Re: v2\nDate: %s\nMessage-ID: <rev-1@iewer.example>\nIn-Reply-To: <%s>\nReferences: <%s>\nList-Id: <linux-pwm.vger.kernel.org>\n\nThis leaks the clock on the error path.\n' \
	"$(date -R)" "$v2p" "$v2p" >"$tmp/rev.eml"
mail_deliver "$tmp/rev.eml" linux-pwm
sql "UPDATE outbox SET release_at = 0 WHERE state = 'waiting' AND hold = 'embargo'"
before=$(sent)
pt run --once >/dev/null 2>"$tmp/run4.err"
check "fourth pass exits 0" [ $? = 0 ]
check "v2's replies are dropped: a reviewer spoke" \
	grep -q 'dropped: rev@iewer.example replied in the thread during the embargo' "$tmp/run4.err"
check "nothing more is sent" [ "$(sent)" = "$before" ]
check "nothing waits for the embargo any more" \
	[ "$(sql "SELECT count(*) FROM outbox WHERE state = 'waiting' AND hold = 'embargo'")" = 0 ]
finish
