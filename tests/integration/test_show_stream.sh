#!/bin/bash
# test_show_stream.sh - `show` streams its input: an mbox of 48 MiB (192
# patch mails of 256 KiB) is shown in full, from a file, a gzip'd file
# and stdin, by a process whose address space is limited (ulimit -v) to
# 80 MiB, far less than the file and the binary's own start-up together
# would need if the whole mbox were read into memory first.  A build
# with AddressSanitizer (whose shadow memory needs terabytes of address
# space) skips.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
grep -q __asan_init "$bin" && skip "an ASan build cannot run under ulimit -v"
tmp=$(mktemp -d /tmp/pt-show-stream-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

limit=$((80 * 1024)) # KiB
msgs=192
/usr/bin/python3 - "$tmp/big.mbox" "$msgs" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
line = '+\tval = readl(base + 0x%04x); /* %s */\n'
body = ''.join(line % (k, 'x' * 12) for k in range(5400))
with open(path, 'w') as f:
    for i in range(n):
        f.write('From mboxrd@z Thu Jan  1 00:00:00 1970\n'
                'From: Ada Lovelace <ada@example.org>\n'
                'Date: Mon, 2 Dec 2024 10:00:%02d +0000\n'
                'Subject: [PATCH %d/%d] pwm: add register dump %d\n'
                'Message-ID: <big-%d@example.org>\n\n'
                'Dump the registers.\n\n'
                'Signed-off-by: Ada Lovelace <ada@example.org>\n---\n'
                'diff --git a/drivers/pwm/dump%d.c b/drivers/pwm/dump%d.c\n'
                'new file mode 100644\n--- /dev/null\n'
                '+++ b/drivers/pwm/dump%d.c\n@@ -0,0 +1,5400 @@\n'
                % (i % 60, i + 1, n, i, i, i, i, i) + body + '\n')
PY
size=$(stat -c %s "$tmp/big.mbox")
[ "$size" -gt $((48 * 1000 * 1000)) ] || fail "the mbox is only $size bytes"
gzip -1 -c "$tmp/big.mbox" > "$tmp/big.mbox.gz"
cp "$PT_SOURCE_DIR/tests/data/sample-series.mbox" "$tmp/small.mbox"

limited() { # CMD...: run CMD with the address space limited
	(ulimit -v "$limit" && "$@")
}

# the limit itself leaves room for the program: a small mbox is shown
check "show of a small mbox under ulimit -v $limit" \
	limited "$bin" show --json "$tmp/small.mbox" > /dev/null

for how in file gzip stdin; do
	case $how in
	file) limited "$bin" show --json "$tmp/big.mbox" ;;
	gzip) limited "$bin" show --json "$tmp/big.mbox.gz" ;;
	stdin) limited "$bin" show --json - < "$tmp/big.mbox" ;;
	esac > "$tmp/out.$how" 2> "$tmp/err.$how"
	rc=$?
	pt_checks=$((pt_checks + 1))
	[ "$rc" = 0 ] || fail "show --json ($how) under ulimit -v $limit exited $rc: $(head -c 300 "$tmp/err.$how")"
	n=$(wc -l < "$tmp/out.$how")
	[ "$n" = "$msgs" ] || fail "show --json ($how): $n lines, expected $msgs"
done
/usr/bin/python3 - "$tmp/out.file" "$msgs" <<'PY' || fail "the JSON lines are not the mails"
import json, sys
ps = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
assert [p['message_id'] for p in ps] == ['big-%d@example.org' % i for i in range(n)]
assert all(p['added'] == 5400 for p in ps), ps[0]['added']
PY
# the human view streams too (from the gzip'd copy: the cheaper read)
limited "$bin" show "$tmp/big.mbox.gz" > "$tmp/out.human" 2>&1
pt_checks=$((pt_checks + 1))
[ "$(grep -c '^\[PATCH ' "$tmp/out.human")" = "$msgs" ] ||
	fail "show (human) under ulimit -v: not $msgs subjects"
finish
