#!/bin/bash
# test_pw_cli.sh - `patchtriage pw` against the Patchwork stand-in loaded
# with tests/data/pw: events polled over more than three pages and not
# reprocessed after a restart (a position of their own: the daemon's in
# state.db never moves), --since as a day or with a zone suffix sent in
# the form Patchwork takes, "no events"/"no checks" on empty answers,
# series/patch/checks output, a check that
# reached the server before a "crash" not posted again, each fault
# survived or reported clearly, the error messages for a refused token
# and a non-maintainer, and the token absent from every output, the
# stand-in's request log and the state database.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
py=${PT_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || skip "no $py"
pt_tmpdir
token=tok-bot-5f0e9c1d2a7b

"$py" "$PT_SOURCE_DIR/tests/lib/pw_standin.py" \
	--data "$PT_SOURCE_DIR/tests/data/pw" --port-file "$PT_TMP/port" \
	--record "$PT_TMP/requests.jsonl" 2>"$PT_TMP/standin.log" &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null; rm -rf "$PT_TMP"' EXIT
for _ in $(seq 100); do [ -s "$PT_TMP/port" ] && break; sleep 0.05; done
[ -s "$PT_TMP/port" ] || { fail "stand-in did not start"; finish; exit; }
url=http://127.0.0.1:$(cat "$PT_TMP/port")

ctl() { # JSON
	curl -sf -X POST -d "$1" "$url/__control__" >/dev/null ||
		fail "control $1"
}

printf '%s\n' "$token" >"$PT_TMP/token"
chmod 600 "$PT_TMP/token"
cat >"$PT_TMP/config" <<EOF
[patchwork]
	url = $url
	token-file = $PT_TMP/token
	project = test
	per-page = 3
	backoff-ms = 20
	max-attempts = 4
	timeout = 2
EOF
pw() { "$bin" --config "$PT_TMP/config" --state "$PT_TMP/state" pw "$@"; }
out=$PT_TMP/out
log=$PT_TMP/all-output
: >"$log"
run() { # record stdout+stderr of pw ARGS in $out and $log; return its status
	pt_checks=$((pt_checks + 1))
	pw "$@" >"$out" 2>&1
	local rc=$?
	cat "$out" >>"$log"
	return $rc
}

# events: 14 in pages of 3 (five pages), then nothing after a restart
run events --poll --json || fail "pw events --poll: $(cat "$out")"
n=$(grep -c '"category"' "$out")
[ "$n" = 14 ] || fail "first poll gave $n events, expected 14"
pages=$(grep -c '/api/1.3/events/' "$PT_TMP/requests.jsonl")
[ "$pages" -ge 5 ] || fail "events were read in $pages pages, expected 5"
run events --poll --json || fail "second poll: $(cat "$out")"
n=$(grep -c '"category"' "$out")
[ "$n" = 0 ] || fail "second poll reprocessed $n events"
# a new reply arrives: exactly it
ctl "$("$py" -c 'import json,sys; print(json.dumps({"import": open(sys.argv[1]).read()}))' \
	"$PT_SOURCE_DIR/tests/data/pw/extra/08-tested.eml")"
run events --poll || fail "third poll: $(cat "$out")"
grep -q 'patch-comment-created' "$out" || fail "new comment event not seen"
[ "$(grep -Ec '^[0-9]+ +20' "$out")" = 1 ] || fail "third poll: $(cat "$out")"
run events || fail "pw events: $(cat "$out")"
head -1 "$out" | grep -q '^15 ' || fail "pw events is not newest first"
run events --since 2099-01-01T00:00:00 || fail "pw events --since"
grep -Eq '^[0-9]+ ' "$out" && fail "events after 2099: $(cat "$out")"
grep -q '^no events since that date$' "$out" ||
	fail "an empty answer printed nothing: $(cat "$out")"
grep -q 'since=2099-01-01T00%3A00%3A00' "$PT_TMP/requests.jsonl" ||
	fail "--since not sent encoded"
# as on a real Patchwork 3.1.3, the stand-in answers an empty list to a
# date alone and 500 to a zone suffix: both go out as the server's form
run events --since 2000-01-01 || fail "pw events --since DAY: $(cat "$out")"
[ "$(grep -Ec '^[0-9]+ ' "$out")" = 15 ] ||
	fail "--since DAY: $(cat "$out")"
grep -q 'since=2000-01-01T00%3A00%3A00"' "$PT_TMP/requests.jsonl" ||
	fail "--since DAY not sent as its midnight"
run events --since 2000-01-01T00:00:00Z ||
	fail "pw events --since ...Z: $(cat "$out")"
[ "$(grep -Ec '^[0-9]+ ' "$out")" = 15 ] || fail "--since Z: $(cat "$out")"
grep -q 'since=2000-01-01T00%3A00%3A00Z\|since=[^"]*%2B00' \
	"$PT_TMP/requests.jsonl" && fail "a zone suffix was sent"
run events --since 2000-01-01T00:00:00+00:00 --poll --json \
	--project test || fail "poll --since +00:00: $(cat "$out")"
# the daemon's position (state.db) never moved: the polls have their own
pt_checks=$((pt_checks + 1))
"$py" -c 'import sqlite3, sys
n = sqlite3.connect(sys.argv[1]).execute(
    "SELECT count(*) FROM sqlite_master WHERE name = ?",
    ("pw_positions",)).fetchone()[0]
if n:
    n = sqlite3.connect(sys.argv[1]).execute(
        "SELECT count(*) FROM pw_positions").fetchone()[0]
sys.exit(1 if n else 0)' "$PT_TMP/state/state.db" ||
	fail "pw events --poll moved the daemon's position in state.db"
[ -f "$PT_TMP/state/pw-poll.db" ] || fail "no pw-poll.db"
run events --since 2024-02-30x && fail "a bad --since accepted"
grep -q "is not a date" "$out" || fail "bad --since message: $(cat "$out")"

# series and patch
run series 1 || fail "pw series 1: $(cat "$out")"
grep -q 'series 1 v1: widget: add frobnication (3/3 patches)' "$out" ||
	fail "series line: $(cat "$out")"
run series 1 --json || fail "pw series --json"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["patches"]) == 3 and d["patches"][0]["mbox_bytes"] > 0' "$out" ||
	fail "series JSON"
run patch 4 || fail "pw patch 4"
grep -q '1 comment, mbox' "$out" || fail "patch output: $(cat "$out")"

# checks: posted once; the same again is not posted
run check 4 --state warning --context patchtriage-risk \
	--description 'p(bug)=0.41' --target-url https://example.org/4 ||
	fail "pw check: $(cat "$out")"
grep -q '^posted check 1 on patch 4' "$out" || fail "check: $(cat "$out")"
run check 4 --state warning --context patchtriage-risk \
	--description 'p(bug)=0.41' --target-url https://example.org/4
grep -q 'already has this check' "$out" || fail "dedupe: $(cat "$out")"
# simulated crash: stored by the server, answer lost, then a restart
ctl '{"drop_response_next": 1, "method": "POST"}'
run check 4 --state success --context patchtriage-stable --description x
ctl '{"clear": true}'
run check 4 --state success --context patchtriage-stable --description x
grep -q 'already has this check' "$out" ||
	fail "after the crash the check was posted again: $(cat "$out")"
run checks 4 --json
[ "$(grep -c '"context":"patchtriage-stable"' "$out")" = 1 ] ||
	fail "duplicate checks: $(cat "$out")"

run checks 1 || fail "pw checks 1: $(cat "$out")"
grep -qx 'no checks' "$out" || fail "no checks printed nothing: $(cat "$out")"

# faults survived: 500, 429 + Retry-After, reset, delay below the timeout
ctl '{"fail_next": 1, "rate_limit_next": 1, "retry_after": 1, "reset_next": 1}'
run patch 1 || fail "faults not survived: $(cat "$out")"
ctl '{"clear": true, "delay_ms": 150}'
run checks 1 || fail "delay not survived: $(cat "$out")"
# faults reported: long delay, HTML pages, truncated JSON
sed 's/max-attempts = 4/max-attempts = 2/; s/timeout = 2/timeout = 1/' \
	"$PT_TMP/config" >"$PT_TMP/config.short"
ctl '{"clear": true, "delay_ms": 1300}'
pt_checks=$((pt_checks + 1))
"$bin" --config "$PT_TMP/config.short" --state "$PT_TMP/state" pw checks 1 \
	>"$out" 2>&1 && fail "timeout not reported"
cat "$out" >>"$log"
grep -q "error: patchwork: '.*' did not answer in time (2 attempts" "$out" ||
	fail "timeout message: $(cat "$out")"
ctl '{"clear": true, "html_next": 50}'
run checks 1 && fail "HTML pages not reported"
grep -q "answered HTTP 502 (text/html" "$out" ||
	fail "HTML message: $(cat "$out")"
ctl '{"clear": true, "truncate_next": 1}'
run checks 1 && fail "truncated JSON not reported"
grep -q "invalid JSON" "$out" || fail "truncation message: $(cat "$out")"
ctl '{"clear": true}'

# errors: the token refused, a user who maintains nothing, 400, 404
printf 'tok-wrong-5f0e9c1d2a7b\n' >"$PT_TMP/token"
run check 4 --state success --context c && fail "bad token accepted"
grep -q "^error: .*patchwork '$url' refused the token for project 'test': check patchwork.token-file" "$out" ||
	fail "bad token message: $(cat "$out")"
printf 'tok-nobody-77aa01\n' >"$PT_TMP/token"
run check 4 --state success --context c && fail "non-maintainer accepted"
grep -q "not a maintainer of project 'test'" "$out" ||
	fail "non-maintainer message: $(cat "$out")"
printf '%s\n' "$token" >"$PT_TMP/token"
run check 4 --state broken --context ci/build && fail "400 accepted"
grep -q 'state: "broken" is not a valid choice' "$out" ||
	fail "400 message: $(cat "$out")"
run patch 999 && fail "404 accepted"
grep -q "/api/1.3/patches/999/' (404" "$out" || fail "404: $(cat "$out")"
expect_exit 2 pw check 4 --state success
expect_exit 2 pw series x

# the token appears nowhere
for f in "$log" "$PT_TMP/requests.jsonl" "$PT_TMP"/state/state.db*; do
	[ -f "$f" ] || continue
	if grep -q "5f0e9c1d2a7b\|77aa01" "$f"; then
		fail "a token appears in $(basename "$f")"
	fi
done
pt_checks=$((pt_checks + 1))
kill -0 $sim 2>/dev/null || fail "the stand-in died: $(tail -5 "$PT_TMP/standin.log")"
finish
