#!/bin/bash
# test_awkward.sh - faults at the awkward moment, against the daemon
# (`patchtriage run`, not --once): Dovecot stopped while the bot is in
# the middle of fetching a folder of a few thousand mails (its last UID
# past the first batch, short of the end), then restarted.  The daemon
# must survive, log an error naming the IMAP server, and once Dovecot is
# back thread every mail exactly once (messages table), reach the end of
# the folder, and send no reply twice.
# Then the disk that fills *during* a run: a fresh state on a small
# tmpfs (when this may mount one; skipped otherwise), filled to the last
# byte while the daemon fetches, freed a few seconds later: the daemon
# survives or exits with an error naming the path, the database passes
# PRAGMA integrity_check, and a daemon then reads the folder to its end
# with every mail threaded once.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
. "$PT_SOURCE_DIR/tests/hostile/mailenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
nmail=${PT_AWKWARD_MAILS:-3000}
tmp=$(mktemp -d /tmp/pt-hawk.XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
t_start=$(date +%s)

hostile_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 4 >/dev/null || { echo "FAIL: series" >&2; exit 1; }
# the series, then nmail list mails (discussion, not patches) after them
mkdir -p "$tmp/bulk"
cp "$tmp"/series/mail/*.eml "$tmp/bulk/"
"$py" - "$tmp/bulk" "$nmail" <<'PYEOF'
import sys
out, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open("%s/9%06d.eml" % (out, i), "w") as f:
        f.write("From: List Reader %d <reader%d@example.com>\n"
                "To: netdev@vger.kernel.org\nList-Id: <netdev.vger.kernel.org>\n"
                "Subject: question %d about the driver\n"
                "Date: Wed, 06 Oct 2021 17:20:06 +0000\n"
                "Message-ID: <bulk-%d@example.com>\n\n"
                "Does this driver support the thing? %s\n" % (i, i, i, i, "x" * 2000))
PYEOF
nall=$(grep -l '^List-Id: <netdev' "$tmp"/bulk/*.eml | wc -l)
botenv_start "$tmp" patchwork || { echo "FAIL: servers" >&2; exit 1; }
# netdev only holds the bulk folder (series of other lists stay there)
rm -f "$DOVECOT_MAILDIR"/.netdev/new/* "$DOVECOT_MAILDIR"/.netdev/cur/*
mkdir -p "$tmp/netdev"
for f in $(grep -l '^List-Id: <netdev' "$tmp"/bulk/*.eml); do cp "$f" "$tmp/netdev/"; done
mail_deliver_dir "$tmp/netdev" netdev
cp -a "$tmp/t/state" "$tmp/st"
sql() { sqlite3 "$tmp/st/state.db" "$1" 2>/dev/null; }
imap_url="imap://127.0.0.1:$DOVECOT_IMAP_PORT"

"$PT_BIN" --state "$tmp/st" --config "$tmp/config" run \
	>"$tmp/daemon.out" 2>"$tmp/daemon.err" &
daemon=$!
# in the middle of the fetch: past the first batch, short of the end
for ((i = 0; i < 600; i++)); do
	last=$(sql "SELECT last_uid FROM imap_folders WHERE folder = 'netdev'")
	[ "${last:-0}" -gt 0 ] && break
	sleep 0.05
done
check "the daemon is fetching (last UID ${last:-0} of $nall)" \
	[ "${last:-0}" -gt 0 -a "${last:-0}" -lt "$nall" ]
stop_dovecot
echo "dovecot stopped at last UID $last of $nall"
for ((i = 0; i < 100; i++)); do
	grep -qiE "(error|warning).*imap" "$tmp/daemon.err" && break
	sleep 0.1
done
sleep 2
alive() { kill -0 "$daemon" 2>/dev/null; }
check "the daemon survives the stop" alive
grep -iE '(error|warning).*imap' "$tmp/daemon.err" | head -2 | cut -c1-240
check "it logs an error naming the IMAP server ($(grep -iE '(error|warning).*imap' "$tmp/daemon.err" | head -1 | cut -c1-200))" \
	grep -qE "(error|warning).*(imap.*127\.0\.0\.1:$DOVECOT_IMAP_PORT|$imap_url)" "$tmp/daemon.err"
restart_dovecot >/dev/null || { echo "FAIL: restart" >&2; exit 1; }
t0=$(date +%s)
for ((i = 0; i < 1200; i++)); do
	last=$(sql "SELECT last_uid FROM imap_folders WHERE folder = 'netdev'")
	n=$(sql "SELECT count(*) FROM messages WHERE list_id LIKE 'netdev%'")
	[ "${last:-0}" -ge "$nall" ] && [ "${n:-0}" -ge "$nall" ] && break
	sleep 0.1
done
echo "caught up in $(($(date +%s) - t0)) s: last UID $last, $n messages"
check "the daemon survives to the end" alive
check "the folder is read to its end ($last of $nall)" [ "${last:-0}" = "$nall" ]
kill -TERM "$daemon"
for ((i = 0; i < 100; i++)); do alive || break; sleep 0.1; done
wait "$daemon"
rc=$?
check "SIGTERM then stops it with exit 0 ($rc)" [ "$rc" = 0 ]
daemon=
n=$(sql "SELECT count(*) FROM messages WHERE list_id LIKE 'netdev%'")
check "every mail threaded once ($n of $nall)" [ "$n" = "$nall" ]
check "no bulk mail missing" [ "$(sql "SELECT count(*) FROM messages WHERE message_id LIKE 'bulk-%'")" = "$nmail" ]
check "no reply sent twice" "$py" -c 'import collections, email, glob, sys
c = collections.Counter(email.message_from_binary_file(open(f, "rb"))["Message-ID"]
                        for f in glob.glob(sys.argv[1] + "/new/*"))
sys.exit(1 if [k for k, v in c.items() if v > 1] else 0)' "$SMTP_MAILDIR"
check "nothing left intended or sending" \
	[ "$(sql "SELECT count(*) FROM outbox WHERE state IN ('intended', 'sending')")" = 0 ]

# ---- (b) the disk fills during the run -------------------------------
fs=$tmp/fs
mkdir -p "$fs"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=64m tmpfs "$fs" 2>/dev/null; then
	echo "SKIP (b): cannot mount a tmpfs here (not root or no mount); disk-full case not run"
else
	trap 'umount -l "$fs" 2>/dev/null; cleanup' EXIT
	cp -a "$tmp/t/state" "$fs/st"
	fsql() { sqlite3 "$fs/st/state.db" "$1" 2>/dev/null; }
	"$PT_BIN" --state "$fs/st" --config "$tmp/config" run \
		>"$tmp/d2.out" 2>"$tmp/d2.err" &
	daemon=$!
	for ((i = 0; i < 600; i++)); do
		last=$(fsql "SELECT last_uid FROM imap_folders WHERE folder = 'netdev'")
		[ "${last:-0}" -gt 0 ] && break
		sleep 0.05
	done
	avail=$(df -k --output=avail "$fs" | tail -1)
	fallocate -l "${avail}k" "$fs/filler" 2>/dev/null
	dd if=/dev/zero of="$fs/filler2" bs=4k 2>/dev/null
	echo "disk filled at last UID $last of $nall ($(df -k --output=avail "$fs" | tail -1) KiB left)"
	sleep 3
	if kill -0 "$daemon" 2>/dev/null; then
		echo "the daemon survived the full disk"
	else
		wait "$daemon"
		rc=$?
		echo "the daemon exited $rc on the full disk"
		check "it exits with an error naming the state path ($(grep -m1 -E 'error' "$tmp/d2.err" | cut -c1-200))" \
			grep -qE "error.*$fs/st" "$tmp/d2.err"
		daemon=
	fi
	grep -m2 -E '(error|warning).*(space|full|disk|write)' "$tmp/d2.err" | cut -c1-240
	rm -f "$fs/filler" "$fs/filler2"
	check "the database is intact after the full disk" \
		[ "$(sqlite3 "$fs/st/state.db" 'PRAGMA integrity_check')" = ok ]
	if [ -z "$daemon" ]; then
		"$PT_BIN" --state "$fs/st" --config "$tmp/config" run \
			>>"$tmp/d2.out" 2>>"$tmp/d2.err" &
		daemon=$!
	fi
	for ((i = 0; i < 1200; i++)); do
		last=$(fsql "SELECT last_uid FROM imap_folders WHERE folder = 'netdev'")
		n=$(fsql "SELECT count(*) FROM messages WHERE list_id LIKE 'netdev%'")
		[ "${last:-0}" -ge "$nall" ] && [ "${n:-0}" -ge "$nall" ] && break
		sleep 0.1
	done
	check "(b) the daemon is alive after space returns" alive
	kill -TERM "$daemon"
	for ((i = 0; i < 100; i++)); do alive || break; sleep 0.1; done
	wait "$daemon"
	daemon=
	n=$(fsql "SELECT count(*) FROM messages WHERE list_id LIKE 'netdev%'")
	check "(b) the folder is read to its end ($last of $nall)" [ "${last:-0}" = "$nall" ]
	check "(b) every mail threaded once ($n of $nall)" [ "$n" = "$nall" ]
	check "(b) the database is intact at the end" \
		[ "$(sqlite3 "$fs/st/state.db" 'PRAGMA integrity_check')" = ok ]
	check "(b) nothing left intended or sending" \
		[ "$(fsql "SELECT count(*) FROM outbox WHERE state IN ('intended', 'sending')")" = 0 ]
	umount -l "$fs"
fi
echo "test_awkward: $(($(date +%s) - t_start)) s"
finish
