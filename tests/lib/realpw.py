#!/usr/bin/python3
"""realpw.py - helpers of the real-Patchwork conformance test
(tests/integration/test_real_patchwork.sh); owns nothing of patchtriage.

  realpw.py subset MBOX[.gz] N OUT    the first N messages of an mbox
                                      (N = 0: all) into OUT, as mboxrd
                                      read by Python's mailbox module, as
                                      Patchwork's parsearchive reads it
  realpw.py counts URL PROJECT        one JSON object counting what the
                                      server holds: patches, series
                                      (complete or not), the patches of
                                      complete series, events by category,
                                      checks by context and duplicates

Python 3 standard library only; talks to URL (loopback) with GETs only.
"""

import collections
import gzip
import json
import mailbox
import os
import sys
import tempfile
import urllib.request


def subset(src, n, out):
    tmp = None
    if src.endswith('.gz'):
        fd, tmp = tempfile.mkstemp(suffix='.mbox')
        with os.fdopen(fd, 'wb') as f, gzip.open(src, 'rb') as g:
            while True:
                chunk = g.read(1 << 20)
                if not chunk:
                    break
                f.write(chunk)
        src = tmp
    box = mailbox.mbox(src, create=False)
    dst = mailbox.mbox(out, create=True)
    kept = 0
    try:
        dst.lock()
        for msg in box:
            if n and kept >= n:
                break
            dst.add(msg)
            kept += 1
        dst.flush()
        dst.unlock()
    finally:
        box.close()
        dst.close()
        if tmp:
            os.unlink(tmp)
    print(kept)


def walk(base, path):
    url = base.rstrip('/') + '/api/1.3/' + path
    items = []
    while url:
        with urllib.request.urlopen(url, timeout=120) as r:
            items += json.load(r)
            link = r.headers.get('Link') or ''
        url = None
        for part in link.split(','):
            if 'rel="next"' in part:
                url = part[part.index('<') + 1:part.index('>')]
    return items


def counts(base, project):
    q = 'project=%s&per_page=250' % project
    patches = walk(base, 'patches/?' + q)
    series = walk(base, 'series/?' + q)
    # oldest first: pages stay put while events are added
    events = walk(base, 'events/?order=date&' + q)
    done = [s for s in series if s['received_all']]
    in_done = sorted({p['id'] for s in done for p in s['patches']})
    checks = collections.Counter()
    dups = 0
    checked = collections.defaultdict(set)
    for e in events:
        if e['category'] != 'check-created':
            continue
        pid = e['payload']['patch']['id']
        ctx = e['payload']['check']['context']
        checks[ctx] += 1
        dups += ctx in checked[pid]
        checked[pid].add(ctx)
    risk = {p for p, s in checked.items() if 'patchtriage-risk' in s}
    json.dump({
        'patches': len(patches),
        'series': len(series),
        'series_complete': len(done),
        'series_incomplete': len(series) - len(done),
        'patches_in_complete': len(in_done),
        'patches_in_incomplete': len(patches) - len(in_done),
        'events': len(events),
        'events_by_category': dict(collections.Counter(
            e['category'] for e in events)),
        'checks': dict(checks),
        'duplicate_checks': dups,
        'complete_without_risk_check': [p for p in in_done
                                        if p not in risk],
        'incomplete_without_risk_check': sorted(
            p['id'] for p in patches
            if p['id'] not in set(in_done) and p['id'] not in risk),
        'incomplete_with_check': sorted(p for p in checked
                                        if p not in set(in_done)),
    }, sys.stdout, sort_keys=True)
    print()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'subset':
        subset(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == 'counts':
        counts(sys.argv[2], sys.argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
