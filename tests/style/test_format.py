#!/usr/bin/env python3
"""The tree is formatted as .clang-format says: every .c and .h under
scoring/, bot/ and tests/ (the fuzz corpus aside) is checked with
`clang-format --dry-run`, one line per place that differs, and the
check exits 1 if there is any (run clang-format -i on the file named).
Formatting differs between clang-format releases, so the check runs
with the one Debian 12 ships (14); where clang-format is missing or of
another major version it says so and skips (exit 77)."""
import os
import re
import shutil
import subprocess
import sys

from styleutil import TOP, report

DIRS = ('scoring', 'bot', 'tests')
SKIP_DIR = os.path.join('tests', 'fuzz', 'corpus')
MAJOR = 14
SKIP = 77
PLACE = re.compile(r'^(\S+?):(\d+):\d+: (?:error|warning): code should be '
                   r'clang-formatted')


def files():
    out = []
    for d in DIRS:
        for root, dirs, names in os.walk(os.path.join(TOP, d)):
            dirs.sort()
            rel = os.path.relpath(root, TOP)
            if rel == SKIP_DIR or rel.startswith(SKIP_DIR + os.sep):
                dirs[:] = []
                continue
            out += [os.path.relpath(os.path.join(root, n), TOP)
                    for n in sorted(names) if n.endswith(('.c', '.h'))]
    return out


def tool():
    exe = shutil.which('clang-format')
    if not exe:
        return None, 'clang-format is not installed'
    ver = subprocess.run([exe, '--version'], capture_output=True,
                         text=True).stdout
    m = re.search(r'version (\d+)\.', ver)
    if not m or int(m.group(1)) != MAJOR:
        return None, f'clang-format {MAJOR} wanted, found: {ver.strip()}'
    return exe, None


def main():
    exe, why = tool()
    if not exe:
        print(f'skip: {why}')
        return SKIP
    res = subprocess.run([exe, '--dry-run', '--style=file'] + files(),
                         capture_output=True, text=True, cwd=TOP,
                         errors='replace')
    bad, seen = [], set()
    for line in res.stderr.splitlines():
        m = PLACE.match(line)
        if m and m.group(1) not in seen:
            seen.add(m.group(1))
            bad.append(f'{m.group(1)}:{m.group(2)}: not formatted (run: '
                       f'clang-format -i {m.group(1)})')
        elif not m and ': error:' in line:
            bad.append(line)
    return report(bad, 'format: {} file(s) to format')


if __name__ == '__main__':
    sys.exit(main())
