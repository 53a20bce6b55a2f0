#!/usr/bin/python3
"""tests/lib/mkarchive.py OUT.mbox [SEED] - a synthetic list archive for
the archive model's tests (test_archive_model.sh): three years of single
patches on linux-foo, each applied by the maintainer with a b4-style
thank-you naming its commit id.  Some draw a review (Reviewed-by, with
inline comments), some a tester's Tested-by.  A posting is later named
by a Fixes: posting with a probability that grows with its size and
falls when it was reviewed and tested, so a model that learns size and
review must rank the bug-introducing postings first.  Deterministic for
a seed; prints what it wrote as JSON on stdout (postings, bugs).
"""
import email.utils
import json
import random
import sys

T0 = 1577872800  # 2020-01-01 10:00 UTC
DAY = 86400
MAINT = "Mia Maintainer <mia@example.org>"
REVIEWERS = ["Rob Reviewer <rob@example.org>",
             "Rae Reviewer <rae@example.org>"]
TESTER = "Tom Tester <tom@example.org>"
AUTHORS = ["Ann Author%d <ann%d@example.org>" % (i, i) for i in range(12)]


def mail(out, msgid, frm, t, subj, body, irt=None):
    out.append("From mboxrd@z Thu Jan  1 00:00:00 1970\n")
    out.append("From: %s\nDate: %s\nSubject: %s\nMessage-ID: <%s>\n" %
               (frm, email.utils.formatdate(t, usegmt=True), subj, msgid))
    if irt:
        out.append("In-Reply-To: <%s>\nReferences: <%s>\n" % (irt, irt))
    out.append("List-Id: <linux-foo.vger.kernel.org>\n"
               "Content-Type: text/plain; charset=utf-8\n\n")
    for line in body.split("\n"):
        if line.lstrip(">").startswith("From "):
            line = ">" + line
        out.append(line + "\n")
    out.append("\n")


def patch_body(frm, log, n, name, tags=""):
    path = "drivers/foo/foo-%s.c" % name
    added = "".join("+\tfoo_%s_%d();\n" % (name, i) for i in range(n))
    return ("%s\n\n%sSigned-off-by: %s\n---\n %s | %d +\n 1 file changed, "
            "%d insertions(+)\n\ndiff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n"
            "@@ -1,2 +1,%d @@\n a\n%s b\n-- \n2.43.0" %
            (log, tags, frm, path, n, n, path, path, path, path, n + 2, added))


def main():
    out_path = sys.argv[1]
    rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
    out, fixes = [], []
    npost = 900
    bugs = 0
    for i in range(npost):
        t = T0 + int(i * 3 * 365 * DAY / npost)
        author = AUTHORS[i % len(AUTHORS)]
        name = "n%d" % i
        big = rnd.random() < 0.35
        n = rnd.randint(60, 200) if big else rnd.randint(1, 12)
        subj = "foo: %s: rework the %s path" % (name, name)
        pid = "p%d@foo" % i
        mail(out, pid, author, t, "[PATCH] " + subj,
             patch_body(author, "Rework the %s path." % name, n, name))
        reviewed = rnd.random() < 0.5
        tested = rnd.random() < 0.3
        if reviewed:
            rv = REVIEWERS[i % 2]
            mail(out, "r%d@foo" % i, rv, t + DAY, "Re: [PATCH] " + subj,
                 "> +\tfoo_%s_0();\n\nWhy not unwind here?\n> b\n\n"
                 "Otherwise fine.\n\nReviewed-by: %s\n" % (name, rv), pid)
        if tested:
            mail(out, "t%d@foo" % i, TESTER, t + 2 * DAY,
                 "Re: [PATCH] " + subj,
                 "Tested on 3 boards.\n\nTested-by: %s\n" % TESTER, pid)
        sha = "%012x" % rnd.getrandbits(48)
        mail(out, "a%d@foo" % i, MAINT, t + 3 * DAY, "Re: [PATCH] " + subj,
             "On Mon, someone wrote:\n> Rework.\n\nApplied, thanks!\n\n"
             "[1/1] %s\n      commit: %s\n\nBest regards,\n-- \nMia\n" %
             (subj, sha), pid)
        p = 0.04 + (0.45 if big else 0) - (0.12 if reviewed else 0) \
            - (0.08 if tested else 0)
        if rnd.random() < max(p, 0.01):
            bugs += 1
            fixes.append((t + rnd.randint(20, 200) * DAY, i, sha, subj))
    for k, (t, i, sha, subj) in enumerate(sorted(fixes)):
        author = AUTHORS[(i + 5) % len(AUTHORS)]
        mail(out, "f%d@foo" % k, author, t,
             "[PATCH] foo: n%d: fix a crash in the n%d path" % (i, i),
             patch_body(author, "Fix a crash.", 2, "fix%d" % k,
                        "Fixes: %s (\"%s\")\n" % (sha, subj)))
    # the mbox is in time order: a reader sees the fixes last, as a
    # list archive would hold them after the postings they fix
    with open(out_path, "w") as f:
        f.write("".join(out))
    json.dump({"postings": npost, "bugs": bugs}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
