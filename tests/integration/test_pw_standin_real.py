#!/usr/bin/python3
"""test_pw_standin_real.py - the Patchwork stand-in (tests/lib/pw_standin.py)
answers as a real Patchwork 3.1.3 did where the recorded fixtures say
nothing; each case is what that server (its source at v3.1.3, Debian's
Django 3.2, SQLite, loaded with linux-pwm mail; see test_real_patchwork.sh)
answered on loopback:

- since=/before= with a zone suffix (Z, +00:00, -05:00): 500 and Django's
  HTML error page; a date alone or a malformed value: 200 and an empty
  list (with the Link header of a one-page list);  a space instead of the
  T, minutes without seconds and fractions are taken; an empty value
  filters nothing;
- an empty list of checks: [] with rel="first"/"last";
- a series whose patches arrive out of order: patch-completed only once
  every patch numbered below it is in (then for those it completes),
  series-completed with the last one, again for one beyond the total;
- a check posted: a check-created event with the poster as actor and a
  payload of the patch and the check.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = 'tok-bot-5f0e9c1d2a7b'
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)


def get(base, path, token=None, data=None, method=None):
    req = urllib.request.Request(base + path, data=data, method=method)
    if token:
        req.add_header('Authorization', 'Token ' + token)
    if data is not None:
        req.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def mail(n, total, subject, refs=None):
    msgid = '<order-%d@example.org>' % n
    lines = ['From: Bob Example <bob@example.org>',
             'To: test@lists.example.org',
             'Subject: [PATCH %d/%d] %s' % (n, total, subject),
             'Date: Tue, 03 Nov 2026 10:00:0%d +0000' % n,
             'Message-ID: ' + msgid,
             'List-Id: <test.lists.example.org>']
    if refs:
        lines += ['In-Reply-To: ' + refs, 'References: ' + refs]
    lines += ['Content-Type: text/plain; charset=UTF-8', '']
    if n == 0:
        lines += ['The cover letter.', '']
    else:
        lines += ['Step %d.' % n, '', 'Signed-off-by: Bob <bob@example.org>',
                  '---', 'diff --git a/f%d.c b/f%d.c' % (n, n),
                  '--- a/f%d.c' % n, '+++ b/f%d.c' % n, '@@ -1 +1,2 @@',
                  ' x', '+y%d' % n, '']
    return '\n'.join(lines)


def events_of(base, series_id):
    st, _, body = get(base, '/api/1.3/events/?project=test&order=date'
                      '&series=%d&per_page=250' % series_id)
    return [(e['category'], e['payload'].get('patch', {}).get('id'))
            for e in json.loads(body)] if st == 200 else None


def dates(base):
    api = base + '/api/1.3/'
    for v in ('2000-01-01T00:00:00Z', '2000-01-01T00:00:00%2B00:00',
              '2000-01-01T00:00:00-05:00', '2000-01-01T00:00:00.5Z'):
        for kind in ('events', 'patches'):
            for key in ('since', 'before'):
                st, h, body = get(api, '%s/?project=test&%s=%s' % (
                    kind, key, v))
                check(st == 500 and h.get('Content-Type') == 'text/html'
                      and b'<h1>Server Error (500)</h1>' in body,
                      '%s %s=%s: %d %r' % (kind, key, v, st, body[:80]))
    for v in ('2000-01-01', '2099-12-31', 'yesterday', '2000-13-01T00:00:00'):
        st, h, body = get(api, 'events/?project=test&since=' + v)
        check(st == 200 and json.loads(body) == []
              and 'rel="first"' in h.get('Link', '')
              and 'rel="last"' in h.get('Link', ''),
              'since=%r: %d %r %r' % (v, st, body[:80], h.get('Link')))
    for v in ('2000-01-01T00:00:00', '2000-01-01%2000:00:00',
              '2000-01-01T00:00', '2000-01-01T00:00:00.123456', ''):
        st, _, body = get(api, 'events/?project=test&since=' + v)
        check(st == 200 and len(json.loads(body)) > 0,
              'since=%s not taken: %d %r' % (v, st, body[:80]))
    st, h, body = get(api, 'patches/1/checks/')
    check(st == 200 and body == b'[]' and 'rel="last"' in h.get('Link', ''),
          'empty checks: %d %r %r' % (st, body, h.get('Link')))


def completion(base):
    def imp(raw):
        st, _, body = get(base, '/__control__',
                          data=json.dumps({'import': raw}).encode(),
                          method='POST')
        check(st == 200, 'import: %d %r' % (st, body[:100]))

    cover = '<order-0@example.org>'
    for n in (0, 1, 3):
        imp(mail(n, 3, 'order: part %d' % n, None if n == 0 else cover))
    st, _, body = get(base, '/api/1.3/series/?project=test&per_page=250')
    series = [s for s in json.loads(body) if s['name'] == 'order: part 0'
              or s['cover_letter']
              and s['cover_letter']['msgid'] == cover]
    check(len(series) == 1, 'the series of the out-of-order patches: %r'
          % [s['name'] for s in json.loads(body)])
    if not series:
        return
    sid = series[0]['id']
    check(not series[0]['received_all'], 'series complete with 2 of 3')
    ids = {p['name'].split(']')[0][-3:]: p['id']
           for p in series[0]['patches']}
    ev = events_of(base, sid)
    check(ev is not None and [e for e in ev if e[0] == 'patch-completed']
          == [('patch-completed', ids.get('1/3'))]
          and not any(e[0] == 'series-completed' for e in ev),
          'with 1/3 and 3/3 in: %r' % ev)
    imp(mail(2, 3, 'order: part 2', cover))
    st, _, body = get(base, '/api/1.3/series/%d/' % sid)
    s = json.loads(body)
    ids = {p['name'].split(']')[0][-3:]: p['id'] for p in s['patches']}
    ev = events_of(base, sid)
    done = [e[1] for e in ev if e[0] == 'patch-completed']
    check(s['received_all'] and done == [ids['1/3'], ids['2/3'], ids['3/3']]
          and [e[0] for e in ev].count('series-completed') == 1,
          'after 2/3: %r' % ev)
    # one beyond the total: series-completed once more, as Patchwork does
    imp(mail(4, 3, 'order: part 4', cover))
    ev = events_of(base, sid)
    check([e[0] for e in ev].count('series-completed') == 2,
          'an extra patch: %r' % ev)


def check_created(base):
    st, _, body = get(base, '/api/1.3/patches/2/checks/', TOKEN,
                      json.dumps({'state': 'warning', 'context': 'probe'})
                      .encode())
    check(st == 201, 'check post: %d %r' % (st, body[:100]))
    st, _, body = get(base, '/api/1.3/events/?project=test'
                      '&category=check-created')
    ev = json.loads(body) if st == 200 else []
    check(len(ev) == 1, 'check-created events: %r' % body[:200])
    if not ev:
        return
    e = ev[0]
    check(e['actor'] and e['actor']['username'] == 'bot',
          'check-created actor: %r' % e['actor'])
    check(set(e['payload']) == {'patch', 'check'},
          'check-created payload: %r' % sorted(e['payload']))
    check(set(e['payload']['check']) == {'id', 'url', 'date', 'state',
                                         'target_url', 'context'},
          'check-created check: %r' % sorted(e['payload']['check']))
    check(e['payload']['patch']['id'] == 2, 'check-created patch')


def main():
    standin = os.path.join(HERE, '..', 'lib', 'pw_standin.py')
    data = os.path.join(HERE, '..', 'data', 'pw')
    tmp = tempfile.mkdtemp(prefix='pt-standin-real-')
    port_file = os.path.join(tmp, 'port')
    proc = subprocess.Popen([sys.executable, standin, '--data', data,
                             '--port-file', port_file])
    try:
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        base = 'http://127.0.0.1:%d' % int(open(port_file).read())
        dates(base)
        completion(base)
        check_created(base)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp)
    print('%d failed' % len(failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
