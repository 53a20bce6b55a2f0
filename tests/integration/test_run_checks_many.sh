#!/bin/bash
# test_run_checks_many.sh - the checks of a pass posted at once
# (act_post_checks(), pw_checks_post_many()) against the Patchwork
# stand-in behind the hostile proxy (tests/hostile/pwproxy.py):
#   - every check POST held 300 ms: the posts overlap (up to 8 at once,
#     never more) and each check is on the server exactly once, every
#     outbox row 'sent';
#   - every POST of the checks of three patches answered 503 with
#     patchwork.max-attempts = 1 (posted by the drain, then again by the
#     pass's outbox flush): those three rows stay 'intended' with the
#     error, the rest are sent, the pass exits 0; the next pass posts
#     the three, each once;
#   - two POSTs carried out with their answers lost: the retry reads the
#     patch's checks first and finds them ('skipped'), none is doubled;
#   - events whose handling fails (the work queue refuses every insert):
#     the daemon waits poll-interval between polls, as on any source
#     error, instead of polling again at once as after a burst's events.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-checks-many.XXXXXX)
PX_PID=
cleanup() {
	[ -n "$PX_PID" ] && kill "$PX_PID" 2>/dev/null
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 16 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" imap || { echo "FAIL: servers" >&2; exit 1; }
"$py" "$PT_SOURCE_DIR/tests/hostile/pwproxy.py" --upstream "$PW_PORT" \
	--port-file "$tmp/px.port" >"$tmp/proxy.log" 2>&1 &
PX_PID=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$tmp/px.port" ] && break
	sleep 0.05
done
[ -s "$tmp/px.port" ] || { echo "FAIL: proxy" >&2; exit 1; }
px=http://127.0.0.1:$(cat "$tmp/px.port")
sed -i "s|^	url = http://127.0.0.1:$PW_PORT\$|	url = $px|" "$tmp/config"
grep -q "url = $px" "$tmp/config" || { echo "FAIL: config" >&2; exit 1; }
sed 's/^	max-attempts = 3$/	max-attempts = 1/' "$tmp/config" >"$tmp/config.1try"
grep -q 'max-attempts = 1' "$tmp/config.1try" || { echo "FAIL: config.1try" >&2; exit 1; }

proxy() { # JSON: rules for the proxy; prints its answer
	"$py" -c 'import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__proxy__", method="POST",
                             data=sys.argv[2].encode())
print(urllib.request.urlopen(req, timeout=10).read().decode())' "$px" "$1"
}
rule_field() { # FIELD: of the first rule
	"$py" -c 'import json, sys, urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "/__proxy__", timeout=10))
print(r["rules"][0][sys.argv[2]])' "$px" "$1"
}
# A fresh stand-in on the same port: no checks, the same ids.
pw_restart() {
	kill "$PW_PID" 2>/dev/null
	wait "$PW_PID" 2>/dev/null
	rm -f "$tmp/pw.port"
	"$py" "$PT_SOURCE_DIR/tests/lib/pw_standin.py" --data "$tmp/series" \
		--port "$PW_PORT" --port-file "$tmp/pw.port" \
		>>"$tmp/standin.log" 2>&1 &
	PW_PID=$!
	for ((i = 0; i < 400; i++)); do
		[ -s "$tmp/pw.port" ] && return 0
		sleep 0.05
	done
	echo "FAIL: the stand-in did not restart" >&2
	exit 1
}
# "msgid context" of every check on the stand-in, one a line, sorted
checks() {
	"$py" "$PT_SOURCE_DIR/tests/lib/pwdump.py" "http://127.0.0.1:$PW_PORT" |
		"$py" -c 'import json, sys
for p in json.load(sys.stdin)["patches"]:
    for c in p["checks"]:
        print(p["msgid"], c["context"])' | sort
}
sql() { sqlite3 "$tmp/st/state.db" "$1"; }
rows() { sql "SELECT count(*) FROM outbox WHERE kind = 'check' $1"; }
once() { # CONFIG: a pass; RC, its exit status
	timeout 120 "$bin" --state "$tmp/st" --config "$1" run --once \
		>"$tmp/out" 2>"$tmp/err"
	RC=$?
}
fresh() {
	rm -rf "$tmp/st"
	cp -r "$tmp/t/state" "$tmp/st"
	pw_restart
	proxy '{"clear": true}' >/dev/null
}

# ---- 1. the posts overlap, each check lands once ----------------------
fresh
proxy '{"rules": [{"match": "/checks/", "method": "POST", "count": 0, "fault": "delay", "ms": 300}]}' >/dev/null
once "$tmp/config"
check "overlapped: exits 0 ($(tail -1 "$tmp/err"))" [ "$RC" = 0 ]
checks >"$tmp/ref.checks"
n=$(wc -l <"$tmp/ref.checks")
check "overlapped: checks were set ($n)" [ "$n" -ge 10 ]
check "overlapped: each patch and context once" \
	[ -z "$(uniq -d "$tmp/ref.checks")" ]
check "overlapped: one outbox row a check ($(rows '') rows, $n checks)" \
	[ "$(rows '')" = "$n" ]
check "overlapped: every row sent ($(rows "AND state != 'sent'") not)" \
	[ "$(rows "AND state != 'sent'")" = 0 ]
most=$(rule_field max_inflight)
check "overlapped: posts ran at once ($most at most)" [ "$most" -ge 2 ]
check "overlapped: never more than 8 at once ($most)" [ "$most" -le 8 ]
check "overlapped: every post went through the proxy ($(rule_field hits) of $n)" \
	[ "$(rule_field hits)" = "$n" ]

# ---- 2. failed posts are recorded, then posted once --------------------
fresh
for p in 1 3 12; do
	proxy '{"rules": [{"match": "/patches/'$p'/checks/", "method": "POST", "count": 0, "fault": "status", "status": 503}]}' >/dev/null
done
once "$tmp/config.1try"
check "503: exits 0, other checks set ($(tail -1 "$tmp/err"))" [ "$RC" = 0 ]
check "503: three rows stay intended ($(rows "AND state = 'intended'"))" \
	[ "$(rows "AND state = 'intended'")" = 3 ]
check "503: each keeps the error ($(sql "SELECT last_error FROM outbox WHERE state = 'intended' LIMIT 1" | cut -c1-120))" \
	[ "$(rows "AND state = 'intended' AND last_error LIKE '%HTTP 503%'")" = 3 ]
check "503: the rest sent" [ "$(rows "AND state = 'sent'")" = $((n - 3)) ]
check "503: the log names three checks not posted, twice each" \
	[ "$(grep -c 'not posted: .*HTTP 503' "$tmp/err")" = 6 ]
check "503: the server has the others ($(checks | wc -l) of $((n - 3)))" \
	[ "$(checks | wc -l)" = $((n - 3)) ]
proxy '{"clear": true}' >/dev/null
once "$tmp/config.1try"
check "503: the pass after exits 0 ($(tail -1 "$tmp/err"))" [ "$RC" = 0 ]
checks >"$tmp/got"
check "503: then every check exactly once" cmp -s "$tmp/ref.checks" "$tmp/got"
check "503: nothing left intended or sending" \
	[ "$(rows "AND state IN ('intended', 'sending')")" = 0 ]

# ---- 3. answers lost: found on the retry, not doubled ------------------
fresh
proxy '{"rules": [{"match": "/checks/", "method": "POST", "count": 2, "fault": "drop"}]}' >/dev/null
once "$tmp/config"
check "drop: exits 0 ($(tail -1 "$tmp/err"))" [ "$RC" = 0 ]
checks >"$tmp/got"
check "drop: every check exactly once" cmp -s "$tmp/ref.checks" "$tmp/got"
check "drop: the two found on the server ($(rows "AND state = 'skipped'"))" \
	[ "$(rows "AND state = 'skipped'")" = 2 ]
check "drop: the rest sent" [ "$(rows "AND state = 'sent'")" = $((n - 2)) ]

# ---- 4. events that cannot be handled: no polling at once --------------
fresh
sql "CREATE TRIGGER refuse BEFORE INSERT ON work_queue BEGIN
	SELECT RAISE(ABORT, 'refused by the test'); END;"
proxy '{"rules": [{"match": "/events/", "method": "GET", "count": 0, "fault": "delay", "ms": 1}]}' >/dev/null
timeout 60 "$bin" --state "$tmp/st" --config "$tmp/config" run --for 6 \
	>"$tmp/out" 2>"$tmp/err"
polls=$(rule_field hits)
check "refused: the handling failed ($(grep -m1 -o 'refused by the test' "$tmp/err"))" \
	grep -q 'refused by the test' "$tmp/err"
check "refused: events were polled ($polls requests)" [ "$polls" -ge 2 ]
# one page a poll, a poll a second (poll-interval = 1) for 6 s
check "refused: no polling at once ($polls requests in 6 s)" [ "$polls" -le 14 ]
finish
