#!/usr/bin/python3
"""test_pw_conformance.py - replays every request recorded from a real
Patchwork 3.1.3 ($PT_SHARED_DIR/fixtures/patchwork-3.1.3/INDEX.tsv) against
tests/lib/pw_standin.py loaded with the fixtures' own mails, and compares
status, the headers that matter (Content-Type, Link, Location, Allow) and
the body: JSON key sets recursively and values (URLs after replacing the
host:port; the dates Patchwork stamps at run time - event and check dates -
only by shape), mbox text exactly.  Skips (77) when the fixtures are absent.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import http.client

FIX_HOST = '127.0.0.1:8000'
TOKENS = {'maint': 'tok-maint-0123456789', 'other': 'tok-other-0123456789',
          'admin': 'tok-admin-0123456789'}
COMPARED_HEADERS = ('Content-Type', 'Link', 'Location', 'Allow',
                    'Content-Disposition', 'Retry-After')


def fixtures_dir():
    shared = os.environ.get('PT_SHARED_DIR')
    if not shared:
        here = os.path.dirname(os.path.abspath(__file__))
        shared = os.path.join(here, '..', '..', '..', 'shared')
    d = os.path.join(shared, 'fixtures', 'patchwork-3.1.3')
    return d if os.path.isfile(os.path.join(d, 'INDEX.tsv')) else None


def parse_http(path):
    req_lines, resp_lines = [], []
    for line in open(path, encoding='utf-8'):
        line = line.rstrip('\n')
        if line.startswith('>'):
            req_lines.append(line[2:] if len(line) > 1 else '')
        elif line.startswith('<'):
            resp_lines.append(line[2:])
    method, target, _ = req_lines[0].split(' ', 2)
    headers, body, i = {}, None, 1
    while i < len(req_lines) and req_lines[i] != '':
        k, v = req_lines[i].split(': ', 1)
        headers[k] = v
        i += 1
    if i + 1 < len(req_lines):
        body = '\n'.join(req_lines[i + 1:])
    status = int(resp_lines[0].split(' ')[1])
    rh = {}
    for line in resp_lines[1:]:
        if ': ' in line:
            k, v = line.split(': ', 1)
            rh[k] = v
    return method, target, headers, body, status, rh


def token_for(name, req_headers):
    auth = req_headers.get('Authorization')
    if not auth:
        return None
    if 'invalid' in auth:
        return 'tok-not-a-real-token'
    if name.endswith('not-maintainer') or name.endswith('-other'):
        return TOKENS['other']
    if name.endswith('superuser'):
        return TOKENS['admin']
    return TOKENS['maint']


def make_data(tmp, fix):
    project = json.load(open(os.path.join(fix, 'project-1.json')))
    project.pop('maintainers', None)
    project.pop('url', None)
    users = [
        {'id': 1, 'username': 'maint', 'email': 'maint@example.org',
         'token': TOKENS['maint'], 'maintains': ['netdev']},
        {'id': 2, 'username': 'other', 'email': 'other@example.org',
         'token': TOKENS['other'], 'maintains': []},
        {'id': 3, 'username': 'admin', 'email': 'admin@example.org',
         'token': TOKENS['admin'], 'maintains': [], 'superuser': True},
    ]
    with open(os.path.join(tmp, 'data.json'), 'w') as f:
        json.dump({'projects': [project], 'users': users}, f)
    shutil.copytree(os.path.join(fix, 'mail'), os.path.join(tmp, 'mail'))


def volatile(path):
    """Dates Patchwork stamps when it stores an event or check."""
    if not path or path[-1] != 'date':
        return False
    p = [x for x in path if not isinstance(x, int)]
    return p in (['date'], ['payload', 'check', 'date'])


def compare(exp, got, path, out, is_dated):
    where = '.'.join(str(x) for x in path) or '(root)'
    if isinstance(exp, dict):
        if not isinstance(got, dict):
            out.append('%s: expected an object, got %r' % (where, got))
            return
        if set(exp) != set(got):
            out.append('%s: keys differ: missing %s, extra %s' % (
                where, sorted(set(exp) - set(got)),
                sorted(set(got) - set(exp))))
        for k in exp:
            if k in got:
                compare(exp[k], got[k], path + [k], out, is_dated)
        return
    if isinstance(exp, list):
        if not isinstance(got, list):
            out.append('%s: expected a list, got %r' % (where, got))
            return
        if len(exp) != len(got):
            out.append('%s: %d items expected, %d got' % (
                where, len(exp), len(got)))
        for i, (a, b) in enumerate(zip(exp, got)):
            compare(a, b, path + [i], out, is_dated)
        return
    if is_dated(path):
        if type(exp) is not type(got):
            out.append('%s: type %s expected, got %r' % (
                where, type(exp).__name__, got))
        return
    if exp != got:
        out.append('%s: expected %r, got %r' % (where, exp, got)[:400])


def main():
    fix = fixtures_dir()
    if not fix:
        print('skip: Patchwork fixtures not found')
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    standin = os.path.join(here, '..', 'lib', 'pw_standin.py')
    tmp = tempfile.mkdtemp(prefix='pt-pwconf-')
    proc = None
    try:
        make_data(tmp, fix)
        port_file = os.path.join(tmp, 'port')
        proc = subprocess.Popen([sys.executable, standin, '--data', tmp,
                                 '--port-file', port_file])
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        port = int(open(port_file).read())
        host = '127.0.0.1:%d' % port
        rows = [line.rstrip('\n').split('\t')
                for line in open(os.path.join(fix, 'INDEX.tsv'))][1:]
        passed, failed = 0, []
        for row in rows:
            name = row[0]
            method, target, rq, body, status, rh = parse_http(
                os.path.join(fix, name + '.http'))
            hdrs = {k: v for k, v in rq.items()
                    if k not in ('Host', 'Authorization')}
            tok = token_for(name, rq)
            if tok:
                hdrs['Authorization'] = 'Token ' + tok
            conn = http.client.HTTPConnection(host, timeout=10)
            conn.request(method, target,
                         body=body.encode('utf-8') if body else None,
                         headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            problems = []
            if resp.status != status:
                problems.append('status %d expected, got %d' % (
                    status, resp.status))
            for h in COMPARED_HEADERS:
                want = rh.get(h)
                got = resp.getheader(h)
                if got is not None:
                    got = got.replace(host, FIX_HOST)
                if want != got:
                    problems.append('header %s: expected %r, got %r' % (
                        h, want, got))
            text = data.decode('utf-8', 'replace').replace(host, FIX_HOST)
            jpath = os.path.join(fix, name + '.json')
            mpath = os.path.join(fix, name + '.mbox')
            if os.path.exists(jpath):
                try:
                    got = json.loads(text)
                    compare(json.load(open(jpath, encoding='utf-8')), got,
                            [], problems, volatile)
                except ValueError as e:
                    problems.append('body is not JSON: %s' % e)
            elif os.path.exists(mpath):
                exp = open(mpath, encoding='utf-8').read()
                if exp != text:
                    el, gl = exp.split('\n'), text.split('\n')
                    for i, (a, b) in enumerate(zip(el, gl)):
                        if a != b:
                            problems.append('mbox line %d: expected %r, '
                                            'got %r' % (i + 1, a, b))
                            break
                    else:
                        problems.append('mbox: %d lines expected, %d got'
                                        % (len(el), len(gl)))
            if problems:
                failed.append((name, problems))
            else:
                passed += 1
        for name, problems in failed:
            print('MISMATCH %s:' % name)
            for p in problems[:10]:
                print('    ' + p)
            if len(problems) > 10:
                print('    ... %d more' % (len(problems) - 10))
        print('%d passed, %d failed' % (passed, len(failed)))
        return 1 if failed else 0
    finally:
        if proc:
            proc.terminate()
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
