#!/bin/bash
# test_real_patchwork.sh - the bot against a real Patchwork 3.1.3 on real
# list mail: Patchwork's own source (tag v3.1.3), Debian's Django, SQLite,
# set up by ../shared/tools/real-patchwork on loopback, loaded with the
# linux-pwm 2024 archive (../shared/corpora) by Patchwork's parsearchive.
#
#  A. defaults (check.max-age 14 days, reply.max-age 3): a first
#     `run --once` after importing the year-old archive posts no check and
#     sends no mail, with run.since as its default (now) and with run.since
#     just before the import (the bot was running while it happened: every
#     event is seen, every series is read and skipped for age).
#  B. ages opened wide, run.since before the archive (with a zone suffix,
#     which the real server answers 500 to unless the bot drops it): every
#     patch of every complete series gets its patchtriage-risk check, and
#     with run.series-wait 1 s so does every patch of a series that never
#     completes; none twice; a second pass posts and sends nothing; the
#     token is in no log.
#
# Skips (77) without the Patchwork source (PATCHTRIAGE_PATCHWORK_TREE, a
# work tree at v3.1.3, else the bare mirror ../.mirror/getpatchwork+
# patchwork/repo beside ../shared), the setup tool, the corpus or Debian's
# python3-django / -djangorestframework / -django-filters (it does not
# install them: run ../shared/tools/real-patchwork once for that).
# PATCHTRIAGE_PW_MESSAGES: how many messages of the corpus to load (default
# 1200, about a third of it: the whole 3,879 take 7 minutes to import on a
# loaded machine; 0 loads all).
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"

py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
lib=$PT_SOURCE_DIR/tests/lib
shared=${PT_SHARED_DIR:-$PT_SOURCE_DIR/../shared}
tool=$shared/tools/real-patchwork
corpus=$shared/corpora/linux-pwm-2024.mboxrd.gz
mirror=$shared/../.mirror/getpatchwork+patchwork/repo
nmsg=${PATCHTRIAGE_PW_MESSAGES:-1200}

[ -f "$tool" ] || skip "no $tool"
[ -f "$corpus" ] || skip "no $corpus"
"$py" -c 'import django, rest_framework, django_filters' 2>/dev/null ||
	skip "Debian's Django packages are not installed (see $tool)"
tree=${PATCHTRIAGE_PATCHWORK_TREE:-}
if [ -n "$tree" ]; then
	[ -f "$tree/manage.py" ] || skip "PATCHTRIAGE_PATCHWORK_TREE=$tree: no manage.py"
elif [ ! -d "$mirror" ]; then
	skip "no Patchwork source (PATCHTRIAGE_PATCHWORK_TREE or $mirror)"
fi

pt_tmpdir
T=$PT_TMP
PWPID=
shm=
cleanup() {
	if [ -n "$PWPID" ]; then
		kill "$PWPID" 2>/dev/null
		wait "$PWPID" 2>/dev/null
	fi
	botenv_stop
	[ -n "$shm" ] && rm -rf "$shm"
	rm -rf "$T"
}
trap cleanup EXIT

if [ -z "$tree" ]; then
	tree=$T/patchwork
	git clone -q "$mirror" "$tree" && git -C "$tree" checkout -q v3.1.3 ||
		skip "cannot check out v3.1.3 from $mirror"
fi
# the SQLite file in memory when there is a /dev/shm: parsearchive
# commits every message, and a disk's syncs would triple its time
data=$T/pwdata
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm=$(mktemp -d /dev/shm/pt-realpw.XXXXXX) || exit 1
	data=$shm
	ln -s "$data" "$T/pwdata"
fi
bash "$tool" "$tree" "$data" >"$T/setup.log" 2>&1 ||
	{ cat "$T/setup.log" >&2; fail "real-patchwork set-up"; exit 1; }
token=$(cat "$data/pw-token")
[ -n "$token" ] || { fail "no token from the set-up"; exit 1; }

export DJANGO_SETTINGS_MODULE=patchwork.settings.ptsqlite
export PW_SQLITE_DB=$data/patchwork.sqlite3
pw_manage() { (cd "$tree" && exec "$py" manage.py "$@"); }

# runserver on a free loopback port (retried when another test takes it)
for attempt in 1 2 3; do
	port=$(ms_free_port)
	# not through pw_manage: one subshell, that exec makes Python
	# itself, so that $! is runserver's pid, for the kill
	(cd "$tree" && exec "$py" manage.py runserver "127.0.0.1:$port" \
		--noreload) >"$T/server.log" 2>&1 &
	PWPID=$!
	url=http://127.0.0.1:$port
	for ((i = 0; i < 600; i++)); do
		curl -sf -o /dev/null "$url/api/1.3/" && break
		kill -0 "$PWPID" 2>/dev/null || break
		sleep 0.1
	done
	curl -sf -o /dev/null "$url/api/1.3/" && break
	kill "$PWPID" 2>/dev/null
	wait "$PWPID" 2>/dev/null
	PWPID=
done
[ -n "$PWPID" ] || { cat "$T/server.log" >&2; fail "runserver"; exit 1; }

# the bot's world: trained models, the SMTP sink
botenv_models "$T" || { fail "trained models"; exit 1; }
start_smtp "$T/smtp" --tls starttls >/dev/null || { fail "SMTP sink"; exit 1; }
sent() { find "$SMTP_MAILDIR/new" -type f 2>/dev/null | wc -l; }

# the import: run.since of case A2 is the moment before it
before_import=$(date -u +%Y-%m-%dT%H:%M:%S)
sleep 1
loaded=$("$py" "$lib/realpw.py" subset "$corpus" "$nmsg" "$T/corpus.mbox") ||
	{ fail "corpus subset"; exit 1; }
t0=$(date +%s)
pw_manage parsearchive --list-id=linux-pwm.vger.kernel.org \
	"$T/corpus.mbox" >"$T/parse.log" 2>&1 || {
	tail -20 "$T/parse.log" >&2
	fail "parsearchive"
	exit 1
}
import_s=$(($(date +%s) - t0))
count() { "$py" "$lib/realpw.py" counts "$url" linux-pwm; }
jget() { # JSON KEY.KEY: the value (a list's length; 0 when absent)
	"$py" -c 'import json, sys
d = json.loads(sys.argv[1])
for k in sys.argv[2].split("."):
    d = d.get(k, 0) if isinstance(d, dict) else d
print(len(d) if isinstance(d, list) else d)' "$1" "$2"
}
c0=$(count) || { fail "counting the import"; exit 1; }
echo "imported $loaded messages in ${import_s}s:" \
	"$(jget "$c0" patches) patches," \
	"$(jget "$c0" series_complete) complete series" \
	"($(jget "$c0" patches_in_complete) patches)," \
	"$(jget "$c0" series_incomplete) never complete" \
	"($(jget "$c0" patches_in_incomplete) patches)," \
	"$(jget "$c0" events) events"
[ "$(jget "$c0" patches)" -gt 0 ] || fail "parsearchive stored no patch"

# config NAME SINCE AGES: T/NAME.conf for the bot on this server (pwm
# opted in; AGES wide or default) and a fresh state T/NAME with the models
config() {
	{
		cat <<EOF
[patchwork]
	url = $url
	project = linux-pwm
	token-file = $data/pw-token
	max-attempts = 3
	backoff-ms = 50
[smtp]
	url = smtp://127.0.0.1:$SMTP_PORT
	ca-file = $SMTP_CA
[reply]
	from = patchtriage <bot@example.org>
	contact = maintainers@example.org
	templates = $PT_SOURCE_DIR/templates
EOF
		[ "$3" = wide ] && printf '\tmax-age = 36500\n[check]\n\tmax-age = 36500\n'
		cat <<EOF
[policy]
	maintainers-file = $T/t/linux/MAINTAINERS
[mail]
	sentiment-file = $PT_SOURCE_DIR/conf/sentiment.txt
[run]
	repo = $T/t/linux
	poll-interval = 1
EOF
		[ -n "$2" ] && printf '\tsince = %s\n' "$2"
		# a series that never completes is scored after this wait
		[ "$3" = wide ] && printf '\tseries-wait = 1\n'
		cat <<EOF
[subsystem "pwm"]
	list-id = linux-pwm.vger.kernel.org
	list = linux-pwm@vger.kernel.org
	patchwork-project = linux-pwm
	paths = drivers/pwm/*
	actions = check reply
	risk-threshold = 0.30
	stable-threshold = 0.50
	recipients = author list
	rate-limit = 100000
EOF
	} >"$T/$1.conf"
	rm -rf "${T:?}/$1"
	cp -a "$T/t/state" "$T/$1"
}
# once NAME: one `run --once` of state T/NAME; its stderr in T/NAME.N.log
once() {
	local n=1
	while [ -e "$T/$1.$n.log" ]; do n=$((n + 1)); done
	last_log=$T/$1.$n.log
	"$bin" --config "$T/$1.conf" --state "$T/$1" run --once \
		>"$last_log" 2>&1 || {
		tail -20 "$last_log" >&2
		fail "$1: run --once #$n exited non-zero"
	}
}
summary() { grep '^run: ' "$last_log" | tail -1; }
skipped() { # STATE: "checks replies" skipped for age
	"$bin" --state "$T/$1" status --json | "$py" -c 'import json, sys
d = json.load(sys.stdin)["skipped_for_age"]
print(d["checks"], d["replies"])'
}

# A1: defaults, a first start after the import
config a1 "" default
sent0=$(sent)
once a1
pt_checks=$((pt_checks + 1))
summary | grep -q 'checks: 0 posted.*replies: 0 sent' ||
	fail "A1 acted: $(summary)"
echo "A1 (defaults, run.since now): $(summary)"

# A2: defaults, the bot saw the whole import
config a2 "$before_import" default
once a2
c1=$(count)
read -r old_checks old_replies <<<"$(skipped a2)"
pt_checks=$((pt_checks + 1))
[ "$(jget "$c1" checks.patchtriage-risk)" = 0 ] ||
	fail "A2 posted checks on a year-old archive: $(summary)"
pt_checks=$((pt_checks + 1))
[ "$(sent)" = "$sent0" ] || fail "A2 sent $(($(sent) - sent0)) mails"
pt_checks=$((pt_checks + 1))
[ "$old_checks" -gt 0 ] || fail "A2 reports no check skipped for age"
echo "A2 (defaults, run.since before the import): $(summary);" \
	"skipped for age: $old_checks checks, $old_replies replies"
grep -q 'older than check.max-age' "$last_log" ||
	fail "A2 logged no check skipped for age"

# B: ages wide, run.since before the archive, in the Z form Patchwork
# answers 500 to when it is sent as it is
config b "2000-01-01T00:00:00Z" wide
t0=$(date +%s)
once b
pass_s=$(($(date +%s) - t0))
first=$(summary)
c2=$(count)
mails=$(($(sent) - sent0))
risk=$(jget "$c2" checks.patchtriage-risk)
stable=$(jget "$c2" checks.patchtriage-stable)
missing=$(jget "$c2" complete_without_risk_check)
pt_checks=$((pt_checks + 1))
[ "$missing" = 0 ] || fail "B: $missing patches of complete series have no" \
	"patchtriage-risk check: $("$py" -c 'import json, sys
print(json.loads(sys.argv[1])["complete_without_risk_check"][:20])' "$c2")"
pt_checks=$((pt_checks + 1))
inc_missing=$("$py" -c 'import json, sys
print(len(json.loads(sys.argv[1])["incomplete_without_risk_check"]))' "$c2")
[ "$inc_missing" = 0 ] || fail "B: $inc_missing patches of series that" \
	"never completed have no patchtriage-risk check (run.series-wait 1 s)"
pt_checks=$((pt_checks + 1))
[ "$(jget "$c2" duplicate_checks)" = 0 ] ||
	fail "B: $(jget "$c2" duplicate_checks) checks posted twice"
pt_checks=$((pt_checks + 1))
[ "$mails" -gt 0 ] || fail "B sent no reply"
grep -q 'answered HTTP 500' "$last_log" && fail "B: the server answered 500"
echo "B (ages wide): $first (${pass_s}s)"
once b
second=$(summary)
c3=$(count)
pt_checks=$((pt_checks + 1))
echo "$second" | grep -q 'checks: 0 posted.*replies: 0 sent' ||
	fail "second pass acted: $second"
pt_checks=$((pt_checks + 1))
[ "$(jget "$c3" checks.patchtriage-risk)" = "$risk" ] ||
	fail "second pass posted checks"
pt_checks=$((pt_checks + 1))
[ "$(($(sent) - sent0))" = "$mails" ] || fail "second pass sent mail"
echo "B second pass: $second"
pt_checks=$((pt_checks + 1))
if grep -rlF "$token" "$T"/*.log "$T/server.log" >/dev/null 2>&1; then
	fail "the token is in a log: $(grep -rlF "$token" "$T"/*.log)"
fi

echo "counts: messages $loaded, patches $(jget "$c0" patches)," \
	"events $(jget "$c3" events), checks posted: risk $risk, stable" \
	"$stable (on $(jget "$c2" patches_in_complete) patches of" \
	"$(jget "$c2" series_complete) complete series), replies $mails," \
	"skipped for age (defaults): $old_checks checks, $old_replies" \
	"replies; never complete: $(jget "$c0" series_incomplete) series," \
	"$(jget "$c0" patches_in_incomplete) patches, $inc_missing of them" \
	"without a risk check"
finish
