#!/bin/bash
# test_archive_model.sh - `train --archive` and `eval --archive` on a
# synthetic list archive (tests/lib/mkarchive.py: 900 applied postings
# over three years, bug-introducing ones named by later Fixes: with a
# probability that grows with size and falls with review and testing):
# the report's tables, plots and targets, a full model that ranks well
# above the (signal-free) subject words, the odds of the review signals
# below 1,
# the saved model, and the errors for an empty state and bad options.
set -u
. "$PT_SOURCE_DIR/tests/lib/testlib.sh"
bin=$PT_BIN
pt_tmpdir
st=$PT_TMP/state
mbox=$PT_TMP/list.mbox

check "the synthetic archive is written" \
	python3 "$PT_SOURCE_DIR/tests/lib/mkarchive.py" "$mbox" 7
# nothing imported: a named error, not an empty report
expect_err "no state database|no applied postings" \
	"$bin" --state "$PT_TMP/empty" eval --archive
expect_exit 2 "$bin" --state "$st" eval --archive --since yesterday
expect_exit 2 "$bin" --state "$st" eval --archive --folds 0

check "import" "$bin" --state "$st" archive import --mbox "$mbox"
expect_out "bug-introducing, patches +148" \
	"$bin" --state "$st" archive stats

out=$PT_TMP/eval
check "eval --archive" \
	sh -c "'$bin' --state '$st' eval --archive --out '$out' > '$PT_TMP/md'"
md=$PT_TMP/md
check "eval.md is what was printed" cmp "$md" "$out/eval.md"
for f in archive-roc.svg archive-pr.svg; do
	check "$f is an SVG" grep -q "<svg" "$out/$f"
done
check "900 applied postings, 148 bugs" \
	grep -q "^900 applied postings (of 1048 postings) .* 148 of them" "$md"
for row in "^| full: " "^| size-only LR" "^| text-only LR" "^| size rule" \
	"^| random" "^| review content |" "^| testing |" \
	"^| review content and testing |" "^- risk ROC-AUC >= 0.80: " \
	"^- recall >= 0.50 with 10% of postings flagged: "; do
	check "the report has '$row'" grep -q -- "$row" "$md"
done
# the numbers: every AUC in [0,1]; the full model well above chance and
# above the size rule; the Reviewed-by and Tested-by odds below 1
auc() { # MODEL-PREFIX
	grep -- "^| $1" "$md" | head -1 | awk -F'|' '{print $3}' |
		awk '{print $1}'
}
full=$(auc "full: ")
text=$(auc "text-only")
check "full AUC $full > 0.70" awk -v a="$full" 'BEGIN{exit !(a > 0.70)}'
# the subjects name each posting's own function: no signal in them
check "full AUC $full > text-only $text + 0.1" \
	awk -v a="$full" -v b="$text" 'BEGIN{exit !(a > b + 0.1)}'
for sig in "Reviewed-by given on the list" "Tested-by given on the list"; do
	or=$(grep -- "^| $sig |" "$md" | awk -F'|' '{print $5}')
	check "odds ratio of '$sig' ($or) < 1" \
		awk -v o="$or" 'BEGIN{exit !(o > 0 && o < 1)}'
done
check "two test periods at least" \
	sh -c "[ \$(grep -c '^| 20[0-9-]* \.\. ' '$md') -ge 2 ]"

# the deployed model
expect_out "^risk-archive model risk-archive-[0-9a-f]+: [0-9]+ of the 900 applied postings \\(those with a final label\\), saved to $st/models/risk-archive" \
	"$bin" --state "$st" train --archive
check "its manifest names the task" \
	grep -q '"task": *"risk-archive"' "$st/models/risk-archive/manifest.json"

# list mail the lists know is scored by the archive model, with its
# reasons: the path the daemon's checks and replies take (verdict.c)
python3 - "$mbox" "$PT_TMP/p850.eml" <<'PY'
import mailbox, sys
for m in mailbox.mbox(sys.argv[1]):
    if m["Message-ID"] == "<p850@foo>":
        open(sys.argv[2], "wb").write(m.as_bytes())
PY
expect_out "^p\(bug\) 0\.[0-9]+ +\(model risk-archive-[0-9a-f]+\)" \
	"$bin" --state "$st" score "$PT_TMP/p850.eml"
expect_out "lines added: 84" "$bin" --state "$st" score "$PT_TMP/p850.eml"
expect_out "check: p\(bug\) 0\.[0-9]+ \(model risk-archive-[0-9a-f]+\): " \
	"$bin" --state "$st" score "$PT_TMP/p850.eml"
expect_out '"models":\{"risk":"risk-archive-[0-9a-f]+"\}' \
	"$bin" --state "$st" score --json "$PT_TMP/p850.eml"
# a mail the lists do not know has no archive score (and no git model)
sed 's/<p850@foo>/<unknown@foo>/' "$PT_TMP/p850.eml" > "$PT_TMP/new.eml"
expect_out '"models":\{\}' "$bin" --state "$st" score --json "$PT_TMP/new.eml"
finish
