# botenv.sh - the bot's whole world on loopback, for the end-to-end tests,
# the README's demo and the load benchmark; sourced by bash:
#
#   . "$PT_SOURCE_DIR/tests/lib/botenv.sh"
#   botenv_models DIR            kernel-like tree, mined and trained, in
#                                DIR/t (tests/lib/trained.sh); kept if there
#   botenv_series DIR COUNT [SEED]   COUNT series as list mail in DIR/series
#                                (tests/lib/mkseries.py, Patchwork data too)
#   botenv_start DIR [SKIP]      the Patchwork stand-in (importing the
#                                series), Dovecot with every mail delivered
#                                to its list's folder, the SMTP sink
#                                (STARTTLS), and DIR/config for them;
#                                SKIP=imap leaves Dovecot out, and
#                                SKIP=patchwork the stand-in's section
#                                of the configuration
#   botenv_stop                  stops all three (install in an EXIT trap)
#
# Sets PW_PORT, PW_PID and those of mailservers.sh.  The subsystems netdev
# and pwm opt in (checks and replies); ext9 does not, so that the tests can
# show it gets nothing.  Needs PT_BIN and PT_SOURCE_DIR; PT_PYTHON is
# Debian's python3 (with aiosmtpd).

be_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
be_py=${PT_PYTHON:-/usr/bin/python3}
# shellcheck source=mailservers.sh
. "$be_lib/mailservers.sh"

botenv_models() { # DIR
	mkdir -p "$1/t"
	[ -d "$1/t/state/models/risk" ] && return 0
	bash "$be_lib/trained.sh" "$1/t"
}

# The series are posted just after the tree's newest commit (when
# botenv_models made one), as if in the next merge window.
botenv_series() { # DIR COUNT [SEED]
	local start=2026-11-10T09:00:00+00:00 last
	if [ -d "$1/t/linux" ]; then
		last=$(git -C "$1/t/linux" log -1 --format=%ct)
		start=$("$be_py" -c 'import datetime, sys
t = datetime.datetime.fromtimestamp(int(sys.argv[1]) + 86400,
                                    datetime.timezone.utc)
print(t.isoformat(timespec="seconds"))' "$last")
	fi
	rm -rf "$1/series"
	"$be_py" "$be_lib/mkseries.py" "$1/series" --count "$2" \
		--seed "${3:-1}" --start-date "$start" --patchwork-data \
		>"$1/series.json"
}

be_start_standin() { # DIR
	local d=$1 i
	rm -f "$d/pw.port"
	"$be_py" "$be_lib/pw_standin.py" --data "$d/series" \
		--port-file "$d/pw.port" >"$d/standin.log" 2>&1 &
	PW_PID=$!
	for ((i = 0; i < 600; i++)); do
		[ -s "$d/pw.port" ] && break
		kill -0 "$PW_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$d/pw.port" ] || {
		echo "botenv: the Patchwork stand-in did not start" >&2
		cat "$d/standin.log" >&2
		return 1
	}
	PW_PORT=$(cat "$d/pw.port")
}

# Each mail into the folder named after its list (List-Id's first label).
be_deliver_all() { # DIR
	local f list
	# every configured folder exists, even one no mail went to yet
	for list in netdev linux-pwm linux-ext9; do mail_folder "$list"; done
	for f in "$1"/series/mail/*.eml; do
		list=$(sed -n 's/^List-Id: .*<\([^.>]*\)\..*/\1/p' "$f" | head -1)
		mail_deliver "$f" "${list:-INBOX}" || return 1
	done
}

be_write_config() { # DIR SKIP
	local d=$1 skip=$2
	printf '0123456789abcdef0123456789abcdef01234567\n' >"$d/pw-token"
	printf 'secret\n' >"$d/imap-password"
	chmod 600 "$d/pw-token" "$d/imap-password"
	: >"$d/config"
	[ "$skip" = patchwork ] || cat >>"$d/config" <<EOF
[patchwork]
	url = http://127.0.0.1:$PW_PORT
	project = netdev
	token-file = $d/pw-token
	max-attempts = 3
	backoff-ms = 50
EOF
	[ "$skip" = imap ] || cat >>"$d/config" <<EOF
[imap]
	url = imap://127.0.0.1:$DOVECOT_IMAP_PORT
	user = bot
	token-file = $d/imap-password
	ca-file = $DOVECOT_CA
	folder = netdev
	folder = linux-pwm
	folder = linux-ext9
EOF
	cat >>"$d/config" <<EOF
[smtp]
	url = smtp://127.0.0.1:$SMTP_PORT
	ca-file = $SMTP_CA
[reply]
	# the series are dated just after the test tree (years ago): the
	# age guard and the first-start position are opened wide here
	max-age = 36500
	from = patchtriage <bot@example.org>
	contact = maintainers@example.org
	templates = $PT_SOURCE_DIR/templates
[policy]
	maintainers-file = $d/t/linux/MAINTAINERS
[mail]
	sentiment-file = $PT_SOURCE_DIR/conf/sentiment.txt
[check]
	max-age = 36500
[run]
	since = 2000-01-01T00:00:00
	repo = $d/t/linux
	poll-interval = 1
[subsystem "netdev"]
	list-id = netdev.vger.kernel.org
	list = netdev@vger.kernel.org
	patchwork-project = netdev
	paths = drivers/net/*
	actions = check reply
	risk-threshold = 0.30
	stable-threshold = 0.50
	recipients = author list maintainers
	rate-limit = 1000
[subsystem "pwm"]
	list-id = linux-pwm.vger.kernel.org
	list = linux-pwm@vger.kernel.org
	patchwork-project = linux-pwm
	paths = drivers/pwm/*
	actions = check reply
	risk-threshold = 0.30
	stable-threshold = 0.50
	recipients = author list
	rate-limit = 1000
EOF
}

botenv_start() { # DIR [SKIP]
	local d=$1 skip=${2:-}
	be_start_standin "$d" || return 1
	if [ "$skip" != imap ]; then
		start_dovecot "$d/dovecot" >/dev/null || return 1
		be_deliver_all "$d" || return 1
	fi
	start_smtp "$d/smtp" --tls starttls >/dev/null || return 1
	be_write_config "$d" "$skip"
}

botenv_stop() {
	if [ -n "${PW_PID:-}" ]; then
		kill "$PW_PID" 2>/dev/null
		wait "$PW_PID" 2>/dev/null || true
		PW_PID=
	fi
	mailservers_cleanup || true
}
