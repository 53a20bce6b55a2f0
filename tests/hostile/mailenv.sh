# mailenv.sh - what the mail half of the hostile suite shares, sourced by
# bash after tests/lib/botenv.sh:
#
#   hostile_models DIR     DIR/t as botenv_models makes it, but trained once
#                          per build tree and copied from there (under a
#                          lock: ctest -j runs the files side by side)
#   bounded SECS OUT ERR CMD...   run CMD under `timeout SECS` with its peak
#                          RSS measured; sets B_RC (124: timed out), B_RSS
#                          (KiB) and B_SECS (wall, whole seconds)
#   rss_limit              the peak RSS allowed to one bot run, in KiB
#                          (larger under ASan, whose shadow memory counts)
#   smtp_hostile_start DIR  tests/hostile/smtp_hostile.py in DIR; sets
#                          HSMTP_PORT, HSMTP_PID, HSMTP_DIR
#   smtp_hostile_fault F   the fault for the next connections
#   smtp_hostile_stop
#
# Needs PT_BIN, PT_SOURCE_DIR (and PT_BUILD_DIR for the shared models).

mh_py=${PT_PYTHON:-/usr/bin/python3}

hostile_models() { # DIR
	local cache=${PT_BUILD_DIR:-/tmp}/hostile-models stamp
	stamp=$(stat -c %Y "$PT_BIN" "$PT_SOURCE_DIR/tests/lib/trained.sh" \
		"$PT_SOURCE_DIR/tests/lib/mkrepo.py" | tr '\n' .)
	mkdir -p "$cache" "$1"
	(
		flock -w 600 9 || exit 1
		if [ "$(cat "$cache/stamp" 2>/dev/null)" != "$stamp" ]; then
			rm -rf "$cache/t"
			botenv_models "$cache" || exit 1
			echo "$stamp" >"$cache/stamp"
		fi
	) 9>"$cache/lock" || return 1
	rm -rf "$1/t"
	cp -a "$cache/t" "$1/t"
}

bounded() { # SECS OUT ERR CMD...
	local secs=$1 out=$2 err=$3 t0 rssf
	shift 3
	rssf=$(mktemp)
	t0=$(date +%s)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$rssf" timeout -k 5 "$secs" "$@" \
			>"$out" 2>"$err"
		B_RC=$?
		# /usr/bin/time reports a killed child on its first line
		B_RSS=$(tail -1 "$rssf")
	else
		"$mh_py" -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
      file=open(sys.argv[1], "w"))
sys.exit(rc & 255)' "$rssf" timeout -k 5 "$secs" "$@" >"$out" 2>"$err"
		B_RC=$?
		B_RSS=$(cat "$rssf")
	fi
	B_SECS=$(($(date +%s) - t0))
	rm -f "$rssf"
	case $B_RSS in '' | *[!0-9]*) B_RSS=0 ;; esac
}

rss_limit() {
	if grep -q -a -m1 __asan_init "$PT_BIN" 2>/dev/null; then
		echo 1500000
	else
		echo 200000
	fi
}

smtp_hostile_start() { # DIR
	local i
	HSMTP_DIR=$(mkdir -p "$1" && cd "$1" && pwd)
	rm -f "$HSMTP_DIR/port"
	"$mh_py" "$PT_SOURCE_DIR/tests/hostile/smtp_hostile.py" \
		--dir "$HSMTP_DIR" --port-file "$HSMTP_DIR/port" \
		>"$HSMTP_DIR/server.out" 2>&1 &
	HSMTP_PID=$!
	for ((i = 0; i < 200; i++)); do
		[ -s "$HSMTP_DIR/port" ] && break
		kill -0 "$HSMTP_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$HSMTP_DIR/port" ] || {
		echo "smtp_hostile.py did not start" >&2
		cat "$HSMTP_DIR/server.out" >&2
		return 1
	}
	HSMTP_PORT=$(cat "$HSMTP_DIR/port")
}

smtp_hostile_fault() { # FAULT
	echo "$1" >"$HSMTP_DIR/fault.tmp" && mv "$HSMTP_DIR/fault.tmp" "$HSMTP_DIR/fault"
}

smtp_hostile_stop() {
	[ -n "${HSMTP_PID:-}" ] || return 0
	kill "$HSMTP_PID" 2>/dev/null
	wait "$HSMTP_PID" 2>/dev/null
	HSMTP_PID=
	return 0
}
