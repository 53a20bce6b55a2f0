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

RANKERS = ["model", "keyword", "tags+model"]
COLOURS = {"model": "#1f77b4", "keyword": "#ff7f0e",
           "tags+model": "#2ca02c", "cc": "#d62728", "tagged": "#7f7f7f"}


def load(path):
    rows = list(csv.reader(open(path)))
    wins = {}
    for r in rows[1:]:
        w = wins.setdefault(r[0], {"k": {}, "eq": {}, "set": {}, "p50": {},
                                   "all": {}})
        if r[1] == "info":
            w["info"] = dict(commits=int(r[2]), backported=int(r[4]),
                             untagged=int(r[6]), dropped=int(r[8]),
                             unmined=int(r[10]))
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
        elif r[2] in ("p50", "all"):
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


def table(name, wins):
    out = ["", "#### %s" % name, "",
           "| window | commits | backported (untagged) | dropped | "
           "Cc: stable set P / R | tagged set P / R | model P at tagged R "
           "| keyword P at tagged R | tags+model P at tagged R | "
           "untagged found: model p>=0.5 / at tagged R |",
           "|---|---:|---:|---:|---|---|---|---|---|---|"]
    tot = dict(b=0, u=0, u50=0, ueq=0)
    for wn, w in wins.items():
        i, s = w["info"], w["set"]
        cc, tg = s["cc-stable"], s["tagged"]
        p50 = w["p50"].get("model", w["all"].get("model"))
        e = w["eq"].get(("model", "tagged"))
        tot["b"] += i["backported"]
        tot["u"] += i["untagged"]
        tot["u50"] += p50["un"] if p50 else 0
        tot["ueq"] += e["un"] if e else 0
        out.append("| %s | %d | %d (%d) | %d | %s | %s / %s | %s | %s | "
                   "%s | %s / %s of %d |" % (
                       wn, i["commits"], i["backported"], i["untagged"],
                       i["dropped"],
                       ("%s / %s" % (pct(cc["p"]), pct(cc["r"])))
                       if cc["n"] else "none tagged",
                       pct(tg["p"]), pct(tg["r"]),
                       eq_cell(w, "model", "tagged"),
                       eq_cell(w, "keyword", "tagged"),
                       eq_cell(w, "tags+model", "tagged"),
                       p50["un"] if p50 else "-",
                       e["un"] if e else "-", i["untagged"]))
    out.append("")
    out.append("%s: %d backported, %d of them untagged; the model's "
               "p(fix) >= 0.5 list holds %d of the untagged, its list cut "
               "at the tagged set's recall %d." % (
                   name, tot["b"], tot["u"], tot["u50"], tot["ueq"]))
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
        kmax = max(k for r in RANKERS for k, _ in pooled(wins, r) or [(10, 0)])
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
        step = 50 if kmax <= 400 else 200 if kmax <= 2000 else 500
        for k in range(0, kmax + 1, step):
            o.append('<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>'
                     % (X(k), Y(0) + 15, k))
        o.append('<text x="%.1f" y="%.1f" text-anchor="middle">k</text>' %
                 (L + pw / 2, Y(0) + 30))
        ly = y0 + 10
        for r in RANKERS:
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
