#!/bin/bash
# test_control.sh - maintainers in control, end to end against Dovecot
# and the SMTP sink (tests/lib/botenv.sh), over the IMAP path: a
# "patchtriage: mute" from the series' author stops its reply; the same
# from a stranger is ignored, logged with who and why, and the reply
# goes out; "patchtriage: wrong" from the author is recorded with what
# the bot had said and shown by status and feedback; "mute-list" from a
# MAINTAINERS person stops replies in the subsystem (a new series too)
# until the subsystem's configuration changes, and from the author it is
# ignored; every command is acted on once, across passes; a Patchwork
# comment mutes as a list reply does, and the same mail read later over
# IMAP is not acted on twice.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-control.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" patchwork || { echo "FAIL: servers" >&2; exit 1; }
cp -r "$tmp/t/state" "$tmp/st"
# every series of an opted-in list is answered: the commands decide
sed -i 's/risk-threshold = 0.30/risk-threshold = 0.0/' "$tmp/config"
pt() { "$bin" --state "$tmp/st" --config "$tmp/config" "$@"; }
sql() { sqlite3 "$tmp/st/state.db" "$1"; }

# Which series the bot would answer, from a dry run: lines
# "LIST ROOT AUTHOR TARGET" (the thread root, the patch it answers).
"$bin" --state "$tmp/st" --config "$tmp/config" run --once --dry-run \
	>"$tmp/dry.out" 2>"$tmp/dry.err"
check "dry run exits 0 ($(tail -2 "$tmp/dry.err"))" [ $? = 0 ]
"$py" - "$tmp/series/mail" "$tmp/dry.out" >"$tmp/replied" <<'PY'
import email, glob, re, sys
parent, info = {}, {}
for f in glob.glob(sys.argv[1] + "/*.eml"):
    m = email.message_from_file(open(f))
    mid = m["Message-ID"].strip("<>")
    parent[mid] = (m["In-Reply-To"] or "").strip("<>") or None
    lst = re.sub(r".*<([^.>]*)\..*", r"\1", m["List-Id"] or "")
    info[mid] = (lst, email.utils.parseaddr(m["From"])[1].lower(),
                 m["Subject"] or "")
def root(mid):
    while parent.get(mid):
        mid = parent[mid]
    return mid
seen = set()
for t in re.findall(r"^In-Reply-To: <([^>]*)>", open(sys.argv[2]).read(), re.M):
    r = root(t)
    if r in seen or "[PATCH" not in info[r][2]:
        continue
    seen.add(r)
    print(info[r][0], r, info[r][1], t)
PY
n_net=$(grep -c '^netdev ' "$tmp/replied")
n_pwm=$(grep -c '^linux-pwm ' "$tmp/replied")
check "the dry run answers 3 netdev and 1 pwm series ($n_net, $n_pwm)" \
	[ "$n_net" -ge 3 -a "$n_pwm" -ge 1 ]
read -r _ rootA authA targA < <(grep '^netdev ' "$tmp/replied" | sed -n 1p)
read -r _ rootB authB targB < <(grep '^netdev ' "$tmp/replied" | sed -n 2p)
read -r _ rootC authC targC < <(grep '^netdev ' "$tmp/replied" | sed -n 3p)
read -r _ rootP authP targP < <(grep '^linux-pwm ' "$tmp/replied" | sed -n 1p)
# the pwm maintainer (M:) of the test tree's MAINTAINERS
maintP=$(awk '/^M:/ {m = $NF} /^F:\tdrivers\/pwm/ {print m; exit}' \
	"$tmp/t/linux/MAINTAINERS" | tr -d '<>')
check "the tree names a pwm maintainer ($maintP)" [ -n "$maintP" ]

n_cmd=0
say() { # FROM LIST TARGET BODY
	n_cmd=$((n_cmd + 1))
	printf 'From: Someone <%s>\nTo: %s@vger.kernel.org\nSubject: Re: x\nDate: %s\nMessage-ID: <cmd-%d@test.example>\nIn-Reply-To: <%s>\nReferences: <%s>\nList-Id: <%s.vger.kernel.org>\n\n%b\n' \
		"$1" "$2" "$(date -R)" "$n_cmd" "$3" "$3" "$2" "$4" \
		>"$tmp/cmd-$n_cmd.eml"
	mail_deliver "$tmp/cmd-$n_cmd.eml" "$2"
}
replied_to() { # ROOT: mails in the sink answering a message of that series
	"$py" - "$SMTP_MAILDIR" "$tmp/series/mail" "$1" <<'PY'
import email, glob, sys
parent = {}
for f in glob.glob(sys.argv[2] + "/*.eml") + glob.glob(sys.argv[2] + "/../../new-*.eml"):
    m = email.message_from_file(open(f))
    parent[m["Message-ID"].strip("<>")] = (m["In-Reply-To"] or "").strip("<>") or None
n = 0
for f in glob.glob(sys.argv[1] + "/new/*"):
    t = email.message_from_file(open(f))["In-Reply-To"].strip("<>")
    while parent.get(t):
        t = parent[t]
    n += t == sys.argv[3]
print(n)
PY
}
to_list() { # LIST: sent mails Cc'd to the list
	grep -l "^Cc:.*$1@vger.kernel.org" "$SMTP_MAILDIR"/new/* 2>/dev/null | wc -l
}

# ---- commands before the first pass ----------------------------------
say "$authA" netdev "$targA" '> patchtriage: wrong\nNo thanks.\n\n  PatchTriage : MUTE  '
say stranger@elsewhere.example netdev "$targB" 'patchtriage: mute'
say "$authB" netdev "$targB" 'patchtriage: mute-list'
say "$maintP" linux-pwm "$targP" 'Not on this list, please.\npatchtriage: mute-list\n-- \npatchtriage: wrong'
pt run --once >"$tmp/run1.out" 2>"$tmp/run1.err"
check "first pass exits 0 ($(tail -2 "$tmp/run1.err"))" [ $? = 0 ]
check "the author's mute stops the reply on A" [ "$(replied_to "$rootA")" = 0 ]
check "the stranger's mute is ignored: B gets its reply" [ "$(replied_to "$rootB")" -ge 1 ]
check "the stranger's mute is logged with who and why" \
	grep -q "command 'patchtriage: mute' from stranger@elsewhere.example in <cmd-2@test.example> (imap) ignored: neither an author" "$tmp/run1.err"
check "mute-list from an author is ignored" \
	grep -q "command 'patchtriage: mute-list' from $authB .* ignored: mute-list needs a maintainer" "$tmp/run1.err"
check "the maintainer's mute-list stops pwm replies" [ "$(to_list linux-pwm)" = 0 ]
check "netdev replies still go out" [ "$(to_list netdev)" -ge 1 ]
check "quoted and signature commands are not taken" \
	[ "$(sql "SELECT count(*) FROM control_commands WHERE command = 'wrong'")" = 0 ]
check "the run summary counts the muted replies" \
	grep -Eq 'rate limited, [1-9][0-9]* muted' "$tmp/run1.err"
check "four commands recorded, two acted on" \
	[ "$(sql "SELECT group_concat(command || ':' || state, ' ') FROM (SELECT * FROM control_commands ORDER BY message_id)")" = "mute:acted mute:ignored mute-list:ignored mute-list:acted" ]

# ---- wrong, after the reply; a second pass acts on nothing twice ------
say "$authC" netdev "$targC" 'patchtriage: wrong'
pt run --once >/dev/null 2>"$tmp/run2.err"
check "second pass exits 0" [ $? = 0 ]
check "wrong is recorded with what the bot said" \
	[ "$(sql "SELECT count(*) FROM control_commands WHERE command = 'wrong' AND state = 'acted' AND detail LIKE '%reply (model %'")" = 1 ]
check "no command is taken twice" [ "$(grep -c "command 'patchtriage" "$tmp/run2.err")" = 1 ]
check "five commands in all" [ "$(sql 'SELECT count(*) FROM control_commands')" = 5 ]
pt status --json >"$tmp/status.json"
check "status --json: muted series, muted list, wrong count" "$py" -c 'import json, sys
s = json.load(open(sys.argv[1]))
assert [m["series"] for m in s["muted_series"]] == [sys.argv[2]], s["muted_series"]
assert [m["subsystem"] for m in s["muted_lists"]] == ["pwm"], s["muted_lists"]
assert s["wrong_verdicts"] == 1, s["wrong_verdicts"]' "$tmp/status.json" "$rootA"
expect_out '^wrong verdicts: 1' pt status
expect_out "^  pwm by $maintP" pt status
expect_out "^  <$rootA> by $authA \\(netdev\\)" pt status
expect_out "$authC  series <$rootC> \\(netdev\\)" pt feedback
check "feedback --json" "$py" -c 'import json, sys
f = json.load(open(sys.argv[1]))
assert len(f) == 1 and f[0]["who"] == sys.argv[2] and "reply" in f[0]["said"], f' \
	<(pt feedback --json) "$authC"

# ---- a new pwm series: still muted; a config change lifts it ---------
newseries() { # TAG: a copy of series P under new Message-IDs, delivered
	local f
	for f in "$tmp"/series/mail/*.eml; do
		grep -q '^List-Id: <linux-pwm' "$f" || continue
		grep -qi '^Subject: Re:' "$f" && continue
		sed "s/@example\.\(com\|org\|net\)>/@$1.example.\1>/g" "$f" >"$tmp/new-$1-$(basename "$f")"
		mail_deliver "$tmp/new-$1-$(basename "$f")" linux-pwm
	done
}
newseries n1
pt run --once >/dev/null 2>"$tmp/run3.err"
check "a new pwm series while muted: no reply" [ "$(to_list linux-pwm)" = 0 ]
sed -i '/^\[subsystem "pwm"\]/,/^\[/ s/rate-limit = 1000/rate-limit = 999/' "$tmp/config"
newseries n2
pt run --once >/dev/null 2>"$tmp/run4.err"
check "the config change lifts the mute-list" \
	grep -q "subsystem 'pwm': its configuration changed, 1 mute-list lifted" "$tmp/run4.err"
check "the next pwm series gets replies" [ "$(to_list linux-pwm)" -ge 1 ]
check "status shows no muted list" "$py" -c 'import json, sys
assert json.load(open(sys.argv[1]))["muted_lists"] == []' <(pt status --json)
check "the muted series stays muted" [ "$(replied_to "$rootA")" = 0 ]

# ---- the Patchwork path: a comment mutes; IMAP later adds nothing ----
cp -r "$tmp/t/state" "$tmp/st2"
awk -v port="$PW_PORT" -v tok="$tmp/pw-token" '
	BEGIN { print "[patchwork]\n\turl = http://127.0.0.1:" port \
		"\n\tproject = netdev\n\ttoken-file = " tok }
	/^\[/ { skip = ($0 == "[imap]") }
	!skip' "$tmp/config" >"$tmp/config-pw"
pt2() { "$bin" --state "$tmp/st2" --config "$tmp/config-pw" "$@"; }
say "$authB" netdev "$targB" 'patchtriage: mute'
pwcmd=cmd-$n_cmd@test.example
"$py" -c 'import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/__control__", method="POST",
    data=json.dumps({"import": open(sys.argv[2]).read()}).encode(),
    headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=10).read()' "http://127.0.0.1:$PW_PORT" "$tmp/cmd-$n_cmd.eml"
b0=$(replied_to "$rootB")
c0=$(replied_to "$rootC")
pt2 run --once >/dev/null 2>"$tmp/pw1.err"
check "Patchwork pass exits 0 ($(tail -2 "$tmp/pw1.err"))" [ $? = 0 ]
check "the author's comment mutes B" [ "$(replied_to "$rootB")" = "$b0" ]
check "C gets its reply on the Patchwork path" [ "$(replied_to "$rootC")" -gt "$c0" ]
check "the comment is recorded from Patchwork" \
	[ "$(sqlite3 "$tmp/st2/state.db" "SELECT source || ':' || state || ':' || series_key FROM control_commands WHERE message_id = '$pwcmd'")" = "patchwork:acted:$rootB" ]
# both sources: the same mail read over IMAP is not acted on again
awk -v port="$PW_PORT" -v tok="$tmp/pw-token" '
	BEGIN { print "[patchwork]\n\turl = http://127.0.0.1:" port \
		"\n\tproject = netdev\n\ttoken-file = " tok }' >"$tmp/config-both"
cat "$tmp/config" >>"$tmp/config-both"
"$bin" --state "$tmp/st2" --config "$tmp/config-both" run --once >/dev/null 2>"$tmp/pw2.err"
check "a pass with both sources exits 0 ($(tail -2 "$tmp/pw2.err"))" [ $? = 0 ]
check "the IMAP copy of the comment is not taken again" \
	[ "$(sqlite3 "$tmp/st2/state.db" "SELECT count(*) FROM control_commands WHERE message_id = '$pwcmd'")" = 1 ]
check "nor logged again" [ -z "$(grep "<$pwcmd>" "$tmp/pw2.err")" ]
check "B still gets no reply" [ "$(replied_to "$rootB")" = "$b0" ]
finish
