#!/usr/bin/python3
"""tests/bench/archive_eval.py STATE_DIR - what the list labels and list
features of an imported archive say, for docs/EVALUATION.md.

Reads `patchtriage --state STATE_DIR archive features --at apply` (run
by this script, $PT_BIN or patchtriage on PATH) and the state database:

- recall of applied detection: postings whose subject a later posting's
  Fixes: quotes were certainly applied; the share of those subjects with
  an applied posting is the share of applied postings matched to an
  outcome;
- bug rate of applied postings old enough to be labelled (applied at
  least HORIZON days before the newest message), with and without each
  review signal as of the apply date, as odds ratios with 95% Woolf
  intervals (0.5 added to every cell);
- bug-risk quality with and without the list features: an L2 logistic
  regression on size features (lines added/removed, files) alone and on
  size + every list feature, walk-forward over 4 time-ordered folds
  (train on everything before a fold, test on it), ROC-AUC of the pooled
  test predictions with a 95% bootstrap interval.
"""
import json
import random
import math
import os
import shutil
import sqlite3
import subprocess
import sys

HORIZON = 365 * 86400


def odds(rows, pred):
    a = sum(1 for r in rows if pred(r) and r["bug"])
    b = sum(1 for r in rows if pred(r) and not r["bug"])
    c = sum(1 for r in rows if not pred(r) and r["bug"])
    d = sum(1 for r in rows if not pred(r) and not r["bug"])
    o = ((a + .5) * (d + .5)) / ((b + .5) * (c + .5))
    se = math.sqrt(1 / (a + .5) + 1 / (b + .5) + 1 / (c + .5) + 1 / (d + .5))
    return a, a + b, c, c + d, o, math.exp(math.log(o) - 1.96 * se), \
        math.exp(math.log(o) + 1.96 * se)


def auc(pairs):
    pos = [p for p, y in pairs if y]
    neg = [p for p, y in pairs if not y]
    if not pos or not neg:
        return float("nan")
    wins = 0.0
    for p in pos:
        for q in neg:
            wins += 1.0 if p > q else 0.5 if p == q else 0.0
    return wins / (len(pos) * len(neg))


def fit(xs, ys, l2=1.0, iters=300, lr=0.5):
    n, k = len(xs), len(xs[0])
    mu = [sum(x[j] for x in xs) / n for j in range(k)]
    sd = [math.sqrt(sum((x[j] - mu[j]) ** 2 for x in xs) / n) or 1.0
          for j in range(k)]
    z = [[(x[j] - mu[j]) / sd[j] for j in range(k)] for x in xs]
    w, b = [0.0] * k, 0.0
    for _ in range(iters):
        gw, gb = [l2 * wj / n for wj in w], 0.0
        for zi, y in zip(z, ys):
            t = b + sum(wj * zj for wj, zj in zip(w, zi))
            e = 1 / (1 + math.exp(-max(min(t, 30), -30))) - y
            gb += e / n
            for j in range(k):
                gw[j] += e * zi[j] / n
        w = [wj - lr * g for wj, g in zip(w, gw)]
        b -= lr * gb
    return lambda x: b + sum(wj * (xj - m) / s
                             for wj, xj, m, s in zip(w, x, mu, sd))


def walk_forward(rows, cols, folds=4):
    rows = sorted(rows, key=lambda r: r["as_of"])
    size = len(rows) // folds
    out = []
    for k in range(1, folds):
        train = rows[:k * size]
        test = rows[k * size:(k + 1) * size if k < folds - 1 else None]
        xs = [[math.log1p(max(r[c], 0)) if r[c] is not None else 0.0
               for c in cols] for r in train]
        model = fit(xs, [r["bug"] for r in train])
        out += [(model([math.log1p(max(r[c], 0)) if r[c] is not None
                        else 0.0 for c in cols]), r["bug"]) for r in test]
    rnd = random.Random(1)
    boot = sorted(auc([rnd.choice(out) for _ in out]) for _ in range(200))
    return auc(out), boot[5], boot[194], sum(y for _, y in out), len(out)


def main():
    state = sys.argv[1]
    binary = os.environ.get("PT_BIN") or shutil.which("patchtriage")
    out = subprocess.run([binary, "--state", state, "archive", "features",
                          "--at", "apply"], check=True,
                         capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    db = sqlite3.connect(os.path.join(state, "state.db"))
    newest = db.execute("SELECT max(date) FROM messages").fetchone()[0]

    named = db.execute(
        "SELECT count(DISTINCT f.norm_subject), count(DISTINCT CASE WHEN "
        "EXISTS (SELECT 1 FROM patches p JOIN posting_outcomes o ON "
        "o.patch_id = p.id WHERE p.norm_subject = f.norm_subject AND "
        "o.outcome = 'applied') THEN f.norm_subject END) FROM list_fixrefs f "
        "WHERE f.kind = 'fixes' AND f.norm_subject != '' AND EXISTS (SELECT 1"
        " FROM patches p WHERE p.norm_subject = f.norm_subject AND p.date < "
        "f.date)").fetchone()
    print("postings named by a later Fixes: (subjects): %d, of them with "
          "an applied outcome: %d (%.1f%%)" % (named[0], named[1],
                                               100.0 * named[1] /
                                               max(named[0], 1)))
    by_how = db.execute("SELECT how, count(*) FROM posting_outcomes WHERE "
                        "outcome = 'applied' GROUP BY how").fetchall()
    print("applied postings by evidence:", dict(by_how))

    app = [r for r in rows if r["outcome"] == "applied"
           and r["as_of"] <= newest - HORIZON]
    bugs = sum(r["bug"] for r in app)
    print("applied postings older than the horizon: %d, bug-introducing: "
          "%d (%.1f%%)" % (len(app), bugs, 100.0 * bugs / max(len(app), 1)))
    tests = [
        ("Reviewed-by on the list", lambda r: r["list.reviewed_by"] > 0),
        ("Acked-by on the list", lambda r: r["list.acked_by"] > 0),
        ("Tested-by on the list", lambda r: r["list.tested_by"] > 0),
        ("review tags carried in the patch",
         lambda r: r["list.carried_tags"] > 0),
        ("any reviewer replied", lambda r: r["list.reviewers"] > 0),
        ("inline comments", lambda r: r["list.inline_comments"] > 0),
        ("earlier versions (v2+)", lambda r: r["list.versions_before"] > 0),
        ("reviewers asked for changes on earlier versions",
         lambda r: r["list.prev_requests"] > 0),
        ("test-bot report", lambda r: r["list.bot_reports"] > 0),
        ("more than 7 days from first posting to apply",
         lambda r: r["list.days_since_first"] > 7),
        ("the posting is a fix (Fixes:/Cc: stable)", lambda r: r["is_fix"]),
    ]
    print()
    print("| signal (as of apply) | bugs/with | bugs/without | odds ratio "
          "| 95% CI |")
    print("|---|---:|---:|---:|---|")
    for name, pred in tests:
        a, n1, c, n0, o, lo, hi = odds(app, pred)
        print("| %s | %d/%d | %d/%d | %.2f | %.2f-%.2f |"
              % (name, a, n1, c, n0, o, lo, hi))
    quality(db, app)


def quality(db, app):
    size = {pid: (a, d, f) for pid, a, d, f in db.execute(
        "SELECT id, added, removed, files FROM patches")}
    for r in app:
        r["size.added"], r["size.removed"], r["size.files"] = \
            size[r["patch_id"]]
    base = ["size.added", "size.removed", "size.files"]
    listcols = [k for k in app[0] if k.startswith("list.")
                and k != "list.reviewer_bug_rate"]
    print()
    print("| model (walk-forward, 4 folds) | test bugs/postings | ROC-AUC "
          "| 95% bootstrap CI |")
    print("|---|---:|---:|---|")
    for name, cols in (("size only", base),
                       ("size + list features", base + listcols)):
        a, lo, hi, pos, n = walk_forward(app, cols)
        print("| %s | %d/%d | %.3f | %.3f-%.3f |" % (name, pos, n, a, lo, hi))


if __name__ == "__main__":
    main()
