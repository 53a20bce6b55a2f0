#!/bin/bash
# test_pw_hostile_run.sh - `patchtriage run` against a hostile Patchwork:
# tests/hostile/pwproxy.py in front of the stand-in (tests/lib/botenv.sh,
# SMTP sink, no Dovecot) injects one fault per case.  Each case runs
# `run --once` (two of them the daemon, stopped by SIGTERM) on a copy of
# a pristine state and asserts
#   (a) time: it ends within BOUND seconds (timeout(1));
#   (b) memory: peak RSS under the reference pass's plus a stated margin;
#   (c) exit status, and an error on stderr naming the peer (the proxy's
#       URL) and the problem;
#   (d) nothing marked seen that was not handled: every series-completed
#       event that pw_events_seen holds, or that the stored position has
#       passed, has its series in work_queue;
#   (e) afterwards, with the fault gone (and the queue's backoff over), a
#       normal `run --once` leaves exactly the checks and replies of a
#       fault-free reference pass: none lost, none twice;
# and that the token appears in no output, log or state.
#
# Cases (event stream = GET events/, mbox = GET .../mbox/):
#   ev-500        500 on every events page
#   ev-503-once   503 + Retry-After: 1 once: retried, a normal pass
#   ev-429-zero   429 + Retry-After: 0 on every page: gives up
#   ev-429-huge   429 + Retry-After: 99999999: gives up at once, no sleep
#   ev-429-date   429 + Retry-After: an HTTP date 2 s ahead, once
#   ev-drip       the page a byte every 500 ms
#   ev-hang       no answer at all
#   ev-truncate   half the body, then close
#   ev-huge       a 300 MiB body (streamed)
#   ev-gzip       a gzip bomb: 256 MiB of zeros as ~256 KiB gzip
#   ev-malformed  JSON cut in the middle of an object
#   ev-nested     JSON nested a million deep
#   ev-nul        a NUL in the category of a series-completed event
#   ev-id-abc, ev-id-neg, ev-id-2p63, ev-id-1e308, ev-id-null
#                 odd ids of a series-completed event
#   ev-series-abc an odd series id in an event's payload
#   ev-redirect   302 to itself on the events page
#   ev-link-self  Link: <self>; rel="next"
#   ev-link-other Link: rel="next" to another loopback port
#   ev-link-meta  Link: rel="next" to 169.254.169.254
#   series-500    500 on every series document
#   mbox-redirect-self, mbox-redirect-port, mbox-redirect-meta
#                 302 on an mbox: to itself, to another loopback port, to
#                 169.254.169.254
#   mbox-huge     a 300 MiB mbox (cap 64 MiB)
#   check-503     503 + Retry-After: 1 on every check POST
#   check-drop    a check POST carried out, its answer lost
#   daemon-hang   the daemon hanging on events: SIGTERM ends it in 5 s
#   daemon-503    the daemon waiting out Retry-After: 30: SIGTERM, 5 s
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
here=$PT_SOURCE_DIR/tests/hostile
tmp=$(mktemp -d /tmp/pt-hostile-pw.XXXXXX)
token=0123456789abcdef0123456789abcdef01234567 # botenv's pw-token
PX_PID=
cleanup() {
	[ -n "$PX_PID" ] && kill "$PX_PID" 2>/dev/null
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
T0=$(date +%s)

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 4 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" imap || { echo "FAIL: servers" >&2; exit 1; }
"$py" "$here/pwproxy.py" --upstream "$PW_PORT" --port-file "$tmp/px.port" \
	>"$tmp/proxy.log" 2>&1 &
PX_PID=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$tmp/px.port" ] && break
	sleep 0.05
done
[ -s "$tmp/px.port" ] || { echo "FAIL: proxy" >&2; cat "$tmp/proxy.log" >&2; exit 1; }
PX_PORT=$(cat "$tmp/px.port")
px=http://127.0.0.1:$PX_PORT
grep -q "^	token-file" "$tmp/config" || { echo "FAIL: config has no token" >&2; exit 1; }

# The configuration through the proxy, with short timeouts: TIMEOUT s a
# request, BUDGET s of retries.
mkconf() { # FILE TIMEOUT BUDGET
	sed -e "s|^	url = http://127.0.0.1:$PW_PORT\$|	url = $px|" \
		-e "s|^	backoff-ms = 50\$|	backoff-ms = 50\\
	timeout = $2\\
	connect-timeout = 2\\
	retry-budget = $3|" "$tmp/config" >"$1"
}
mkconf "$tmp/config.px" 3 10
mkconf "$tmp/config.slow" 30 60
mkconf "$tmp/config.tight" 2 5
# one attempt a work item: an item whose peer fails must still not be
# given up (it waits while younger than check.max-age)
sed 's/^\[run\]$/[run]\
	max-attempts = 1/' "$tmp/config.px" >"$tmp/config.1try"
grep -q "max-attempts = 1" "$tmp/config.1try" || { echo "FAIL: config.1try" >&2; exit 1; }
grep -q "url = $px" "$tmp/config.px" || { echo "FAIL: mkconf" >&2; exit 1; }

proxy() { # JSON: rules for the proxy ({"clear": true} drops them)
	"$py" -c 'import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__proxy__", method="POST",
                             data=sys.argv[2].encode())
print(urllib.request.urlopen(req, timeout=10).read().decode())' "$px" "$1"
}
proxy_hits() { # the hits of all rules together
	"$py" -c 'import json, sys, urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "/__proxy__", timeout=10))
print(sum(x["hits"] for x in r["rules"]))' "$px"
}

# A fresh stand-in on the same port: no checks, the same ids.
pw_restart() {
	local i
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

# Every check on the stand-in: "msgid context state md5(description)".
checks() {
	"$py" "$PT_SOURCE_DIR/tests/lib/pwdump.py" "http://127.0.0.1:$PW_PORT" |
		"$py" -c 'import hashlib, json, sys
for p in json.load(sys.stdin)["patches"]:
    for c in p["checks"]:
        print(p["msgid"], c["context"], c["state"],
              hashlib.md5(c["description"].encode()).hexdigest())' | sort
}
# Every reply in the sink: its Message-ID, one a line.
replies() {
	local f
	for f in "$SMTP_MAILDIR"/new/*; do
		[ -f "$f" ] && sed -n 's/^Message-I[Dd]: *//p' "$f" | head -1
	done | sort
}

# (d): no series-completed event seen or passed without its series queued.
seen_ok() { # STATE_DB
	"$py" - "$1" "http://127.0.0.1:$PW_PORT" <<'EOF'
import datetime, json, re, sqlite3, sys, urllib.request
db = sqlite3.connect(sys.argv[1])
def when(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")[:26].rstrip("+")).replace(tzinfo=None)
queued = {k for (k,) in db.execute(
    "SELECT key FROM work_queue WHERE kind = 'pw-series'")}
bad = []
for project, last in db.execute("SELECT project, last_date FROM pw_positions"):
    seen = {i for (i,) in db.execute(
        "SELECT event_id FROM pw_events_seen WHERE project = ?", (project,))}
    url = "%s/api/1.3/events/?project=%s&per_page=250" % (sys.argv[2], project)
    for _ in range(100):  # bounded: 100 pages
        with urllib.request.urlopen(url, timeout=30) as r:
            page = json.load(r)
            link = r.headers.get("Link") or ""
        for e in page:
            if e["category"] != "series-completed":
                continue
            key = "%s/%d" % (project, e["payload"]["series"]["id"])
            if (e["id"] in seen or when(e["date"]) <= when(last)) \
                    and key not in queued:
                bad.append("event %d (%s) %s but not queued" % (
                    e["id"], key, "seen" if e["id"] in seen else "passed"))
        m = re.search(r'<([^>]+)>;\s*rel="next"', link)
        if not m:
            break
        url = m.group(1)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
}

# A line of FILE matches ERR and names the peer, the proxy's URL.
names_peer() { # ERR FILE
	grep -E -- "$1" "$2" | grep -qF "127.0.0.1:$PX_PORT"
}

# A case that shows a bug not fixed yet: its failures are reported as
# XFAIL naming the bug (set XFAIL before the case, cleared after).
XFAIL=
n_xfail=0
fail() {
	if [ -n "$XFAIL" ]; then
		echo "XFAIL ($XFAIL): $*"
		n_xfail=$((n_xfail + 1))
		return
	fi
	echo "FAIL: $*" >&2
	pt_failures=$((pt_failures + 1))
}

# Run CMD under a time bound and measure its peak RSS (KiB): sets RC,
# MS (elapsed) and RSS.
bounded() { # BOUND OUTPREFIX CMD...
	local bound=$1 pre=$2 t0
	shift 2
	t0=$(date +%s%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$pre.rss" timeout -k 5 "$bound" "$@" \
			>"$pre.out" 2>"$pre.err"
	else
		"$py" -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(
    resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$pre.rss" timeout -k 5 "$bound" "$@" >"$pre.out" 2>"$pre.err"
	fi
	RC=$?
	MS=$((($(date +%s%N) - t0) / 1000000))
	RSS=$(tail -1 "$pre.rss")
}

# ---- the fault-free reference pass -----------------------------------
pw_restart
cp -r "$tmp/t/state" "$tmp/pristine"
rm -rf "$tmp/ref"
cp -r "$tmp/pristine" "$tmp/ref"
bounded 120 "$tmp/ref" "$bin" --state "$tmp/ref" --config "$tmp/config.px" run --once
check "reference pass exits 0 ($(tail -2 "$tmp/ref.err"))" [ "$RC" = 0 ]
REF_RSS=$RSS
REF_MS=$MS
checks >"$tmp/ref.checks"
replies >"$tmp/ref.replies"
check "the reference pass set checks" [ -s "$tmp/ref.checks" ]
check "the reference pass sent replies" [ -s "$tmp/ref.replies" ]
check "reference: nothing seen unhandled ($(seen_ok "$tmp/ref/state.db"))" seen_ok "$tmp/ref/state.db"
echo "reference: ${REF_MS} ms, peak RSS ${REF_RSS} KiB, $(wc -l <"$tmp/ref.checks") checks, $(wc -l <"$tmp/ref.replies") replies"
results=$tmp/results
: >"$results"

# What every case checks after its faulty pass: the token, (d), then (e).
after_fault() { # NAME DIR
	local name=$1 d=$2 leaked
	leaked=$(grep -rla -- "$token" "$d" 2>/dev/null)
	check "$name: the token appears nowhere (${leaked:-})" [ -z "$leaked" ]
	check "$name: nothing seen that was not handled ($(seen_ok "$d/st/state.db" | head -3))" \
		seen_ok "$d/st/state.db"
	proxy '{"clear": true}' >/dev/null
	# the retry backoff of a failed work item is over
	sqlite3 "$d/st/state.db" "UPDATE work_queue SET not_before = 0"
	bounded 120 "$d/again" "$bin" --state "$d/st" --config "$tmp/config.px" run --once
	check "$name: the pass after exits 0 ($(tail -2 "$d/again.err"))" [ "$RC" = 0 ]
	checks >"$d/checks"
	replies >"$d/replies"
	check "$name: every check exactly once ($(diff "$tmp/ref.checks" "$d/checks" | grep -c '^[<>]') differ)" \
		cmp -s "$tmp/ref.checks" "$d/checks"
	check "$name: every reply exactly once ($(diff "$tmp/ref.replies" "$d/replies" | grep '^[<>]' | head -2 | tr '\n' ' '))" \
		cmp -s "$tmp/ref.replies" "$d/replies"
	check "$name: nothing seen unhandled after ($(seen_ok "$d/st/state.db" | head -3))" \
		seen_ok "$d/st/state.db"
	leaked=$(grep -rla -- "$token" "$d" 2>/dev/null)
	check "$name: the token appears nowhere after (${leaked:-})" [ -z "$leaked" ]
}

# One --once case: RULES for the proxy, then the pass must end within
# BOUND s, peak RSS under the reference's + MARGIN MiB, exit WANT_RC and
# print an error naming the proxy and matching ERR (empty: exit 0 and no
# error needed).
fault_case() { # NAME BOUND MARGIN RULES WANT_RC ERR [CONFIG]
	local name=$1 bound=$2 margin=$3 rules=$4 want=$5 err=$6 d=$tmp/c/$1
	local conf=${7:-$tmp/config.px}
	mkdir -p "$d"
	pw_restart
	rm -f "$SMTP_MAILDIR"/new/*
	cp -r "$tmp/pristine" "$d/st"
	proxy '{"clear": true}' >/dev/null
	proxy "{\"rules\": [$rules]}" >/dev/null
	bounded "$bound" "$d/run" "$bin" --state "$d/st" --config "$conf" run --once
	local line
	line=$(grep -E -- "$err" "$d/run.err" | head -1)
	[ -n "$err" ] || line=$(grep -E 'error|warn' "$d/run.err" | head -1)
	printf '%s\t%s ms\t%s KiB\trc %s\t%s\n' "$name" "$MS" "$RSS" "$RC" \
		"${line:-(no error)}" >>"$results"
	check "$name: ends within ${bound} s (${MS} ms, rc $RC)" [ "$RC" != 124 -a "$RC" != 137 ]
	check "$name: peak RSS ${RSS} KiB under the reference's ${REF_RSS} + ${margin} MiB" \
		[ "$RSS" -lt $((REF_RSS + margin * 1024)) ]
	check "$name: exits $want (rc $RC: $(tail -1 "$d/run.err"))" [ "$RC" = "$want" ]
	if [ -n "$err" ]; then
		check "$name: the error names the peer and /$err/ ($(tail -1 "$d/run.err"))" \
			names_peer "$err" "$d/run.err"
	fi
	after_fault "$name" "$d"
}

# One daemon case: the daemon runs into the fault, gets SIGTERM once the
# proxy has applied it HITS times (and HOLD s more), and must be gone
# within 5 s, exit 0 and have said what went wrong if ERR is set.
daemon_case() { # NAME CONFIG MARGIN RULES HITS HOLD ERR
	local name=$1 conf=$2 margin=$3 rules=$4 hits=$5 hold=$6 err=$7
	local d=$tmp/c/$1 tpid pid i t0 ms line
	mkdir -p "$d"
	pw_restart
	rm -f "$SMTP_MAILDIR"/new/*
	cp -r "$tmp/pristine" "$d/st"
	proxy '{"clear": true}' >/dev/null
	proxy "{\"rules\": [$rules]}" >/dev/null
	/usr/bin/time -f %M -o "$d/run.rss" timeout -k 5 120 "$bin" \
		--state "$d/st" --config "$conf" run >"$d/run.out" 2>"$d/run.err" &
	tpid=$!
	for ((i = 0; i < 600; i++)); do
		[ "$(proxy_hits)" -ge "$hits" ] && break
		sleep 0.1
	done
	sleep "$hold"
	pid=$(pgrep -P "$tpid" -x timeout)
	t0=$(date +%s%N)
	kill -TERM "$pid"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.05
	done
	wait "$tpid"
	RC=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	RSS=$(tail -1 "$d/run.rss")
	line=$(grep -E -- "${err:-patchwork}" "$d/run.err" | head -1)
	printf '%s\t%s ms after SIGTERM\t%s KiB\trc %s\t%s\n' "$name" "$ms" \
		"$RSS" "$RC" "${line:-(no error)}" >>"$results"
	check "$name: gone within 5 s of SIGTERM (${ms} ms)" [ "$ms" -le 5000 ]
	check "$name: peak RSS ${RSS} KiB under the reference's ${REF_RSS} + ${margin} MiB" \
		[ "$RSS" -lt $((REF_RSS + margin * 1024)) ]
	check "$name: exits 0 on SIGTERM (rc $RC: $(tail -1 "$d/run.err"))" [ "$RC" = 0 ]
	if [ -n "$err" ]; then
		check "$name: the log names the peer and /$err/" \
			names_peer "$err" "$d/run.err"
	fi
	after_fault "$name" "$d"
}

ev='"match": "/events/", "method": "GET"'
mbox='"match": "/mbox/", "method": "GET"'
sc='"where": {"category": "series-completed"}'
B=40 # s: a pass whose requests time out after 3 s with 10 s of retries
future=$(date -u -d '+2 sec' '+%a, %d %b %Y %H:%M:%S GMT')

fault_case ev-500 $B 64 "{$ev, \"count\": 0, \"fault\": \"status\", \"status\": 500}" \
	1 'answered HTTP 500'
fault_case ev-503-once $B 64 "{$ev, \"count\": 1, \"fault\": \"status\", \"status\": 503, \"retry_after\": 1}" \
	0 ''
fault_case ev-429-zero $B 64 "{$ev, \"count\": 0, \"fault\": \"status\", \"status\": 429, \"retry_after\": 0}" \
	1 'HTTP 429.*asked to retry later'
fault_case ev-429-huge 20 64 "{$ev, \"count\": 0, \"fault\": \"status\", \"status\": 429, \"retry_after\": 99999999}" \
	1 'HTTP 429.*asked to retry later'
future=$(date -u -d '+3 sec' '+%a, %d %b %Y %H:%M:%S GMT')
fault_case ev-429-date $B 64 "{$ev, \"count\": 1, \"fault\": \"status\", \"status\": 429, \"retry_after\": \"$future\"}" \
	0 ''
# netdev's events only, 2 s a request, 5 s of retries: the pass still
# polls linux-pwm and works what it found
evn='"match": "/events/?project=netdev&", "method": "GET"'
fault_case ev-drip $B 64 "{$evn, \"count\": 0, \"fault\": \"drip\", \"ms\": 500}" \
	1 'did not answer in time' "$tmp/config.tight"
fault_case ev-hang $B 64 "{$evn, \"count\": 0, \"fault\": \"hang\", \"max_s\": 60}" \
	1 'did not answer in time' "$tmp/config.tight"
fault_case ev-truncate $B 64 "{$ev, \"count\": 0, \"fault\": \"truncate\"}" \
	1 'cannot reach.*(partial|closed|remaining)'
fault_case ev-huge $B 96 "{$ev, \"count\": 0, \"fault\": \"huge\", \"mib\": 300}" \
	1 'larger than 8388608 bytes'
fault_case ev-gzip $B 96 "{$ev, \"count\": 0, \"fault\": \"gzip\", \"mib\": 256}" \
	1 'larger than 8388608 bytes'
fault_case ev-malformed $B 64 "{$ev, \"count\": 0, \"fault\": \"body\", \"body\": \"[{\\\"id\\\": 1, \\\"category\\\": \"}" \
	1 'invalid JSON'
fault_case ev-nested $B 96 "{$ev, \"count\": 0, \"fault\": \"body\", \"nested\": 1000000}" \
	1 'invalid JSON'
fault_case ev-nul $B 64 "{$ev, $sc, \"count\": 0, \"fault\": \"edit\", \"key\": \"category\", \"raw\": \"\\\"series-completed\\\\u0000\\\"\"}" \
	0 ''
for odd in abc:'"abc"' neg:-1 1e308:1e308 null:null; do
	fault_case "ev-id-${odd%%:*}" $B 64 "{$ev, $sc, \"count\": 0, \"fault\": \"edit\", \"key\": \"id\", \"raw\": $("$py" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "${odd#*:}")}" \
		0 ''
done
# jansson refuses the page: no int64 holds it (nor a Patchwork id)
fault_case ev-id-2p63 $B 64 "{$ev, $sc, \"count\": 0, \"fault\": \"edit\", \"key\": \"id\", \"raw\": \"9223372036854775808\"}" \
	1 'invalid JSON.*too big integer'
fault_case ev-series-abc $B 64 "{$ev, $sc, \"count\": 0, \"fault\": \"edit\", \"key\": \"payload.series\", \"raw\": \"\\\"abc\\\"\"}" \
	0 ''
fault_case ev-redirect $B 64 "{$ev, \"count\": 0, \"fault\": \"redirect\", \"location\": \"{self}\"}" \
	1 'unexpected redirect'
fault_case ev-link-self $B 64 "{$ev, \"count\": 0, \"fault\": \"link\", \"target\": \"{self}\"}" \
	1 'a loop'
fault_case ev-link-other $B 64 "{$ev, \"count\": 0, \"fault\": \"link\", \"target\": \"http://127.0.0.1:$PW_PORT/api/1.3/events/?page=2\"}" \
	1 'pointed to another server'
fault_case ev-link-meta $B 64 "{$ev, \"count\": 0, \"fault\": \"link\", \"target\": \"http://169.254.169.254/latest/meta-data/\"}" \
	1 'pointed to another server'
fault_case series-500 $B 64 "{\"match\": \"/api/1.3/series/\", \"method\": \"GET\", \"count\": 0, \"fault\": \"status\", \"status\": 500}" \
	1 'answered HTTP 500' "$tmp/config.1try"
fault_case mbox-redirect-self $B 64 "{$mbox, \"count\": 0, \"fault\": \"redirect\", \"location\": \"{self}\"}" \
	1 'redirected more than'
fault_case mbox-redirect-port $B 64 "{$mbox, \"count\": 0, \"fault\": \"redirect\", \"location\": \"http://127.0.0.1:$PW_PORT/\"}" \
	1 'another origin'
fault_case mbox-redirect-meta $B 64 "{$mbox, \"count\": 0, \"fault\": \"redirect\", \"location\": \"http://169.254.169.254/latest/meta-data/\"}" \
	1 'another origin'
fault_case mbox-huge $B 320 "{$mbox, \"count\": 0, \"fault\": \"huge\", \"mib\": 300}" \
	1 'larger than 67108864 bytes'
fault_case check-503 $B 64 "{\"match\": \"/checks/\", \"method\": \"POST\", \"count\": 0, \"fault\": \"status\", \"status\": 503, \"retry_after\": 1}" \
	1 'no check was set.*HTTP 503'
fault_case check-drop $B 64 "{\"match\": \"/checks/\", \"method\": \"POST\", \"count\": 1, \"fault\": \"drop\"}" \
	0 ''
daemon_case daemon-hang "$tmp/config.slow" 64 "{$ev, \"count\": 0, \"fault\": \"hang\", \"max_s\": 100}" \
	1 1 ''
daemon_case daemon-503 "$tmp/config.slow" 64 "{$ev, \"count\": 0, \"fault\": \"status\", \"status\": 503, \"retry_after\": 30}" \
	1 1 ''

echo "---- cases (name, time, peak RSS, exit status, error) ----"
cat "$results"
echo "$n_xfail expected failures (XFAIL, bugs named above)"
echo "file runtime: $(($(date +%s) - T0)) s (reference pass ${REF_MS} ms, ${REF_RSS} KiB)"
finish
