#!/bin/bash
# test_train_jobs.sh - the rows of `train` read on several threads are
# those of one thread: on a generated kernel-shaped history of more
# commits than a batch, --jobs 1 and --jobs 3 give the same rows line and
# the same model versions, with every row, with --max-rows (a cut inside
# a batch) and with a memory budget that binds.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"

bin=$PT_BIN
pt_tmpdir
export GIT_CONFIG_NOSYSTEM=1 HOME=$PT_TMP
repo=$PT_TMP/repo.git
st=$PT_TMP/state
python3 "$PT_SOURCE_DIR/tests/bench/kernelgen" 1500 "$repo" --seed 7 \
	>/dev/null 2>&1 || fail "kernelgen 1500"
"$bin" --quiet --state "$st" mine --repo "$repo" >/dev/null 2>&1 ||
	fail "cannot mine the generated history"

sql() { sqlite3 "$st/state.db" "$1"; }
train() { # JOBS ARGS...: the rows line and the model lines
	local j=$1
	shift
	"$bin" --state "$st" train --task all --since all --jobs "$j" "$@" \
		2>&1 | grep -E '^(rows:|fix  model|risk model)'
}
same() { # DESCRIPTION ARGS...: sets $out
	local d=$1 b
	shift
	out=$(train 1 "$@")
	b=$(train 3 "$@")
	check "$d: rows and a model" grep -q '^fix  model' <<<"$out"
	check "$d: --jobs 3 as --jobs 1" [ "$out" = "$b" ]
	[ "$out" = "$b" ] ||
		printf -- '--jobs 1:\n%s\n--jobs 3:\n%s\n' "$out" "$b" >&2
}
all=$(sql "SELECT count(*) FROM commits")
same "every row"
check "every row: $all rows" \
	grep -Eq "^rows: +$all of the $all labelled commits from the regime start$" \
	<<<"$out"
same "--max-rows 777" --max-rows 777
check "--max-rows 777: the newest 777" grep -Eq \
	"^rows: +777 of the $all .*; $((all - 777)) oldest left out by --max-rows" \
	<<<"$out"
same "--max-memory 1" --max-memory 1
check "--max-memory 1: the budget binds" \
	grep -q 'oldest left out by the memory budget' <<<"$out"
expect_exit 2 "$bin" --state "$st" train --jobs 0
finish
