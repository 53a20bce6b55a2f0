# mailservers.sh - real mail servers for the tests, sourced by bash tests:
# a Dovecot (IMAP with STARTTLS on one port, IMAPS on another) and an SMTP
# sink (aiosmtpd, tests/lib/smtpsink.py) on loopback, each confined to a
# directory the test owns, with a self-signed certificate made here.
#
#   . "$PT_SOURCE_DIR/tests/lib/mailservers.sh"
#   start_dovecot DIR        -> sets DOVECOT_IMAP_PORT DOVECOT_IMAPS_PORT
#                               DOVECOT_CA DOVECOT_CONF DOVECOT_MAILDIR
#                               (user "bot", password "secret"; prints ports)
#   mail_deliver FILE [FOLDER]   drop a message into the bot's Maildir
#   mail_deliver_dir DIR [FOLDER]  the same for every file of DIR, in name
#                       order, in one process (for thousands of messages)
#   restart_dovecot / stop_dovecot
#   DOVECOT_EXTRA_CONF  extra lines for dovecot.conf (e.g. an imap_capability
#                       without IDLE, to test polling)
#   start_smtp DIR [--tls starttls|smtps|none] [--auth USER:PASS]
#                            -> sets SMTP_PORT SMTP_MAILDIR (DIR/mail/new)
#   stop_smtp
#
# Ports are chosen free at start (bind to port 0) and retried when a
# parallel test takes one first, so tests can run under ctest -j.
# Everything is stopped by mailservers_cleanup (install it in an EXIT trap).

ms_python=${PT_PYTHON:-/usr/bin/python3}
ms_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Dovecot refuses uid 0 for mail: the mail belongs to "nobody".
ms_mail_user=nobody
ms_mail_group=nogroup

ms_free_port() {
	"$ms_python" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ms_wait_port() { # PORT SECONDS
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		if "$ms_python" -c 'import socket, sys
s = socket.socket(); s.settimeout(0.2)
sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))))' "$1"; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# make_cert DIR: DIR/cert.pem (self-signed for 127.0.0.1 and localhost,
# also the CA file) and DIR/key.pem.
make_cert() {
	[ -s "$1/cert.pem" ] && return 0
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
		-keyout "$1/key.pem" -out "$1/cert.pem" -subj "/CN=localhost" \
		-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
		-addext "basicConstraints=critical,CA:TRUE" \
		>/dev/null 2>&1
}

ms_write_dovecot_conf() {
	local d=$1
	cat >"$d/dovecot.conf" <<EOF
protocols = imap
listen = 127.0.0.1
base_dir = $d/run
state_dir = $d/state
instance_name = pt-$$-$RANDOM
log_path = $d/dovecot.log
info_log_path = $d/dovecot.log
default_internal_user = dovecot
default_internal_group = dovecot
default_login_user = dovenull
first_valid_uid = 1
first_valid_gid = 1
mail_location = maildir:$d/mail/%u
mail_privileged_group =
ssl = yes
ssl_cert = <$d/cert.pem
ssl_key = <$d/key.pem
disable_plaintext_auth = yes
auth_mechanisms = plain login
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $d/passwd
}
userdb {
  driver = passwd-file
  args = username_format=%u $d/passwd
  override_fields = uid=$ms_mail_user gid=$ms_mail_group home=$d/home
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $DOVECOT_IMAP_PORT
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $DOVECOT_IMAPS_PORT
    ssl = yes
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
service stats {
  unix_listener stats-reader {
    mode = 0600
  }
  unix_listener stats-writer {
    mode = 0600
  }
}
imap_idle_notify_interval = 2 mins
mailbox_idle_check_interval = 1 secs
${DOVECOT_EXTRA_CONF:-}
EOF
	printf 'bot:{PLAIN}secret::::::\n' >"$d/passwd"
}

ms_dovecot_run() {
	local d=$DOVECOT_DIR
	dovecot -c "$d/dovecot.conf" -F >>"$d/dovecot.out" 2>&1 &
	DOVECOT_PID=$!
	ms_wait_port "$DOVECOT_IMAP_PORT" 10 &&
		ms_wait_port "$DOVECOT_IMAPS_PORT" 10
}

start_dovecot() { # DIR
	local d try
	d=$(mkdir -p "$1" && cd "$1" && pwd)
	DOVECOT_DIR=$d
	mkdir -p "$d/run" "$d/state" "$d/home" "$d/mail/bot"
	make_cert "$d" || { echo "start_dovecot: openssl failed" >&2; return 1; }
	DOVECOT_CA=$d/cert.pem
	DOVECOT_CONF=$d/dovecot.conf
	DOVECOT_MAILDIR=$d/mail/bot
	mkdir -p "$DOVECOT_MAILDIR"/{cur,new,tmp}
	chown -R "$ms_mail_user:$ms_mail_group" "$d/mail" "$d/home"
	# the mail user must reach DIR even when it is inside a mktemp -d
	chmod o+x "$d" "$(dirname "$d")"
	for try in 1 2 3 4 5; do
		DOVECOT_IMAP_PORT=$(ms_free_port)
		DOVECOT_IMAPS_PORT=$(ms_free_port)
		ms_write_dovecot_conf "$d"
		if ms_dovecot_run; then
			echo "dovecot imap $DOVECOT_IMAP_PORT imaps $DOVECOT_IMAPS_PORT"
			return 0
		fi
		stop_dovecot
	done
	echo "start_dovecot: dovecot did not start; see $d/dovecot.log" >&2
	cat "$d/dovecot.out" "$d/dovecot.log" >&2 2>/dev/null
	return 1
}

# The master's children (imap, imap-login, auth...) outlive a SIGTERM to
# the master when run with -F, so they are collected first and stopped
# by pid too: a restart must cut the clients' connections, as a real one
# does, and a test must leave no process behind.
stop_dovecot() {
	local i kids p
	[ -n "${DOVECOT_PID:-}" ] || return 0
	kids=$(pgrep -P "$DOVECOT_PID" 2>/dev/null)
	kill "$DOVECOT_PID" 2>/dev/null
	for p in $kids; do kill "$p" 2>/dev/null; done
	for ((i = 0; i < 100; i++)); do
		kill -0 "$DOVECOT_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -9 "$DOVECOT_PID" 2>/dev/null
	for p in $kids; do kill -9 "$p" 2>/dev/null; done
	wait "$DOVECOT_PID" 2>/dev/null
	DOVECOT_PID=
	return 0
}

# Same ports and mail; existing connections are cut.
restart_dovecot() {
	stop_dovecot
	ms_dovecot_run || { echo "restart_dovecot failed" >&2; return 1; }
	echo "dovecot imap $DOVECOT_IMAP_PORT imaps $DOVECOT_IMAPS_PORT"
}

# mail_deliver FILE [FOLDER]: the way an MDA does it (tmp/ then new/).
mail_deliver() {
	local dir=$DOVECOT_MAILDIR name
	if [ -n "${2:-}" ] && [ "$2" != INBOX ]; then
		dir=$DOVECOT_MAILDIR/.$2
		mail_folder "$2"
	fi
	name=$(date +%s).$$_$RANDOM$RANDOM.pt
	cp "$1" "$dir/tmp/$name" &&
		chown "$ms_mail_user:$ms_mail_group" "$dir/tmp/$name" &&
		mv "$dir/tmp/$name" "$dir/new/$name"
}

# mail_deliver_dir DIR [FOLDER]: mail_deliver for each file of DIR in
# name order, without a process per message.  The names sort by their
# time part, then a sequence number, so Dovecot gives the UIDs in order.
mail_deliver_dir() {
	local dir=$DOVECOT_MAILDIR
	if [ -n "${2:-}" ] && [ "$2" != INBOX ]; then
		dir=$DOVECOT_MAILDIR/.$2
		mail_folder "$2"
	fi
	"$ms_python" - "$1" "$dir" "$ms_mail_user" "$ms_mail_group" <<'EOF'
import grp, os, pwd, shutil, sys, time
src, dst, user, group = sys.argv[1:5]
uid, gid = pwd.getpwnam(user).pw_uid, grp.getgrnam(group).gr_gid
t = int(time.time())
for i, f in enumerate(sorted(os.listdir(src))):
    name = "%d.M%07dP%d.pt" % (t, i, os.getpid())
    tmp = os.path.join(dst, "tmp", name)
    shutil.copyfile(os.path.join(src, f), tmp)
    os.chown(tmp, uid, gid)
    os.rename(tmp, os.path.join(dst, "new", name))
EOF
}

# Make a folder exist (and be subscribed) before any mail arrives.
mail_folder() { # NAME
	[ -d "$DOVECOT_MAILDIR/.$1" ] && return 0
	mkdir -p "$DOVECOT_MAILDIR/.$1"/{cur,new,tmp}
	chown -R "$ms_mail_user:$ms_mail_group" "$DOVECOT_MAILDIR/.$1"
}

# Give FOLDER a new UIDVALIDITY (as a server rebuilding its index does).
mail_reset_uidvalidity() { # FOLDER NEWVALUE
	doveadm -c "$DOVECOT_CONF" mailbox update -u bot \
		--uid-validity "$2" "$1"
}

start_smtp() { # DIR [smtpsink options]
	local d
	d=$(mkdir -p "$1" && cd "$1" && pwd)
	shift
	make_cert "$d" || return 1
	SMTP_DIR=$d
	SMTP_CA=$d/cert.pem
	SMTP_MAILDIR=$d/mail
	rm -f "$d/port"
	"$ms_python" "$ms_lib/smtpsink.py" --dir "$SMTP_MAILDIR" \
		--cert "$d/cert.pem" --key "$d/key.pem" --port-file "$d/port" \
		"$@" >"$d/smtpsink.out" 2>&1 &
	SMTP_PID=$!
	for ((i = 0; i < 200; i++)); do
		[ -s "$d/port" ] && break
		kill -0 "$SMTP_PID" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -s "$d/port" ]; then
		echo "start_smtp: smtpsink did not start" >&2
		cat "$d/smtpsink.out" >&2
		return 1
	fi
	SMTP_PORT=$(cat "$d/port")
	echo "smtp $SMTP_PORT"
}

stop_smtp() {
	[ -n "${SMTP_PID:-}" ] || return 0
	kill "$SMTP_PID" 2>/dev/null
	wait "$SMTP_PID" 2>/dev/null
	SMTP_PID=
	return 0
}

mailservers_cleanup() {
	stop_dovecot
	stop_smtp
}
