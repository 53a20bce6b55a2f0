#!/usr/bin/python3
"""test_progress.py - the long commands (mine, train, eval, archive
import, stable) draw one progress line with a rate on a terminal, and
nothing when stderr is a file or a pipe, or with --quiet.  Every phase
that can run long has its own stage on the line, so none of them sits
silent: each command must draw the stages named in STAGES (eval: the
history read before the rows, the rows, the models, each task's
metrics, bootstrap and plots; archive import: the outcomes computed
after the mail; stable: the branch's patch ids).

Each runs on a kernel-like repository from tests/lib/mkrepo.py with
stderr on a pseudo-terminal (stdout in a file): the terminal must show
"stage: done[/total] unit, R/s" lines (archive import also an ETA from
the bytes of the mbox), drawn over each other with \\r, at most a few
times a second, and the last one cleared.  The same runs with stderr in
a file and in a pipe must leave no \\r, no escape and no rate there.
"""

import fcntl
import os
import re
import struct
import subprocess
import sys
import tempfile
import termios
import time

BIN = os.environ['PT_BIN']
LIB = os.path.join(os.environ['PT_SOURCE_DIR'], 'tests', 'lib')
DRAW = re.compile(rb'\r\x1b\[K([^\r\n\x1b]*)')
RATE = re.compile(rb'^(.+?): \d+(?:/\d+)? [a-z]+, [0-9.]+/s')
STAGE = re.compile(rb'^(.+?)(?:\.\.\.|: \d)')

# Stages each command must draw on a terminal (with a count where the
# work has one: "NAME: done/total").
STAGES = {
    'mine': [],
    'train': [b'reading the history', b'features: 0/', b'fix: choosing C',
              b'fix: fitting the trees'],
    'eval': [b'reading the history', b'features: 0/', b'evaluating: 0/4 ',
             b'fix: metrics: 0/6 models', b'fix: bootstrap: ',
             b'fix: plots'],
    'archive import': [b'importing list.mbox', b'outcomes: 0/7 steps',
                       b'outcomes: 7/7 steps'],
    'stable': [b'reading the branch and the range',
               b'patch ids of the branch', b'matching the branch'],
}


def run_tty(args):
    """stderr on a terminal 200 columns wide; returns (bytes, seconds)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', 50, 200, 0, 0))
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not b:
                break
            chunks.append(b)
        rc = p.wait()
    os.close(master)
    assert rc == 0, (args, b''.join(chunks))
    return b''.join(chunks), time.monotonic() - t0


def check_tty(name, args, eta=False):
    tty, secs = run_tty(args)
    draws = DRAW.findall(tty)
    rated = [d for d in draws if RATE.match(d)]
    assert rated, '%s: no progress line with a rate on the tty: %r' % (
        name, tty[-2000:])
    if eta:
        assert any(b', ETA ' in d for d in rated), (name, rated)
    # the last line drawn is cleared: the terminal ends with \r ESC[K
    assert tty.endswith(b'\r\x1b[K'), (name, tty[-300:])
    # a few times a second: at most 4 a second plus the first and the
    # last of each stage, counted each time the stage changes (train's
    # tree phases take turns)
    seq = [STAGE.match(d).group(1) if STAGE.match(d) else d
           for d in draws if d]
    stages = 1 + sum(a != b for a, b in zip(seq, seq[1:]))
    assert len(draws) <= 4 * secs + 2 * stages + 4, (
        name, len(draws), secs, seq)
    drawn = set(seq)
    for want in STAGES[name]:
        assert any(d.startswith(want) for d in draws), (
            '%s: no stage %r drawn; stages: %r' % (name, want, drawn))
    print('%s: %d draws in %.1f s, e.g. %s' % (
        name, len(draws), secs, rated[-1].decode('utf-8', 'replace')))


def check_quiet(name, args):
    """stderr in a file, in a pipe, and --quiet on a terminal."""
    with tempfile.TemporaryFile() as err:
        r = subprocess.run(args, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=err)
        assert r.returncode == 0, name
        err.seek(0)
        text = err.read()
    r = subprocess.run(args, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert r.returncode == 0, name
    for how, text in (('file', text), ('pipe', r.stderr)):
        assert b'\r' not in text and b'\x1b' not in text and \
            b'/s' not in text, '%s: progress in a %s: %r' % (
                name, how, text[:500])
    quiet = [args[0], '--quiet'] + args[1:]
    tty, _ = run_tty(quiet)
    assert b'\x1b' not in tty and b'/s' not in tty, (name, tty[:500])


def main():
    with tempfile.TemporaryDirectory(prefix='pt-progress-') as tmp:
        os.environ.update(HOME=tmp, GIT_CONFIG_NOSYSTEM='1',
                          GIT_COMMITTER_NAME='Ada Lovelace',
                          GIT_COMMITTER_EMAIL='ada@example.com')
        repo = os.path.join(tmp, 'linux')
        subprocess.run([sys.executable, os.path.join(LIB, 'mkrepo.py'), repo,
                        '--releases', '3'], check=True,
                       stdout=subprocess.DEVNULL)
        st = ['--state', os.path.join(tmp, 'state')]
        mbox = os.path.join(tmp, 'list.mbox')
        with open(mbox, 'wb') as f:
            f.write(subprocess.run(
                ['git', '-C', repo, 'format-patch', '--stdout', '--thread',
                 'v1.1..v1.3'], check=True, stdout=subprocess.PIPE).stdout)
        cmds = [
            ('mine', st + ['mine', '--repo', repo, '--horizon', '90'], False),
            ('train', st + ['train', '--task', 'fix'], False),
            ('eval', st + ['eval', '--task', 'fix', '--folds', '1',
                           '--out', os.path.join(tmp, 'eval')], False),
            ('archive import', st + ['archive', 'import', '--mbox', mbox],
             True),
            ('stable', st + ['stable', '--repo', repo, '--range',
                             'v1.1..v1.3', '--branch', 'v1.1'], False),
        ]
        for name, args, eta in cmds:
            check_tty(name, [BIN] + args, eta)
            check_quiet(name, [BIN] + args)
    print('ok')


if __name__ == '__main__':
    sys.exit(main())
