#!/usr/bin/python3
"""mkseries.py - write patch series as list mail, for the demo, the bot's
end-to-end tests and the load benchmark.

Each series is `git format-patch --cover-letter --thread` shaped: a cover
letter (for more than one patch) and patches "[PATCH vN n/m]" replying to
it, with Message-ID, In-Reply-To/References, List-Id and Date headers,
a changelog, trailers, a diffstat and a unified diff against the files of
the kernel-like tree that mkrepo.py builds.  Some series are fixes (the
language of fixes, Fixes:, a NULL guard), some a v2 of an earlier one,
and some get review replies (Reviewed-by / Tested-by) from the list.

Usage: mkseries.py OUTDIR [--count N] [--seed S] [--start-date ISO]
                          [--patchwork-data]   also write OUTDIR/data.json
                                               for tests/lib/pw_standin.py
Writes OUTDIR/mail/NNNNN-....eml in posting order; prints a JSON summary.
"""
import argparse
import datetime
import email.utils
import json
import os
import random

LISTS = [
    # subsystem, path, list id, list address, project link name
    ("foo", "drivers/net/foo", "netdev.vger.kernel.org", "netdev@vger.kernel.org", "netdev"),
    ("pwm", "drivers/pwm", "linux-pwm.vger.kernel.org", "linux-pwm@vger.kernel.org", "linux-pwm"),
    ("ext9", "fs/ext9", "linux-ext9.vger.kernel.org", "linux-ext9@vger.kernel.org", "linux-ext9"),
]
AUTHORS = ["Grace Hopper <grace@example.com>", "Alan Turing <alan@example.org>",
           "Ada Lovelace <ada@example.net>", "Ken Thompson <ken@example.com>",
           "Frances Allen <fran@example.com>"]
REVIEWERS = ["Jakub Kicinski <kuba@kernel.org>", "Paolo Abeni <pabeni@redhat.com>",
             "Uwe Kleine-Koenig <ukleinek@kernel.org>", "Jan Kara <jack@suse.cz>"]
FEATURES = ["add ring resize support", "convert to the new DMA API",
            "rework runtime PM", "support the v2 register layout",
            "split the probe path"]
FIXES = [("fix NULL pointer dereference in {f}()",
          "{f}() dereferences the skb returned by {f}_build() without\n"
          "checking it. Under memory pressure this causes a panic:\n\n"
          "  BUG: kernel NULL pointer dereference, address: 0000000000000010\n\n"
          "Return -ENOMEM instead."),
         ("fix use-after-free on close",
          "syzbot reports a use-after-free in {f}(): the ring is freed\n"
          "before the interrupt is disabled. KASAN: slab-use-after-free.")]
FUNCS = ["foo_xmit", "pwm_apply", "ext9_map", "bar_config"]


def diff_for(path, r, fix):
    add = ["+\tif (!skb)", "+\t\treturn -ENOMEM;"] if fix else [
        f"+\tret = {r.choice(FUNCS)}(priv, {r.randint(0, 99)});" for _ in range(r.randint(3, 30))]
    rem = [] if fix else [f"-\tval = {r.randint(0, 9)};" for _ in range(r.randint(0, 4))]
    start = r.randint(10, 200)
    ctx = [" \tskb = foo_build(priv, len);", " ", " \treturn foo_queue(priv, skb);"]
    body = ctx[:1] + rem + add + ctx[1:]
    old_n = 3 + len(rem)
    new_n = 3 + len(add)
    return (f"diff --git a/{path} b/{path}\n"
            f"index 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -{start},{old_n} +{start},{new_n} @@ static int foo_probe(struct device *dev)\n"
            + "\n".join(body) + "\n"), len(add), len(rem)


def mail(headers, body):
    h = "".join(f"{k}: {v}\n" for k, v in headers)
    return h + "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n" \
        "Content-Transfer-Encoding: 8bit\n\n" + body


class Writer:
    def __init__(self, outdir, start):
        self.dir = os.path.join(outdir, "mail")
        os.makedirs(self.dir, exist_ok=True)
        self.n = 0
        self.t = start

    def write(self, text, tag):
        self.n += 1
        name = f"{self.n:05d}-{tag}.eml"
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)
        return name

    def date(self, r):
        self.t += datetime.timedelta(seconds=r.randint(30, 900))
        return email.utils.format_datetime(self.t)


def series(w, r, k, version=1, prev=None):
    sub = r.choice(LISTS) if prev is None else prev["sub"]
    author = r.choice(AUTHORS) if prev is None else prev["author"]
    fix = r.random() < 0.3 if prev is None else prev["fix"]
    n = 1 if fix else r.randint(1, 4)
    title = (r.choice(FIXES) if fix else (r.choice(FEATURES), "")) if prev is None else prev["title"]
    f = r.choice(FUNCS)
    vtag = f" v{version}" if version > 1 else ""
    stamp = f"2026{k:06d}.{version}"
    domain = author.split("@")[1].rstrip(">")
    ids = {}
    cover_id = None
    base = [("From", author), ("To", sub[3]), ("List-Id", f"<{sub[2]}>")]
    subject = f"{sub[0]}: {title[0].format(f=f)}"
    if n > 1:
        cover_id = f"<{stamp}-0-{k}@{domain}>"
        body = (f"This series {title[0].format(f=f)} for the {sub[0]} driver.\n\n"
                + (f"Changes in v{version}:\n- addressed review comments\n\n" if version > 1 else "")
                + f"{author.split(' <')[0]} ({n}):\n" +
                "".join(f"  {sub[0]}: part {i + 1}\n" for i in range(n)) + "\n-- \n2.43.0\n")
        w.write(mail(base + [("Subject", f"[PATCH{vtag} 0/{n}] {subject}"),
                             ("Date", w.date(r)), ("Message-ID", cover_id)], body), f"{k}-v{version}-0")
    msgids = []
    for i in range(1, n + 1):
        mid = f"<{stamp}-{i}-{k}@{domain}>"
        path = f"{sub[1]}/{r.choice(['core', 'main', 'util'])}.c"
        d, a, rm = diff_for(path, r, fix)
        psub = subject if n == 1 else f"{sub[0]}: {title[0].format(f=f)} (part {i})"
        nums = f" {i}/{n}" if n > 1 else ""
        trailers = []
        # a third of the fixes carry no Fixes: tag, as on real lists (the
        # bot's stable check is for them); no draw, so the stream is kept
        untagged = k % 3 == 2
        if fix:
            bits = r.getrandbits(48)
            if not untagged:
                trailers += [f"Fixes: {bits:012x} (\"{sub[0]}: add xmit path\")"]
            if r.random() < 0.3:
                trailers += ["Reported-by: syzbot+0123456789abcdef@syzkaller.appspotmail.com"]
        trailers += [f"Signed-off-by: {author}"]
        body = (title[1].format(f=f) if fix else
                f"Prepare {sub[0]} for {title[0]}: this moves the setup into\n"
                f"a helper so that the next patch can reuse it.") + "\n\n" + \
            "\n".join(trailers) + "\n---\n" + \
            f" {path} | {a + rm} {'+' * a}{'-' * rm}\n 1 file changed\n\n" + d + "-- \n2.43.0\n"
        hdr = base + [("Subject", f"[PATCH{vtag}{nums}] {psub}"), ("Date", w.date(r)),
                      ("Message-ID", mid)]
        if cover_id:
            hdr += [("In-Reply-To", cover_id), ("References", cover_id)]
        w.write(mail(hdr, body), f"{k}-v{version}-{i}")
        msgids.append((mid, f"[PATCH{vtag}{nums}] {psub}"))
    # review on the list
    if r.random() < 0.5:
        mid, s = r.choice(msgids)
        rev = r.choice(REVIEWERS)
        tested = r.random() < 0.3
        body = (f"On {w.t:%a, %d %b %Y}, {author.split(' <')[0]} wrote:\n> {title[0]}\n\n"
                + ("Tested on 40 machines over the weekend, no regressions.\n\n" if tested else
                   "Looks good to me.\n\n")
                + f"Reviewed-by: {rev}\n" + (f"Tested-by: {rev}\n" if tested else ""))
        w.write(mail([("From", rev), ("To", author), ("Cc", sub[3]), ("List-Id", f"<{sub[2]}>"),
                      ("Subject", "Re: " + s), ("Date", w.date(r)),
                      ("Message-ID", f"<r{stamp}-{k}@{rev.split('@')[1].rstrip('>')}>"),
                      ("In-Reply-To", mid), ("References", (cover_id + " " if cover_id else "") + mid)],
                     body), f"{k}-v{version}-review")
    return {"sub": sub, "author": author, "fix": fix, "title": title, "n": n,
            "version": version, "cover": cover_id, "patches": [m for m, _ in msgids]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start-date", default="2026-11-10T09:00:00+00:00")
    ap.add_argument("--patchwork-data", action="store_true")
    a = ap.parse_args()
    r = random.Random(a.seed)
    w = Writer(a.outdir, datetime.datetime.fromisoformat(a.start_date))
    made = []
    for k in range(a.count):
        prev = made[r.randrange(len(made))] if made and r.random() < 0.15 else None
        if prev and prev["version"] < 3:
            made.append(series(w, r, k, prev["version"] + 1, prev))
        else:
            made.append(series(w, r, k))
    if a.patchwork_data:
        data = {"projects": [{"id": i + 1, "name": l[4].capitalize(), "link_name": l[4],
                              "list_id": l[2], "list_email": l[3]}
                             for i, l in enumerate(LISTS)],
                "users": [{"id": 1, "username": "bot", "email": "bot@example.org",
                           "token": "0123456789abcdef0123456789abcdef01234567",
                           "maintains": [l[4] for l in LISTS], "superuser": False}]}
        with open(os.path.join(a.outdir, "data.json"), "w") as f:
            json.dump(data, f, indent=1)
    json.dump({"series": len(made), "mails": w.n,
               "patches": sum(s["n"] for s in made),
               "fixes": sum(1 for s in made if s["fix"]),
               "versions_linked": sum(1 for s in made if s["version"] > 1)}, __import__("sys").stdout)
    print()


if __name__ == "__main__":
    main()
