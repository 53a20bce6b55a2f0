#!/usr/bin/env python3
"""Includes only go down: every project #include in scoring/ and bot/
names a header of its own room or of a room that its room's README.md
lists on its "May include:" line (docs/ARCHITECTURE.md draws the layers).
Also fails on a source file outside a room, a room without a README or
that line, and an include written relative ("../") or without its room.
Prints one line per violation: FILE:LINE: ROOM may not include HEADER."""
import os
import re
import sys

from styleutil import TOP, report, sources

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rooms():
    out = {}
    for top in ('scoring', 'bot'):
        for name in sorted(os.listdir(os.path.join(TOP, top))):
            d = os.path.join(TOP, top, name)
            if os.path.isdir(d):
                out[f'{top}/{name}'] = d
    return out


def allowed(room, path):
    try:
        text = open(os.path.join(path, 'README.md'), encoding='utf-8').read()
    except OSError:
        return None
    m = re.search(r'^May include:(.*)$', text, re.M)
    if not m:
        return None
    words = [w.strip(' .,`') for w in m.group(1).split()]
    return {w for w in words if '/' in w} | {room}


def check():
    bad = []
    rs = rooms()
    allow = {}
    for room, path in rs.items():
        a = allowed(room, path)
        if a is None:
            bad.append(f'{room}: no README.md with a "May include:" line')
            a = {room}
        unknown = a - set(rs)
        if unknown:
            bad.append(f'{room}/README.md: unknown rooms {sorted(unknown)}')
        allow[room] = a
    for top in ('scoring', 'bot'):
        for f in os.listdir(os.path.join(TOP, top)):
            if f.endswith(('.c', '.h', '.inc')):
                bad.append(f'{top}/{f}: source outside a room')
    for room in rs:
        for rel, text in sources(room, ('.c', '.h', '.inc'), recurse=False):
            for n, line in enumerate(text.split('\n'), 1):
                m = INC.match(line)
                if not m:
                    continue
                h = m.group(1)
                target = '/'.join(h.split('/')[:2])
                if h.startswith('.') or target not in rs:
                    bad.append(f'{rel}:{n}: include "{h}" does not '
                               'name its room from the project root')
                elif target not in allow[room]:
                    bad.append(f'{rel}:{n}: {room} may not include {h}')
    return bad


def main():
    return report(check(), 'includes: {} violation(s)')


if __name__ == '__main__':
    sys.exit(main())
