#!/bin/bash
# test_run_first.sh - the first start of `patchtriage run` on IMAP
# folders that hold mail already, against a real Dovecot
# (tests/lib/botenv.sh, IMAP only): a folder's first sync takes only mail
# that arrived (INTERNALDATE) since run.since (default: now), records the
# folder's end as its position, and later syncs take what comes after.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
bin=$PT_BIN
tmp=$(mktemp -d /tmp/pt-first.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

botenv_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 12 || { echo "FAIL: series" >&2; exit 1; }
botenv_start "$tmp" patchwork || { echo "FAIL: servers" >&2; exit 1; }
# The folders' mail arrived two days ago: Dovecot's Maildir takes a
# message's INTERNALDATE from its file's time, read when first indexed
# (no client has opened the folders yet).
find "$DOVECOT_MAILDIR" -type f \( -path '*/new/*' -o -path '*/cur/*' \) \
	-exec touch -d '2 days ago' {} +
n_old=$(find "$DOVECOT_MAILDIR" -type f \( -path '*/new/*' -o -path '*/cur/*' \) | wc -l)
grep -Ev '^[[:space:]]*since = ' "$tmp/config" >"$tmp/now.conf"
pt() { # STATE CONFIG ARGS...
	local st=$1 cf=$2
	shift 2
	"$bin" --state "$tmp/$st" --config "$tmp/$cf" "$@"
}
sql() { sqlite3 "$tmp/$1/state.db" "$2"; }
mails() { sed -n 's/^run: [0-9]* events, \([0-9]*\) mails.*/\1/p' "$1"; }

# ---- a first start reads no backlog ----------------------------------
cp -r "$tmp/t/state" "$tmp/st-a"
pt st-a now.conf run --once >/dev/null 2>"$tmp/a1.err"
rc=$?; check "a first start exits 0 ($(tail -1 "$tmp/a1.err"))" [ $rc = 0 ]
check "it reads none of the $n_old old mails ($(mails "$tmp/a1.err"))" \
	[ "$(mails "$tmp/a1.err")" = 0 ]
check "the log says they were left" \
	grep -q "imap: $n_old messages older than run.since left on first syncs" "$tmp/a1.err"
check "each folder's position is its end" \
	[ "$(sql st-a 'SELECT sum(last_uid) FROM imap_folders')" = "$n_old" ]

# ---- new mail: the next sync takes it, and only it -------------------
fix=$(grep -l '^List-Id: <netdev' "$tmp"/series/mail/*.eml | xargs grep -l 'Subject: .*fix' | head -1)
key=$(sed -n 's/^Message-ID: <\([^.]*\)\..*/\1/p' "$fix")
n_new=0
for f in "$tmp"/series/mail/*.eml; do
	grep -q "^Message-ID: <$key\." "$f" || continue
	sed "s/@example\.\(com\|org\|net\)>/@new.example.\1>/g" "$f" >"$tmp/new-$(basename "$f")"
	mail_deliver "$tmp/new-$(basename "$f")" netdev
	n_new=$((n_new + 1))
done
check "a new series was delivered ($n_new mails)" [ "$n_new" -gt 0 ]
pt st-a now.conf run --once >/dev/null 2>"$tmp/a2.err"
rc=$?; check "the next pass exits 0 ($(tail -1 "$tmp/a2.err"))" [ $rc = 0 ]
check "it reads the new mail only ($(mails "$tmp/a2.err") of $n_new)" \
	[ "$(mails "$tmp/a2.err")" = "$n_new" ]
check "and scores the new series" \
	grep -Eq '^run: 0 events, [0-9]+ mails, [1-9][0-9]* series scored' "$tmp/a2.err"

# ---- run.since between the old and the new mail ----------------------
# A fresh state whose run.since is a day ago: the folder holds mail of
# two days ago and of now; the first start takes only the new.
since=$(date -u -d '1 day ago' +%Y-%m-%dT%H:%M:%S)
sed "s/^\([[:space:]]*\)since = .*/\1since = $since/" "$tmp/config" >"$tmp/day.conf"
check "the configuration sets run.since" grep -q "since = $since" "$tmp/day.conf"
cp -r "$tmp/t/state" "$tmp/st-b"
pt st-b day.conf run --once >/dev/null 2>"$tmp/b1.err"
rc=$?; check "a first start since yesterday exits 0 ($(tail -1 "$tmp/b1.err"))" [ $rc = 0 ]
check "it reads the new mail only ($(mails "$tmp/b1.err") of $n_new)" \
	[ "$(mails "$tmp/b1.err")" = "$n_new" ]
check "the new series is threaded, the old are not" \
	[ "$(sql st-b 'SELECT count(*) FROM messages')" = "$n_new" ]

# ---- run.since reaching back: the whole folder ------------------------
cp -r "$tmp/t/state" "$tmp/st-c"
pt st-c config run --once >/dev/null 2>"$tmp/c1.err"
check "run.since years back reads every mail ($(mails "$tmp/c1.err"))" \
	[ "$(mails "$tmp/c1.err")" = $((n_old + n_new)) ]

# ---- a bad run.since is named ----------------------------------------
sed "s/^\([[:space:]]*\)since = .*/\1since = yesterday/" "$tmp/config" >"$tmp/bad.conf"
expect_err "run.since 'yesterday' is not a date" pt st-c bad.conf run --once
finish
