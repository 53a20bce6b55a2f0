#!/usr/bin/python3
"""pi2mbox.py OUT GITDIR... - write the messages of public-inbox epochs
(the `m` blob of each commit, oldest first) as one mboxrd file, for the
memory benchmark (tests/bench/memory).  Each message gets a
"From mboxrd@z Thu Jan  1 00:00:00 1970" line and its ">*From " body
lines one more '>'; blobs come from one `git cat-file --batch` per
epoch, so the export itself holds one message at a time.
"""

import re
import subprocess
import sys

SEP = b'From mboxrd@z Thu Jan  1 00:00:00 1970\n'
ESC = re.compile(rb'^(>*From )', re.M)


def blobs(gitdir):
    names = subprocess.run(
        ['git', '--git-dir', gitdir, 'log', '--reverse', '--format=%H:m'],
        check=True, stdout=subprocess.PIPE).stdout
    p = subprocess.Popen(['git', '--git-dir', gitdir, 'cat-file', '--batch'],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # feed the names from a thread-free pipe: write them all first to a
    # temporary file would do too, but cat-file reads as it answers
    import threading
    t = threading.Thread(target=lambda: (p.stdin.write(names),
                                         p.stdin.close()))
    t.start()
    while True:
        head = p.stdout.readline()
        if not head:
            break
        parts = head.split()
        if len(parts) == 2 and parts[1] == b'missing':
            continue
        size = int(parts[2])
        body = p.stdout.read(size)
        p.stdout.read(1)
        if parts[1] == b'blob':
            yield body
    t.join()
    p.wait()


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    n = 0
    with open(sys.argv[1], 'wb') as out:
        for gitdir in sys.argv[2:]:
            for msg in blobs(gitdir):
                out.write(SEP)
                out.write(ESC.sub(rb'>\1', msg))
                if not msg.endswith(b'\n'):
                    out.write(b'\n')
                out.write(b'\n')
                n += 1
    print('%d messages' % n)


if __name__ == '__main__':
    main()
