#!/usr/bin/python3
"""report.py NAME=CSV... --svg FILE: the Markdown table and the
precision-against-k plot of docs/EVALUATION.md from the CSV that
tests/bench/stable/eval prints (one CSV per repository).  The SVG is
written by hand (no plotting library): precision at k pooled over the
windows of each repository (sum of hits over sum of k, k only where
every window has that many candidates), one line per ranker, the two
tag sets as dashed horizontal lines."""
import csv
import sys

RANKERS = ["model", "keyword", "model+kw", "tags+model", "tiered",
           "tags+model+kw", "tiered+deps", "tiered-demote", "tiered+fixword",
           "tiered+series", "tiered+cites", "tiered+all", "tiered+hint",
           "tiered+hint+ci", "tiered+hint+build", "tiered+hint+words",
           "tiered+hint+prereq", "tiered+hint+ci+prereq",
           "tiered+hint+ci+words"]
SIGNALS = [("sig-fixword", "subject says fix"),
           ("sig-series", "series sibling of a tagged candidate"),
           ("sig-series-le4", "the same, series of at most 4"),
           ("sig-cites", "names a commit the branch has"),
           ("sig-revert", "reverts a commit the branch has"),
           ("sig-fixed-by-tagged", "a tagged candidate fixes it"),
           ("sig-build-ci", "build: CI or packaging component"),
           ("sig-build-comp", "build: CI, packaging or build component"),
           ("sig-build-words", "build: toolchain words"),
           ("sig-build-files", "build: only build, CI or packaging files"),
           ("sig-build-comp-files", "build: build component and only "
            "build files"),
           ("sig-build-any", "build: CI component, toolchain words, or "
            "build component and only build files"),
           ("sig-prereq", "a tagged candidate conflicts without it, not "
            "with it")]
UNTAGGED = [("model", "p50"), ("tags+model", "p50"), ("tiered", "at-n"),
            ("tags+model+kw", "at-n"), ("tiered+deps", "at-n"),
            ("tiered+fixword", "at-n"), ("tiered+series", "at-n"),
            ("tiered+cites", "at-n"), ("tiered+all", "at-n"),
            ("tiered+hint", "at-n"), ("tiered+hint+ci", "at-n"),
            ("tiered+hint+build", "at-n"), ("tiered+hint+words", "at-n"),
            ("tiered+hint+prereq", "at-n"),
            ("tiered+hint+ci+prereq", "at-n"),
            ("tiered+hint+ci+words", "at-n"), ("tiered+hint", "p50"),
            ("tiered+hint+ci+words", "p50")]
P50 = {"model": "model p>=0.5: found / list / P",
       "tags+model": "tags+model list (tags, then p>=0.5): found / list / "
       "P",
       "tiered+hint": "tiered+hint, then p>=0.5: found / list / P",
       "tiered+hint+ci+words": "the command's default list "
       "(tiered+hint+ci+words, then p>=0.5): found / list / P"}
PLOT = ["model", "keyword", "model+kw", "tags+model", "tiered",
        "tiered+hint", "tiered+hint+ci+words"]
COLOURS = {"model": "#1f77b4", "keyword": "#ff7f0e", "model+kw": "#8c564b",
           "tags+model": "#2ca02c", "tiered": "#9467bd",
           "tags+model+kw": "#17becf", "tiered+deps": "#bcbd22",
           "tiered-demote": "#e377c2", "tiered+fixword": "#7f7f00",
           "tiered+series": "#aec7e8", "tiered+cites": "#98df8a",
           "tiered+all": "#ff9896", "tiered+hint": "#000000",
           "tiered+hint+ci+words": "#e6550d",
           "cc": "#d62728", "tagged": "#7f7f7f"}


def load(path):
    rows = list(csv.reader(open(path)))
    wins = {}
    for r in rows[1:]:
        w = wins.setdefault(r[0], {"k": {}, "eq": {}, "set": {}, "p50": {},
                                   "all": {}, "at-n": {}})
        if r[1] == "info":
            w["info"] = dict(commits=int(r[2]), backported=int(r[4]),
                             untagged=int(r[6]), dropped=int(r[8]),
                             unmined=int(r[10]),
                             dropped_tp=int(r[12]) if len(r) > 12 else 0)
        elif r[2] == "set":
            w["set"][r[1]] = dict(n=int(r[3]), tp=int(r[4]),
                                  p=float(r[5]), r=float(r[6]))
        elif r[2].startswith("eq-"):
            if r[3] != "none":
                w["eq"][(r[1], r[2][3:])] = dict(
                    k=int(r[3]), tp=int(r[4]), p=float(r[5]),
                    r=float(r[6]), un=int(r[7]), ratio=float(r[9] or 0))
        elif r[2] == "k":
            w["k"].setdefault(r[1], {})[int(r[3])] = int(r[4])
        elif r[2] in ("p50", "all", "at-n"):
            w[r[2]][r[1]] = dict(k=int(r[3]), tp=int(r[4]), p=float(r[5]),
                                 r=float(r[6]), un=int(r[7]))
    return wins


def pct(x):
    return "%.0f%%" % (100 * x)


def eq_cell(w, ranker, ref):
    e = w["eq"].get((ranker, ref))
    if not e:
        return "not reached"
    return "%s at k=%d (%.2fx)" % (pct(e["p"]), e["k"], e["ratio"])


def pr(st):
    return "%s / %s" % (pct(st["p"]), pct(st["r"])) if st["n"] else "none"


def table(name, wins):
    """Three tables: the window's facts and tag sets, each ranker's
    precision at the tagged set's recall (x its precision), and what the
    lists a maintainer would read find among the untagged backports."""
    out = ["", "#### %s: windows and tag sets" % name, "",
           "| window | commits | backported (untagged) | dropped (backported)"
           " | Cc: stable P / R | tagged P / R | tagged, not dropped P / R "
           "| best possible vs tagged |",
           "|---|---:|---:|---:|---|---|---|---:|"]
    for wn, w in wins.items():
        i, s = w["info"], w["set"]
        tg = s["tagged"]
        out.append("| %s | %d | %d (%d) | %d (%d) | %s | %s | %s | %s |" % (
            wn, i["commits"], i["backported"], i["untagged"], i["dropped"],
            i["dropped_tp"], pr(s["cc-stable"]), pr(tg),
            pr(s["tagged-kept"]) if "tagged-kept" in s else "-",
            "%.2fx" % (1 / tg["p"]) if tg["p"] else "-"))
    out += ["", "#### %s: precision at the tagged set's recall" % name, "",
            "| window | " + " | ".join(RANKERS) + " |",
            "|---|" + "---|" * len(RANKERS)]
    for wn, w in wins.items():
        out.append("| %s | %s |" % (wn, " | ".join(
            eq_cell(w, r, "tagged") for r in RANKERS)))
    out += ["", "#### %s: untagged backports found" % name, "",
            "| window | untagged | " + " | ".join(
                "%s at k = tagged: found / P" % r if kind == "at-n" else
                P50[r] for r, kind in UNTAGGED) + " |",
            "|---|---:|" + "---|" * len(UNTAGGED)]
    tot = {}
    for wn, w in wins.items():
        i = w["info"]
        cells = []
        for r, kind in UNTAGGED:
            e = w[kind].get(r) or (w["all"].get(r) if kind == "p50"
                                   else None)
            t = tot.setdefault((r, kind), [0, 0, 0])
            if not e:
                cells.append("-")
                continue
            t[0] += e["un"]
            t[1] += e["k"]
            t[2] += e["tp"]
            cells.append("%d / %d / %s" % (e["un"], e["k"], pct(e["p"]))
                         if kind == "p50" else
                         "%d / %s" % (e["un"], pct(e["p"])))
        out.append("| %s | %d | %s |" % (wn, i["untagged"],
                                        " | ".join(cells)))
    nun = sum(w["info"]["untagged"] for w in wins.values())
    nb = sum(w["info"]["backported"] for w in wins.values())
    out.append("| all | %d | %s |" % (nun, " | ".join(
        ("%d / %d / %s" % (t[0], t[1], pct(t[2] / t[1] if t[1] else 0))
         if kind == "p50" else "%d / %s" % (
             t[0], pct(t[2] / t[1] if t[1] else 0)))
        for (r, kind), t in tot.items())))
    out.append("")
    out.append("%s: %d backported, %d of them untagged." % (name, nb, nun))
    out += ["", "#### %s: untagged-backport signals" % name, "",
            "Untagged candidates with the signal: backported / not "
            "backported, per window and in all.", "",
            "| signal | " + " | ".join(wins) + " | all |",
            "|---|" + "---:|" * (len(wins) + 1)]
    for sig, label in SIGNALS:
        cells, tp, fp = [], 0, 0
        for w in wins.values():
            st = w["set"].get(sig)
            if not st:
                cells.append("-")
                continue
            tp += st["tp"]
            fp += st["n"] - st["tp"]
            cells.append("%d / %d" % (st["tp"], st["n"] - st["tp"]))
        out.append("| %s | %s | %d / %d |" % (label, " | ".join(cells),
                                              tp, fp))
    return out


def pooled(wins, ranker):
    ks = None
    for w in wins.values():
        have = set(w["k"].get(ranker, {}))
        ks = have if ks is None else ks & have
    pts = []
    for k in sorted(ks or []):
        tp = sum(w["k"][ranker][k] for w in wins.values())
        pts.append((k, tp / (k * len(wins))))
    return pts


def set_p(wins, which):
    n = sum(w["set"][which]["n"] for w in wins.values())
    tp = sum(w["set"][which]["tp"] for w in wins.values())
    return tp / n if n else None


def svg(repos, path):
    W, H, L, B, T, R = 760, 320 * len(repos), 60, 40, 20, 150
    ph = 320 - T - B
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>']
    for n, (name, wins) in enumerate(repos):
        y0 = n * 320 + T
        kmax = max(k for r in PLOT for k, _ in pooled(wins, r) or [(10, 0)])
        pw = W - L - R

        def X(k):
            return L + pw * k / kmax

        def Y(p):
            return y0 + ph * (1 - p)
        o.append('<text x="%d" y="%d" font-weight="bold">%s: precision of '
                 'the top k (pooled over %d windows)</text>' % (
                     L, y0 - 5, name, len(wins)))
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' %
                 (L, Y(0), L + pw, Y(0)))
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' %
                 (L, Y(0), L, Y(1)))
        for p in (0, 0.25, 0.5, 0.75, 1):
            o.append('<text x="%d" y="%.1f" text-anchor="end">%d%%</text>' %
                     (L - 5, Y(p) + 4, p * 100))
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" '
                     'stroke="#eee"/>' % (L + 1, Y(p), L + pw, Y(p)))
        step = (5 if kmax <= 50 else 50 if kmax <= 400 else
                200 if kmax <= 2000 else 500)
        for k in range(0, kmax + 1, step):
            o.append('<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>'
                     % (X(k), Y(0) + 15, k))
        o.append('<text x="%.1f" y="%.1f" text-anchor="middle">k</text>' %
                 (L + pw / 2, Y(0) + 30))
        ly = y0 + 10
        for r in PLOT:
            pts = pooled(wins, r)
            if not pts:
                continue
            o.append('<polyline fill="none" stroke="%s" stroke-width="2" '
                     'points="%s"/>' % (COLOURS[r], " ".join(
                         "%.1f,%.1f" % (X(k), Y(p)) for k, p in pts)))
            for k, p in pts:
                o.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' %
                         (X(k), Y(p), COLOURS[r]))
            o.append('<text x="%d" y="%d" fill="%s">%s</text>' %
                     (L + pw + 10, ly, COLOURS[r], r))
            ly += 16
        for s, label in (("cc-stable", "Cc: stable set"),
                         ("tagged", "Cc/Fixes set")):
            p = set_p(wins, s)
            if p is None:
                continue
            c = COLOURS["cc" if s == "cc-stable" else "tagged"]
            o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" '
                     'stroke-dasharray="6,4"/>' % (L, Y(p), L + pw, Y(p), c))
            o.append('<text x="%d" y="%d" fill="%s">%s (%s)</text>' %
                     (L + pw + 10, ly, c, label, pct(p)))
            ly += 16
    o.append("</svg>")
    open(path, "w").write("\n".join(o) + "\n")


def main():
    args = sys.argv[1:]
    out_svg = None
    if "--svg" in args:
        i = args.index("--svg")
        out_svg = args[i + 1]
        del args[i:i + 2]
    repos = []
    for a in args:
        name, path = a.split("=", 1)
        repos.append((name, load(path)))
    for name, wins in repos:
        print("\n".join(table(name, wins)))
    if out_svg:
        svg(repos, out_svg)


main()
