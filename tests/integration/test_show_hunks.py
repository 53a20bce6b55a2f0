#!/usr/bin/python3
"""test_show_hunks.py - `show --json` writes each file's hunks
(`hunks_detail`: ranges, section, the lines with their prefix) and they
are git's own: a commit made here with several files and hunks, a
section heading, a file without a final newline, bytes that are not
UTF-8, a binary file and a pure rename, sent through `git format-patch`
and through `--commit`, is compared hunk by hunk with `git show`.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

BIN = os.environ['PT_BIN']
HUNK = re.compile(rb'^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$')


def git(repo, *args):
    return subprocess.run(['git', '-C', repo] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout


def fix_utf8(b):
    """The documented rule: each byte not in valid UTF-8 is U+FFFD."""
    return b.decode('utf-8', 'replace')


def git_hunks(repo):
    """Per file (diff order): the list of hunks of `git show`."""
    out = git(repo, 'show', '--format=', '--no-color', '-M', 'HEAD')
    files = []
    for line in out.split(b'\n')[:-1]:
        if line.startswith(b'diff --git '):
            files.append([])
            continue
        m = HUNK.match(line)
        if m:
            files[-1].append({
                'old_start': int(m.group(1)),
                'old_lines': int(m.group(2) or b'1'),
                'new_start': int(m.group(3)),
                'new_lines': int(m.group(4) or b'1'),
                'section': fix_utf8(m.group(5)) if m.group(5) else None,
                'truncated': False, 'lines': []})
        elif files and files[-1] and line[:1] in (b'+', b'-', b' ', b'\\'):
            files[-1][-1]['lines'].append(fix_utf8(line))
    return files


def show_json(*args):
    r = subprocess.run([BIN, 'show', '--json'] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr
    ps = [json.loads(l) for l in r.stdout.decode().splitlines()]
    assert len(ps) == 1, ps
    return ps[0]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data)


def make_repo(repo):
    os.makedirs(repo)
    git(repo, 'init', '-q')
    body = b''.join(b'\tx%d = %d;\n' % (i, i) for i in range(40))
    write(repo + '/drivers/foo.c',
          b'int foo(void)\n{\n' + body + b'}\n\nint bar(void)\n{\n' + body +
          b'}\n')
    write(repo + '/lib/tail.c', b'one\ntwo\nthree')
    write(repo + '/lib/latin.c', b'caf\xe9 = 1;\nok\n')
    write(repo + '/fw/blob.bin', bytes(range(256)) * 4)
    write(repo + '/old/name.c', b''.join(b'line %d\n' % i for i in range(30)))
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'base')

    foo = open(repo + '/drivers/foo.c', 'rb').read()
    foo = foo.replace(b'\tx3 = 3;\n', b'\tx3 = 33;\n\tnew3();\n', 1)
    foo = foo.replace(b'\tx30 = 30;\n', b'', 1)
    last = foo.rfind(b'\tx20 = 20;\n')
    foo = foo[:last] + b'\tx20 = 2020;\n' + foo[last + len(b'\tx20 = 20;\n'):]
    write(repo + '/drivers/foo.c', foo)
    write(repo + '/lib/tail.c', b'one\nTWO\nthree\nfour')
    write(repo + '/lib/latin.c', b'caf\xe9 = 2;\nok \xff\xfe\n')
    write(repo + '/fw/blob.bin', bytes(range(255, -1, -1)) * 4)
    os.makedirs(repo + '/new', exist_ok=True)
    git(repo, 'mv', 'old/name.c', 'new/name.c')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'foo: change things',
        '-m', 'Signed-off-by: Ada Lovelace <ada@example.com>')


def check(p, want, how):
    files = p['files']
    assert len(files) == len(want), (how, [f['new_path'] for f in files])
    nhunks = 0
    for f, w in zip(files, want):
        name = f['new_path'] or f['old_path']
        assert f['hunks'] == len(f['hunks_detail']), (how, name)
        assert f['hunks_detail'] == w, (how, name, f['hunks_detail'], w)
        nhunks += len(w)
    by = {f['new_path']: f for f in files}
    assert len(by['drivers/foo.c']['hunks_detail']) == 3, how
    assert by['drivers/foo.c']['hunks_detail'][2]['section'] == \
        'int bar(void)', (how, by['drivers/foo.c']['hunks_detail'][2])
    assert '\\ No newline at end of file' in \
        by['lib/tail.c']['hunks_detail'][0]['lines'], how
    assert '+ok \ufffd\ufffd' in by['lib/latin.c']['hunks_detail'][0]['lines'], how
    assert by['fw/blob.bin']['binary'] and \
        by['fw/blob.bin']['hunks_detail'] == [], how
    assert by['new/name.c']['status'] == 'renamed' and \
        by['new/name.c']['hunks_detail'] == [], how
    assert nhunks == 5, how


def main():
    with tempfile.TemporaryDirectory(prefix='pt-showh-') as tmp:
        os.environ.update(HOME=tmp, GIT_CONFIG_NOSYSTEM='1',
                          GIT_AUTHOR_NAME='Ada Lovelace',
                          GIT_AUTHOR_EMAIL='ada@example.com',
                          GIT_COMMITTER_NAME='Ada Lovelace',
                          GIT_COMMITTER_EMAIL='ada@example.com')
        repo = os.path.join(tmp, 'repo')
        make_repo(repo)
        want = git_hunks(repo)
        mbox = os.path.join(tmp, 'p.mbox')
        write(mbox, git(repo, 'format-patch', '-1', '--stdout', 'HEAD'))
        check(show_json(mbox), want, 'format-patch mail')
        check(show_json('--commit', 'HEAD', '--repo', repo), want, '--commit')
    print('ok')


if __name__ == '__main__':
    sys.exit(main())
