"""styleutil.py - what the style checks (tests/style/test_*.py) share:
the top of the source tree, its source files and the report each check
prints.  Not a test itself (ctest runs test_*.py only)."""
import os

TOP = os.environ.get('PT_SOURCE_DIR') or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..')


def sources(folder, endings, recurse=True):
    """The files in TOP/folder (and below it when recurse) whose names end
    in one of endings, sorted, as (path relative to TOP, text)."""
    for root, dirs, files in os.walk(os.path.join(TOP, folder)):
        dirs.sort()
        if not recurse:
            dirs[:] = []
        for f in sorted(files):
            if not f.endswith(endings):
                continue
            path = os.path.join(root, f)
            with open(path, encoding='utf-8', errors='replace') as fh:
                yield os.path.relpath(path, TOP), fh.read()


def report(bad, summary):
    """Print each finding, then summary with their count in its {};
    the exit status: 1 when there is any."""
    for b in bad:
        print(b)
    print(summary.format(len(bad)))
    return 1 if bad else 0
