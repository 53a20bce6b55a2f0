#!/bin/bash
# test_mail_crafted.sh - crafted list mail read over IMAP (a real Dovecot)
# and answered through the SMTP sink: CR/LF and RFC 2047-encoded CRLF in
# the Subject, the From display name, To and Cc, a raw CR in
# Message-ID/References/In-Reply-To, U+2028/U+2029, a NUL byte, a 100 KB
# Subject, 10,000 References and `{{ }}` in fields.  Each is a one-patch
# netdev series (made from one mkseries.py mail).  Asserts: a bounded
# pass (time, peak RSS); every reply parses into one logical line per
# header, with only the headers the bot writes, no Bcc and no injected
# recipient in the envelope, References bounded, no template expansion
# of the user's text; every crafted mail was read (the folder's last UID
# is the newest) and either threaded or answered, and a second pass sends
# nothing again.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
. "$PT_SOURCE_DIR/tests/lib/botenv.sh"
. "$PT_SOURCE_DIR/tests/hostile/mailenv.sh"
py=${PT_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d /tmp/pt-hcraft.XXXXXX)
cleanup() {
	botenv_stop
	[ -n "${PT_KEEP_TMP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
t_start=$(date +%s)

hostile_models "$tmp" || { echo "FAIL: models" >&2; exit 1; }
botenv_series "$tmp" 1 >/dev/null || { echo "FAIL: series" >&2; exit 1; }
base=$(grep -l '^List-Id: <netdev' "$tmp"/series/mail/*.eml | head -1)
mkdir -p "$tmp/crafted"
"$py" - "$base" "$tmp/crafted" <<'PYEOF'
import sys
base, out = sys.argv[1], sys.argv[2]
raw = open(base, "rb").read()
head, body = raw.split(b"\n\n", 1)
hdrs = [l for l in head.split(b"\n") if not l.lower().startswith(
    (b"message-id:", b"subject:", b"from:", b"to:", b"cc:"))]
E = "=?utf-8?q?a=0D=0ABcc:_evil@x?="
cases = {
    "subj-crlf-encoded": {"Subject": "[PATCH] " + E},
    "subj-crlf-raw": {"Subject": "[PATCH] a\r\nBcc: evil@x"},
    "from-crlf-encoded": {"From": "=?utf-8?q?Eve=0D=0ABcc:_evil@x?= <fran@example.com>"},
    "to-cc-crlf-encoded": {"To": "=?utf-8?q?L=0D=0ABcc:_evil@x?= <netdev@vger.kernel.org>",
                            "Cc": E + " <kuba@kernel.org>"},
    "msgid-cr": {"Message-ID": "<crafted-cr\r@example.com>"},
    "refs-crlf": {"In-Reply-To": "<x@y>\r\nBcc: evil@x",
                  "References": "<x@y> =?utf-8?q?=0D=0ABcc:_evil@x?="},
    "u2028": {"Subject": "[PATCH] line\u2028sep\u2029para"},
    "nul": {"Subject": "[PATCH] nul\0byte"},
    "subj-100k": {"Subject": "[PATCH] " + "x" * 102400},
    "subj-100k-words": {"Subject": "[PATCH] " + "ab " * 34000},
    "refs-10000": {"References": " ".join("<r%d@example.com>" % i
                                          for i in range(10000))},
    "braces": {"Subject": "[PATCH] {{contact}} {{#each reasons}}x{{/each}} }}",
               "From": "\"{{author_first}} {{contact}}\" <fran@example.com>"},
}
for i, (name, h) in enumerate(sorted(cases.items())):
    h = dict(h)
    h.setdefault("Message-ID", "<crafted-%s@example.com>" % name)
    h.setdefault("Subject", "[PATCH] foo: crafted %s" % name)
    h.setdefault("From", "Frances Allen <fran@example.com>")
    h.setdefault("To", "netdev@vger.kernel.org")
    lines = list(hdrs)
    for k, v in h.items():
        lines.append(k.encode() + b": " + v.encode("utf-8"))
    with open("%s/%02d-%s.eml" % (out, i, name), "wb") as f:
        f.write(b"\n".join(lines) + b"\n\n" + body)
PYEOF
botenv_start "$tmp" patchwork || { echo "FAIL: servers" >&2; exit 1; }
rm -f "$DOVECOT_MAILDIR"/.netdev/new/* "$DOVECOT_MAILDIR"/.netdev/cur/*
mail_deliver_dir "$tmp/crafted" netdev
ncrafted=$(ls "$tmp/crafted" | wc -l)
sed -i 's|risk-threshold = 0.30|risk-threshold = 0.0|' "$tmp/config"
cp -a "$tmp/t/state" "$tmp/st"
sql() { sqlite3 "$tmp/st/state.db" "$1"; }
limit=$(rss_limit)

bounded 120 "$tmp/out1" "$tmp/err1" "$PT_BIN" --state "$tmp/st" \
	--config "$tmp/config" run --once
echo "pass 1: exit $B_RC, ${B_SECS}s, peak RSS $B_RSS KiB"
grep -E 'error|warning' "$tmp/err1" | cut -c1-200 | head -20
check "the pass is not killed or crashed (exit $B_RC)" [ "$B_RC" -le 1 ]
check "within 120 s (${B_SECS}s)" [ "$B_RC" != 124 ]
check "peak RSS $B_RSS KiB <= $limit" [ "$B_RSS" -le "$limit" ]
no_san() { ! grep -q Sanitizer "$@"; }
check "no sanitizer report" no_san "$tmp/err1"
nsent=$(find "$SMTP_MAILDIR/new" -type f | wc -l)
check "replies were sent ($nsent)" [ "$nsent" -ge 1 ]

check "every reply is clean" "$py" - "$SMTP_MAILDIR" <<'PYEOF'
import email, email.policy, glob, os, sys
allowed = {"from", "to", "cc", "subject", "date", "message-id",
           "in-reply-to", "references", "mime-version", "content-type",
           "content-transfer-encoding", "auto-submitted", "x-patchwork-hint",
           "x-mailer", "precedence", "list-id", "x-patchtriage"}
bad = []
for f in glob.glob(sys.argv[1] + "/new/*"):
    raw = open(f, "rb").read()
    head = raw.split(b"\r\n\r\n", 1)[0] if b"\r\n\r\n" in raw else raw.split(b"\n\n", 1)[0]
    m = email.message_from_bytes(raw, policy=email.policy.compat32)
    names = [k.lower() for k in m.keys()]
    env = open(os.path.join(sys.argv[1], "envelope", os.path.basename(f))).read()
    if "bcc" in names or "evil@x" in env.lower():
        bad.append((f, "injected Bcc / recipient"))
    extra = set(names) - allowed
    if any(not n.startswith("x-") for n in extra):
        bad.append((f, "unexpected headers %s" % sorted(extra)))
    if len(names) != len(set(names)):
        bad.append((f, "a header twice"))
    for line in head.split(b"\n"):
        if len(line) > 998 or b"\0" in line or b"\r" in line.rstrip(b"\r"):
            bad.append((f, "bad header line %r" % line[:60]))
    # bounded by what it answers: the 100 KB subjects come back (base64
    # and in the body), a few times their size at most
    if len(raw) > 4 * 105 * 1024:
        bad.append((f, "reply of %d bytes" % len(raw)))
    elif len(raw) > 64 * 1024:
        print("note: %s: reply of %d bytes" % (f, len(raw)), file=sys.stderr)
    refs = (m["References"] or "").split()
    if len(refs) > 16:
        bad.append((f, "%d References" % len(refs)))
    body = m.get_payload(decode=True) or b""
    if b"{{" in body and b"crafted" not in raw:
        bad.append((f, "template text left in the body"))
for b in bad:
    print(*b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF

check "no user text was expanded as a template" "$py" - "$SMTP_MAILDIR" <<'PYEOF'
import email, email.header, glob, sys
for f in glob.glob(sys.argv[1] + "/new/*"):
    m = email.message_from_binary_file(open(f, "rb"))
    if "braces" not in m["In-Reply-To"]:
        continue
    subj = str(email.header.make_header(email.header.decode_header(m["Subject"])))
    assert "{{contact}}" in subj, subj  # kept literally, not expanded
    to = str(email.header.make_header(email.header.decode_header(m["To"])))
    assert "maintainers@example.org" not in to, to
    sys.exit(0)
print("no reply to the braces mail", file=sys.stderr)
sys.exit(1)
PYEOF

# nothing marked seen that was not handled: the folder's last UID is
# the newest, and every crafted Message-ID that is a valid id is threaded
last=$(sql "SELECT last_uid FROM imap_folders WHERE folder = 'netdev'")
check "the folder was read to its end (last UID $last of $ncrafted)" [ "${last:-0}" = "$ncrafted" ]
nthr=$(sql "SELECT count(*) FROM patches WHERE message_id LIKE 'crafted-%'")
check "the crafted mails are threaded ($nthr of $ncrafted, one with a CR in its id may be refused)" \
	[ "$nthr" -ge $((ncrafted - 1)) ]
check "the queue holds no running item" \
	[ "$(sql "SELECT count(*) FROM work_queue WHERE state = 'running'")" = 0 ]

bounded 120 "$tmp/out2" "$tmp/err2" "$PT_BIN" --state "$tmp/st" \
	--config "$tmp/config" run --once
check "a second pass is bounded (exit $B_RC)" [ "$B_RC" -le 1 ]
check "a second pass sends nothing again" \
	[ "$(find "$SMTP_MAILDIR/new" -type f | wc -l)" = "$nsent" ]
echo "test_mail_crafted: $(($(date +%s) - t_start)) s"
finish
