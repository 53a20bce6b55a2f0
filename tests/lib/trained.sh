#!/bin/bash
# trained.sh DIR - a state directory with mined history and trained
# models, for the tests that need scores: builds the kernel-like tree of
# mkrepo.py in DIR/linux, mines it into DIR/state and trains both models.
# Prints nothing on success; the error of the failing step otherwise.
set -euo pipefail
dir=$1
py=${PT_PYTHON:-/usr/bin/python3}
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
"$py" "$lib/mkrepo.py" "$dir/linux" --releases 6 >"$dir/linux.json"
"$PT_BIN" --quiet --state "$dir/state" mine --repo "$dir/linux" \
	--horizon 90 >"$dir/mine.log" 2>&1 || { cat "$dir/mine.log" >&2; exit 1; }
"$PT_BIN" --quiet --state "$dir/state" train >"$dir/train.log" 2>&1 ||
	{ cat "$dir/train.log" >&2; exit 1; }
