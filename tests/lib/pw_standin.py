#!/usr/bin/python3
"""pw_standin.py - a stand-in for the Patchwork 3.1.3 REST API and mbox views.

It owns nothing of patchtriage: it is a test server that answers like the
recorded real Patchwork in ../shared/fixtures/patchwork-3.1.3/ (same status
codes, Link/Location/Allow headers, error bodies, permission rules) and
as a real Patchwork 3.1.3 (Debian's Django 3.2, SQLite) did on loopback
where the recordings say nothing: since=/before= with a zone suffix
answers 500 (Django's HTML page), a date alone or a malformed one an
empty list; patch-completed comes once every patch numbered below is in,
series-completed with the last patch and again for one beyond the total
(tests/integration/test_pw_standin_real.py).  It does not take a
"git request-pull" mail for a patch, as Patchwork does.  Loaded from a
data directory:

  DIR/data.json   {"projects": [{"id", "name", "link_name", "list_id",
                                 "list_email", ...}],
                   "users": [{"id", "username", "email", "token",
                              "maintains": ["link_name", ...],
                              "superuser": false}]}
  DIR/mail/*.eml  mails imported in file-name order with Patchwork's own
                  rules (prefix cleaning, series by references or markers,
                  content/diff split, comments on the patch or cover
                  they reply to)

Usage: pw_standin.py --data DIR --port-file F [--record F] [--hold REGEX]
                     [--delay-ms N]
                     [--fail-next N] [--rate-limit-next N --retry-after S]
                     [--truncate-next N] [--html-next N] [--reset-next N]

Faults can be set at run time too: POST /__control__ with a JSON object
{"delay_ms": N, "fail_next": N, "fail_status": 500, "rate_limit_next": N,
 "retry_after": S, "truncate_next": N, "html_next": N, "reset_next": N,
 "drop_response_next": N (carry the request out, then reset instead of
 answering), "mbox_short_next": N (the next N series mboxes leave out
 their first patch, as a mail Patchwork cannot render), "canned_next": N
 with "canned": {"status": S, "headers": {...}, "body": "...",
 "repeat": N (the body N times over)} (the next
 N answers are that one, "{url}" in a header replaced by the request's
 own URL: hostile answers such as a Link to self or a foreign redirect),
 "match": "substring of the path the faults apply to",
 "method": "POST" (only that method), "clear": true,
 "import": "<raw mail>" with "events": false (stored without events, as
 if the bot's position were past them), "hold": "regex" | null (mails
 whose Message-ID matches are held back, as a list that got only part
 of a cross-posted series: their series stays incomplete, received_all
 false, no series-completed), "release": true (import what was held),
 "freeze_clock": "2026-12-03T07:00:00" | null}.
GET /__control__ returns the counters.  --record appends one JSON line per
request but those to /__control__ (method, path, headers with the
Authorization value masked).

Python 3 standard library only.
"""

import argparse
import datetime
import email
import email.header
import email.parser
import email.policy
import email.utils
import hashlib
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse
from email.mime.nonmultipart import MIMENonMultipart
from email.encoders import encode_7or8bit
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API_VERSIONS = ["1.0", "1.1", "1.2", "1.3"]
PAGE_SIZE = 30
MAX_PAGE_SIZE = 250
STATES = ["new", "under-review", "accepted", "rejected", "rfc",
          "not-applicable", "changes-requested", "awaiting-upstream",
          "superseded", "deferred"]
CHECK_STATES = ["pending", "success", "warning", "fail"]
MSG_PERM = "You do not have permission to perform this action."
MSG_NOAUTH = "Authentication credentials were not provided."

# ---- Patchwork's parser rules (patchwork/parser.py) ------------------

_hunk_re = re.compile(r'^\@\@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? \@\@')


def normalise_space(value):
    return re.sub(r'\s+', ' ', value).strip()


def clean_header(header):
    if header is None:
        return None

    def decode(fragment):
        frag_str, frag_encoding = fragment
        if frag_encoding:
            return frag_str.decode(frag_encoding, 'replace')
        if isinstance(frag_str, str):
            return frag_str
        return frag_str.decode('utf-8', 'replace')

    fragments = [decode(x) for x in email.header.decode_header(str(header))]
    return normalise_space(' '.join(fragments))


def split_prefixes(prefix):
    return [s for s in re.split(r'[,\s]+', prefix) if s != '']


def clean_subject(subject, drop_prefixes=None):
    re_re = re.compile(r'^(re|fwd?)[:\s]\s*', re.I)
    prefix_re = re.compile(r'^\[([^\]]*)\]\s*(.*)$')
    subject = clean_header(subject) or ''
    drop = [s.lower() for s in (drop_prefixes or [])] + ['patch']
    subject = re_re.sub(' ', subject)
    subject = normalise_space(subject)
    prefixes = []
    match = prefix_re.match(subject)
    while match:
        prefixes += [p for p in split_prefixes(match.group(1))
                     if p.lower() not in drop]
        subject = match.group(2)
        match = prefix_re.match(subject)
    subject = normalise_space(subject).strip()
    if prefixes:
        subject = '[%s] %s' % (','.join(prefixes), subject)
    return subject, prefixes


def subject_check(subject):
    comment_re = re.compile(r'^(re)[:\s]\s*', re.I)
    return comment_re.match(clean_header(subject) or '')


def parse_series_marker(prefixes):
    for p in prefixes:
        m = re.match(r'^([0-9]+)/([0-9]+)$', p)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None, None


def parse_version(subject, prefixes):
    for p in prefixes:
        m = re.match(r'^[vV](\d+)$', p)
        if m:
            return int(m.group(1))
    m = re.search(r'\([vV](\d+)\)', subject)
    if m:
        return int(m.group(1))
    return 1


def find_references(mail):
    refs = []
    if mail.get('In-Reply-To'):
        refs.append(str(mail.get('In-Reply-To')).strip())
    for h in mail.get_all('References') or []:
        for ref in reversed(re.findall(r'<[^>]*>', str(h))):
            if ref not in refs:
                refs.append(ref)
    return [r for r in refs if r]


def find_date(mail):
    h = clean_header(mail.get('Date', ''))
    t = email.utils.parsedate_tz(h) if h else None
    if not t:
        return datetime.datetime.utcnow().replace(microsecond=0)
    return datetime.datetime.utcfromtimestamp(email.utils.mktime_tz(t))


def find_author(mail):
    from_header = clean_header(mail.get('From')) or ''
    res = [
        (re.compile(r'"?(.*?)"?\s*<([^>]+)>'), lambda g: (g[0], g[1])),
        (re.compile(r'(.*?)\sat\s(.*?)\s*\(([^\)]+)\)'),
         lambda g: (g[2], '@'.join(g[0:2]))),
        (re.compile(r'"?(.*?)"?\s*\(([^\)]+)\)'), lambda g: (g[1], g[0])),
        (re.compile(r'(.*)'), lambda g: (None, g[0])),
    ]
    name = addr = None
    for regex, fn in res:
        m = regex.match(from_header)
        if m:
            name, addr = fn(m.groups())
            break
    if name is not None:
        name = name.strip()[:255]
    if addr is not None:
        addr = addr.strip()[:255]
    return name, addr


def sanitise_header(value, header_name=None):
    try:
        parts = email.header.decode_header(str(value))
        return email.header.make_header(parts, header_name=header_name,
                                        continuation_ws='\t')
    except Exception:
        return None


def find_headers(mail):
    headers = [(k, sanitise_header(v, header_name=k))
               for k, v in mail.items()]
    return '\n'.join('%s: %s' % (k, h.encode())
                     for k, h in headers if h is not None)


def parse_patch(content):
    patchbuf = commentbuf = buf = ''
    state = 0
    lc = [0, 0]
    hunk = 0
    for line in content.split('\n'):
        line += '\n'
        if state == 0:
            if line.startswith(('diff ', '===', 'Index: ')):
                state = 1
                buf += line
            elif line.startswith('--- '):
                state = 2
                buf += line
            else:
                commentbuf += line
        elif state == 1:
            buf += line
            if line.startswith('--- '):
                state = 2
            if line.startswith(('rename from ', 'rename to ')):
                state = 6
        elif state == 2:
            if line.startswith('+++ '):
                state = 3
                buf += line
            elif hunk:
                state = 1
                buf += line
            else:
                state = 0
                commentbuf += buf + line
                buf = ''
        elif state == 3:
            match = _hunk_re.match(line)
            if match:
                lc = [int(x) if x else 1 for x in match.groups()]
                state = 4
                patchbuf += buf + line
                buf = ''
            elif line.startswith('--- '):
                patchbuf += buf + line
                buf = ''
                state = 2
            elif hunk and line.startswith('\\ No newline at end of file'):
                patchbuf += line
            elif hunk:
                state = 1
                buf += line
            else:
                state = 0
                commentbuf += buf + line
                buf = ''
        elif state in (4, 5):
            if line.startswith('-'):
                lc[0] -= 1
            elif line.startswith('+'):
                lc[1] -= 1
            elif line.startswith('\\ No newline at end of file'):
                pass
            else:
                lc[0] -= 1
                lc[1] -= 1
            patchbuf += line
            if lc[0] <= 0 and lc[1] <= 0:
                state = 3
                hunk += 1
            else:
                state = 5
        elif state == 6:
            if line.startswith(('rename to ', 'rename from ')):
                patchbuf += buf + line
                buf = ''
            elif line.startswith('--- '):
                patchbuf += buf + line
                buf = ''
                state = 2
            else:
                buf += line
                state = 1
    commentbuf += buf
    return (patchbuf or None), (commentbuf or None)


def clean_content(content):
    return re.sub(r'^(-- |_+)\n.*', '', content, flags=re.S | re.M).strip()


def find_content(mail):
    patchbuf = None
    commentbuf = ''
    for part in mail.walk():
        if part.get_content_maintype() != 'text':
            continue
        payload = part.get_payload(decode=True)
        subtype = part.get_content_subtype()
        if not isinstance(payload, str):
            charset = part.get_content_charset()
            tries = [charset] if charset else ['utf-8', 'windows-1252',
                                                'iso-8859-1']
            new = None
            for cset in tries:
                try:
                    new = payload.decode(cset)
                    break
                except (UnicodeDecodeError, LookupError):
                    new = None
            payload = new
            if payload is None:
                return None, None
        if subtype in ('x-patch', 'x-diff'):
            patchbuf = payload
        elif subtype == 'plain':
            c = payload
            if not patchbuf:
                patchbuf, c = parse_patch(payload)
            if c is not None:
                commentbuf += c.strip() + '\n'
    return patchbuf, clean_content(commentbuf)


def hash_diff(diff):
    filename_re = re.compile(r'^(---|\+\+\+) (\S+)')
    diff = diff.replace('\r', '').strip() + '\n'
    h = hashlib.sha1()
    for line in diff.split('\n'):
        if not line:
            continue
        hm = _hunk_re.match(line)
        fm = filename_re.match(line)
        if fm:
            filename = 'a/' if fm.group(1) == '---' else 'b/'
            filename += '/'.join(fm.group(2).split('/')[1:])
            line = fm.group(1) + ' ' + filename
        elif hm:
            nums = [int(x) if x else 1 for x in hm.groups()]
            line = '@@ -%d +%d @@' % tuple(nums)
        elif line[0] in '-+ ':
            pass
        else:
            continue
        h.update((line + '\n').encode('utf-8'))
    return h.hexdigest()


RESPONSE_RE = re.compile(
    r'^(Tested|Reviewed|Acked|Signed-off|Nacked|Reported)-by:.*$',
    re.M | re.I)


def patch_responses(text):
    return ''.join(m.group(0) + '\n' for m in RESPONSE_RE.finditer(text or ''))


def isodate(d):
    return d.isoformat() if d else None


def parse_iso(s):
    """since=/before= as Patchwork 3.1.3 on SQLite takes them (seen on a
    real one): a date and a time ('T' or a space between them, seconds
    and fractions optional); None (an empty list) when malformed or a
    date alone; a zone suffix (Z, +00:00, -05:00) raises ServerError, as
    the real server compares it with its naive dates and answers 500."""
    if re.fullmatch(r'\s*\d{4}-\d{2}-\d{2}\s*', s or ''):
        return None
    try:
        d = datetime.datetime.fromisoformat(s.replace('Z', '+00:00'))
    except (ValueError, AttributeError):
        return None
    if d.tzinfo is not None:
        raise ServerError()
    return d


# ---- the store ------------------------------------------------------


class Store:
    def __init__(self, data):
        self.lock = threading.RLock()
        self.projects = data.get('projects', [])
        self.users = data.get('users', [])
        self.people = []
        self.patches = []
        self.covers = []
        self.series = []
        self.comments = []        # patch comments
        self.cover_comments = []
        self.checks = []
        self.events = []
        self.series_refs = {}     # (project id, msgid) -> series
        # indexes, so that a request costs the same at 10 or 10,000
        # patches: (kind, project id, msgid) -> the first such
        # submission, and patch/cover id -> its checks and comments
        self.by_msgid = {}
        self.checks_of = {}
        self.comments_of = {}
        self.cover_comments_of = {}
        self.frozen = None
        self.last_time = None
        # mails whose Message-ID matches hold (a regex) are kept aside,
        # as if the list never gave them to Patchwork (a series
        # cross-posted to lists of which this one got a part): their
        # series stay incomplete until released
        self.hold = None
        self.held = []
        self.quiet = False        # import without events

    # time of an event: now, strictly increasing unless frozen
    def now(self):
        if self.frozen:
            return self.frozen
        t = datetime.datetime.utcnow()
        if self.last_time and t <= self.last_time:
            t = self.last_time + datetime.timedelta(microseconds=1)
        self.last_time = t
        return t

    def project(self, key):
        for p in self.projects:
            if str(p['id']) == str(key) or p['link_name'] == key:
                return p
        return None

    def user_by_token(self, token):
        for u in self.users:
            if u.get('token') and u['token'] == token:
                return u
        return None

    def person(self, name, addr):
        addr = (addr or '').strip()
        for p in self.people:
            if p['email'].lower() == addr.lower():
                if name and not p['name']:
                    p['name'] = name
                return p
        p = {'id': len(self.people) + 1, 'name': name or '', 'email': addr}
        self.people.append(p)
        return p

    def event(self, project, category, actor=None, **payload):
        if self.quiet:
            return None
        e = {'id': len(self.events) + 1, 'category': category,
             'project': project, 'date': self.now(), 'actor': actor,
             'payload': payload}
        self.events.append(e)
        return e

    def find_submission(self, project, refs):
        for kind in ('patch', 'cover'):
            for ref in refs:
                obj = self.by_msgid.get((kind, project['id'], ref))
                if obj:
                    return kind, obj
        return None, None

    def index(self, kind, obj):
        self.by_msgid.setdefault((kind, obj['project']['id'], obj['msgid']),
                                 obj)

    def find_series(self, project, mail, author, version, total, date):
        for ref in find_references(mail):
            s = self.series_refs.get((project['id'], ref))
            if s and s['version'] == version:
                return s
        if not total:
            # Patchwork's _find_series_by_markers: without an n/m marker
            # a patch starts a series of its own
            return None
        for s in self.series:
            if (s['project'] is project and s['submitter'] is author and
                    s['version'] == version and s['total'] == total and
                    abs((s['date'] - date).total_seconds()) <= 12 * 3600):
                return s
        return None

    def new_series(self, project, author, date, version, total):
        s = {'id': len(self.series) + 1, 'project': project, 'name': None,
             'date': date, 'submitter': author, 'version': version,
             'total': total, 'cover': None, 'patches': []}
        self.series.append(s)
        return s

    def completed_events(self, project, series, patch):
        """patchwork/signals.py: patch-completed once the patches
        numbered below it are all in (then for the successors it
        completes), series-completed each time a patch arrives with
        at least total patches in (so again for an extra one)."""
        num = patch['number'] or 0
        below = [p for p in series['patches']
                 if p is not patch and (p['number'] or 0) < num]
        if len(below) == num - 1:
            self.event(project, 'patch-completed', patch=patch,
                       series=series)
            nxt = num + 1
            for p in series['patches']:
                if (p['number'] or 0) <= num or p is patch:
                    continue
                if p['number'] != nxt:
                    break
                self.event(project, 'patch-completed', patch=p,
                           series=series)
                nxt += 1
        if len(series['patches']) >= series['total']:
            self.event(project, 'series-completed', series=series)

    def add_refs(self, series, project, mail, msgid):
        for ref in find_references(mail) + [msgid]:
            self.series_refs.setdefault((project['id'], ref), series)

    def import_mail(self, raw, events=True):
        with self.lock:
            if self.hold and self.held_id(raw):
                self.held.append(raw)
                return None
            self.quiet = not events
            try:
                return self._import(raw)
            finally:
                self.quiet = False

    def held_id(self, raw):
        if isinstance(raw, str):
            raw = raw.encode('utf-8')
        mail = email.message_from_bytes(raw)
        return re.search(self.hold, (mail.get('Message-ID') or '').strip())

    def release(self):
        with self.lock:
            held, self.held, self.hold = self.held, [], None
        return [self.import_mail(raw) for raw in held]

    def _import(self, raw):
        if isinstance(raw, str):
            raw = raw.encode('utf-8')
        mail = email.message_from_bytes(raw)
        project = None
        list_id = clean_header(mail.get('List-Id')) or ''
        m = re.search(r'<([^>]*)>', list_id)
        list_id = (m.group(1) if m else list_id).strip()
        for p in self.projects:
            if p.get('list_id') == list_id:
                project = p
        if project is None:
            if not self.projects:
                return None
            project = self.projects[0]
        msgid = (mail.get('Message-ID') or '').strip()
        if not msgid:
            return None
        subject = mail.get('Subject') or ''
        name, prefixes = clean_subject(subject, [project['link_name']])
        is_comment = subject_check(subject)
        x, n = parse_series_marker(prefixes)
        version = parse_version(name, prefixes)
        refs = find_references(mail)
        date = find_date(mail)
        headers = find_headers(mail)
        diff, message = find_content(mail)
        if not (diff or message):
            return None
        aname, aaddr = find_author(mail)
        if not is_comment and diff:
            author = self.person(aname, aaddr)
            series = self.find_series(project, mail, author, version,
                                      n, date)
            if series and any(p['number'] == x and x is not None
                              for p in series['patches']):
                series = None
            if not series and n:
                series = self.new_series(project, author, date, version, n)
                self.event(project, 'series-created', series=series)
            patch = {'id': len(self.patches) + 1, 'project': project,
                     'msgid': msgid, 'date': date, 'name': name[:255],
                     'prefixes': prefixes, 'state': 'new',
                     'archived': False, 'hash': hash_diff(diff),
                     'submitter': author, 'delegate': None,
                     'headers': headers, 'content': message, 'diff': diff,
                     'number': x, 'series': None, 'subject': subject}
            self.patches.append(patch)
            self.index('patch', patch)
            self.event(project, 'patch-created', patch=patch)
            if not series:
                series = self.new_series(project, author, date, version,
                                         n or 1)
                self.event(project, 'series-created', series=series)
            if not series['name'] and not series['cover']:
                series['name'] = name
            self.add_refs(series, project, mail, msgid)
            # without a marker Patchwork makes it patch 1 of 1
            patch['number'] = x if n else 1
            patch['series'] = series
            series['patches'].append(patch)
            series['patches'].sort(key=lambda p: (p['number'] or 0,
                                                  p['id']))
            self.completed_events(project, series, patch)
            return patch
        if not is_comment and x == 0:
            author = self.person(aname, aaddr)
            series = self.find_series(project, mail, author, version,
                                      n, date)
            if series and series['cover']:
                series = None
            if not series:
                series = self.new_series(project, author, date, version, n)
                self.event(project, 'series-created', series=series)
            cover = {'id': len(self.covers) + 1, 'project': project,
                     'msgid': msgid, 'date': date, 'name': name[:255],
                     'submitter': author, 'headers': headers,
                     'content': message, 'series': series}
            self.covers.append(cover)
            self.index('cover', cover)
            series['cover'] = cover
            series['name'] = cover['name'].split(']')[-1].strip()
            self.add_refs(series, project, mail, msgid)
            self.event(project, 'cover-created', cover=cover)
            return cover
        kind, target = self.find_submission(project, refs)
        if not target:
            return None
        author = self.person(aname, aaddr)
        pool = self.comments if kind == 'patch' else self.cover_comments
        c = {'id': len(pool) + 1, 'msgid': msgid, 'date': date,
             'subject': clean_header(subject) or '', 'submitter': author,
             'content': message, 'headers': headers, 'kind': kind,
             'target': target}
        pool.append(c)
        of = self.comments_of if kind == 'patch' else self.cover_comments_of
        of.setdefault(target['id'], []).append(c)
        if kind == 'patch':
            self.event(project, 'patch-comment-created', patch=target,
                       comment=c)
        else:
            self.event(project, 'cover-comment-created', cover=target,
                       comment=c)
        return c


# ---- serialisers (shapes as recorded) -------------------------------


class Ser:
    def __init__(self, base, ver):
        self.base = base            # "http://host:port"
        self.ver = ver              # "1.3" or None for /api/

    def api(self, path):
        v = ('%s/' % self.ver) if self.ver else ''
        return '%s/api/%s%s' % (self.base, v, path)

    def project(self, p, full=True):
        d = {'id': p['id'], 'url': self.api('projects/%d/' % p['id']),
             'name': p['name'], 'link_name': p['link_name'],
             'list_id': p['list_id'], 'list_email': p.get('list_email', ''),
             'web_url': p.get('web_url', ''), 'scm_url': p.get('scm_url', ''),
             'webscm_url': p.get('webscm_url', '')}
        if full:
            d['maintainers'] = [self.user(u) for u in store.users
                                if p['link_name'] in u.get('maintains', [])]
            d['subject_match'] = p.get('subject_match', '')
        d['list_archive_url'] = p.get('list_archive_url', '')
        d['list_archive_url_format'] = p.get('list_archive_url_format', '')
        d['commit_url_format'] = p.get('commit_url_format', '')
        return d

    def user(self, u):
        return {'id': u['id'], 'url': self.api('users/%d/' % u['id']),
                'username': u['username'],
                'first_name': u.get('first_name', ''),
                'last_name': u.get('last_name', ''), 'email': u['email']}

    def person(self, p, with_user=False):
        d = {'id': p['id'], 'url': self.api('people/%d/' % p['id']),
             'name': p['name'], 'email': p['email']}
        if with_user:
            d['user'] = None
        return d

    def archive(self, obj):
        fmt = obj['project'].get('list_archive_url_format', '')
        return fmt.format(obj['msgid'][1:-1]) if fmt else None

    def sub_web(self, kind, obj):
        return '%s/project/%s/%s/%s/' % (self.base,
                                         obj['project']['link_name'], kind,
                                         obj['msgid'][1:-1])

    def patch_mini(self, p):
        return {'id': p['id'], 'url': self.api('patches/%d/' % p['id']),
                'web_url': self.sub_web('patch', p), 'msgid': p['msgid'],
                'list_archive_url': self.archive(p),
                'date': isodate(p['date']), 'name': p['name'],
                'mbox': self.sub_web('patch', p) + 'mbox/'}

    def cover_mini(self, c):
        d = self.patch_mini(c)
        d['url'] = self.api('covers/%d/' % c['id'])
        d['web_url'] = self.sub_web('cover', c)
        d['mbox'] = self.sub_web('cover', c) + 'mbox/'
        return d

    def series_mini(self, s):
        return {'id': s['id'], 'url': self.api('series/%d/' % s['id']),
                'web_url': '%s/project/%s/list/?series=%d' % (
                    self.base, s['project']['link_name'], s['id']),
                'date': isodate(s['date']), 'name': s['name'],
                'version': s['version'],
                'mbox': '%s/series/%d/mbox/' % (self.base, s['id'])}

    def series(self, s):
        m = self.series_mini(s)
        return {'id': s['id'], 'url': m['url'], 'web_url': m['web_url'],
                'project': self.project(s['project'], False),
                'name': s['name'], 'date': m['date'],
                'submitter': self.person(s['submitter']),
                'version': s['version'], 'total': s['total'],
                'received_total': len(s['patches']),
                'received_all': len(s['patches']) >= s['total'],
                'mbox': m['mbox'],
                'cover_letter': (self.cover_mini(s['cover'])
                                 if s['cover'] else None),
                'patches': [self.patch_mini(p) for p in s['patches']]}

    def headers(self, raw):
        parsed = email.parser.Parser().parsestr(raw, True)
        out = {}
        for k in parsed.keys():
            v = parsed.get_all(k)
            out[k] = v[0] if len(v) == 1 else v
        return out

    def patch(self, p, detail):
        d = self.patch_mini(p)
        d = {'id': d['id'], 'url': d['url'], 'web_url': d['web_url'],
             'project': self.project(p['project'], False),
             'msgid': d['msgid'], 'list_archive_url': d['list_archive_url'],
             'date': d['date'], 'name': d['name'], 'commit_ref': None,
             'pull_url': None, 'state': p['state'],
             'archived': p['archived'], 'hash': p['hash'],
             'submitter': self.person(p['submitter']),
             'delegate': (self.user(p['delegate']) if p['delegate']
                          else None),
             'mbox': d['mbox'],
             'series': [self.series_mini(p['series'])],
             'comments': '%s/api/patches/%d/comments/' % (self.base,
                                                         p['id']),
             'check': check_aggregate(p),
             'checks': '%s/api/patches/%d/checks/' % (self.base, p['id']),
             'tags': {}, 'related': []}
        if detail:
            d['headers'] = self.headers(p['headers'])
            d['content'] = p['content']
            d['diff'] = p['diff']
            d['prefixes'] = p['prefixes']
        return d

    def cover(self, c, detail):
        m = self.cover_mini(c)
        d = {'id': c['id'], 'url': m['url'], 'web_url': m['web_url'],
             'project': self.project(c['project'], False),
             'msgid': c['msgid'], 'list_archive_url': m['list_archive_url'],
             'date': m['date'], 'name': c['name'],
             'submitter': self.person(c['submitter']), 'mbox': m['mbox'],
             'series': [self.series_mini(c['series'])],
             'comments': '%s/api/covers/%d/comments/' % (self.base,
                                                        c['id'])}
        if detail:
            d['headers'] = self.headers(c['headers'])
            d['content'] = c['content']
        return d

    def comment_url(self, c):
        kind = 'patches' if c['kind'] == 'patch' else 'covers'
        return self.api('%s/%d/comments/%d/' % (kind, c['target']['id'],
                                                c['id']))

    def comment(self, c):
        return {'id': c['id'],
                'web_url': '%s/comment/%d/' % (self.base, c['id']),
                'msgid': c['msgid'],
                'list_archive_url': self.archive(
                    {'project': c['target']['project'],
                     'msgid': c['msgid']}),
                'date': isodate(c['date']), 'subject': c['subject'],
                'submitter': self.person(c['submitter']),
                'content': c['content'],
                'headers': self.headers(c['headers']), 'addressed': None}

    def comment_mini(self, c):
        d = self.comment(c)
        return {'id': d['id'], 'url': self.comment_url(c),
                'web_url': d['web_url'], 'msgid': d['msgid'],
                'list_archive_url': d['list_archive_url'], 'date': d['date']}

    def check(self, c, mini=False):
        url = self.api('patches/%d/checks/%d/' % (c['patch']['id'], c['id']))
        if mini:
            return {'id': c['id'], 'url': url, 'date': isodate(c['date']),
                    'state': c['state'], 'target_url': c['target_url'],
                    'context': c['context']}
        return {'id': c['id'], 'url': url, 'user': self.user(c['user']),
                'date': isodate(c['date']), 'state': c['state'],
                'target_url': c['target_url'], 'context': c['context'],
                'description': c['description']}

    def event(self, e):
        pl = {}
        for k, v in e['payload'].items():
            if k == 'patch':
                pl[k] = self.patch_mini(v)
            elif k == 'cover':
                pl[k] = self.cover_mini(v)
            elif k == 'series':
                pl[k] = self.series_mini(v)
            elif k == 'comment':
                pl[k] = self.comment_mini(v)
            elif k == 'check':
                pl[k] = self.check(v, mini=True)
            else:
                pl[k] = v
        return {'id': e['id'], 'category': e['category'],
                'project': self.project(e['project'], False),
                'date': isodate(e['date']),
                'actor': self.user(e['actor']) if e['actor'] else None,
                'payload': pl}


def check_aggregate(p):
    newest = {}
    for c in store.checks_of.get(p['id'], ()):
        key = (c['user']['id'], c['context'])
        if key not in newest or c['date'] >= newest[key]['date']:
            newest[key] = c
    states = [c['state'] for c in newest.values()]
    if not states:
        return 'pending'
    for s in ('fail', 'warning', 'pending'):
        if s in states:
            return s
    return 'success'


def patch_mbox(p):
    body = ''
    if p['content']:
        body = p['content'].strip() + '\n'
    parts = re.split('\n-{2,3} ?\n', body, 1)
    if len(parts) == 2:
        body, postscript = parts
        body = body.strip() + '\n'
        postscript = postscript.rstrip()
    else:
        postscript = ''
    for c in store.comments_of.get(p['id'], ()):
        body += patch_responses(c['content'])
    if postscript:
        body += '---\n' + postscript + '\n'
    if p.get('diff'):
        body += '\n' + p['diff']
    return mbox_message(p, body)


def cover_mbox(c):
    body = (c['content'] or '').strip() + '\n'
    return mbox_message(c, body)


def mbox_message(obj, body):
    mail = MIMENonMultipart('text', 'plain', charset='utf-8')
    mail.set_payload(body.encode('utf-8'))
    encode_7or8bit(mail)
    sub = obj['submitter']
    mail['X-Patchwork-Submitter'] = email.utils.formataddr(
        (str(email.header.Header(sub['name'], 'utf-8')), sub['email']))
    mail['X-Patchwork-Id'] = str(obj['id'])
    if obj.get('delegate'):
        mail['X-Patchwork-Delegate'] = obj['delegate']['email']
    mail.set_unixfrom('From patchwork ' + obj['date'].ctime())
    orig = email.parser.HeaderParser().parsestr(obj['headers'])
    for key, val in orig.items():
        if key in ('Content-Transfer-Encoding', 'Content-Type'):
            continue
        mail[key] = val
    if 'Date' not in mail:
        mail['Date'] = email.utils.formatdate(
            obj['date'].replace(tzinfo=datetime.timezone.utc).timestamp())
    return mail.as_bytes(unixfrom=True,
                         policy=mail.policy.clone(linesep='\n'))


def filename_of(name):
    return re.sub(r'[^-_A-Za-z0-9\.]+', '-', str(name)).strip('-') + '.patch'


# ---- HTTP -----------------------------------------------------------

store = None
faults = {'delay_ms': 0, 'fail_next': 0, 'fail_status': 500,
          'rate_limit_next': 0, 'retry_after': 1, 'truncate_next': 0,
          'html_next': 0, 'html_status': 502, 'reset_next': 0,
          'drop_response_next': 0, 'mbox_short_next': 0,
          'canned_next': 0, 'canned': None, 'match': '',
          'method': '', 'served': 0, 'faulted': 0}
faults_lock = threading.Lock()
record_file = None
record_lock = threading.Lock()


def by_id(pool, ident):
    """The object of pool whose str(id) is ident, None when none.  Ids
    are mostly the position + 1 (everything but data.json's users): that
    one is tried first, then the whole pool."""
    ident = str(ident)
    if ident.isdigit() and ident[0] != '0':
        i = int(ident) - 1
        if i < len(pool) and str(pool[i]['id']) == ident:
            return pool[i]
    for obj in pool:
        if str(obj['id']) == ident:
            return obj
    return None


class NotFound(Exception):
    def __init__(self, detail='Not found.'):
        Exception.__init__(self, detail)
        self.detail = detail


class Denied(Exception):
    def __init__(self, detail=MSG_PERM):
        Exception.__init__(self, detail)
        self.detail = detail


class Bad(Exception):
    def __init__(self, errors):
        Exception.__init__(self, 'bad request')
        self.errors = errors


class ServerError(Exception):
    """Django's 500 page (DEBUG off), as the real server sends it."""


SERVER_ERROR_PAGE = (b'\n<!doctype html>\n<html lang="en">\n<head>\n'
                     b'  <title>Server Error (500)</title>\n</head>\n'
                     b'<body>\n  <h1>Server Error (500)</h1><p></p>\n'
                     b'</body>\n</html>\n')


def allow_for(rest):
    """The Allow header of the view serving /api/REST."""
    parts = rest.rstrip('/').split('/')
    if len(parts) >= 3 and parts[0] == 'patches' and parts[2] == 'checks':
        return ('GET, POST, HEAD, OPTIONS' if len(parts) == 3
                else 'GET, HEAD, OPTIONS')
    if len(parts) == 2 and parts[0] in ('patches', 'projects'):
        return 'GET, PUT, PATCH, HEAD, OPTIONS'
    return 'GET, HEAD, OPTIONS'


def qbool(v):
    v = v.lower()
    if v in ('true', '1', 'yes', 'on'):
        return True
    if v in ('false', '0', 'no', 'off'):
        return False
    raise ValueError(v)


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'WSGIServer/0.2'

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        BaseHTTPRequestHandler.setup(self)
        # headers and body go out in two writes: without this, Nagle and
        # delayed ACKs add 40 ms to every keep-alive request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- plumbing --
    def record(self):
        if not record_file:
            return
        hdrs = {}
        for k, v in self.headers.items():
            if k.lower() == 'authorization':
                v = v.split(' ', 1)[0] + ' <redacted>'
            hdrs[k] = v
        line = json.dumps({'method': self.command, 'path': self.path,
                           'headers': hdrs, 'time': time.time()})
        with record_lock:
            with open(record_file, 'a') as f:
                f.write(line + '\n')

    def send_canned(self, c):
        """The canned answer of the canned_next fault."""
        me = self.base() + self.path
        hdrs = {k: v.replace('{url}', me)
                for k, v in (c.get('headers') or {}).items()}
        ctype = hdrs.pop('Content-Type', 'application/json')
        body = c.get('body', '') * int(c.get('repeat', 1))
        return self.send(c.get('status', 200), body, ctype, extra=hdrs)

    def send(self, status, body=b'', ctype='application/json', extra=None,
             allow=None):
        if self.discard:
            self.reset()
            return
        if isinstance(body, str):
            body = body.encode('utf-8')
        self.send_response(status)
        if ctype:
            self.send_header('Content-Type', ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if ctype == 'application/json':
            self.send_header('Vary', 'Accept, Cookie')
        if allow:
            self.send_header('Allow', allow)
        self.send_header('X-Frame-Options', 'DENY')
        self.send_header('Content-Length', str(len(body)))
        # headers and body in one write: a thread that gives the GIL up
        # for each write waits for it again behind a busy one
        self._headers_buffer.append(b'\r\n')
        if self.command != 'HEAD':
            self._headers_buffer.append(body)
        data = b''.join(self._headers_buffer)
        self._headers_buffer = []
        self.wfile.write(data)

    def send_json(self, status, obj, extra=None, allow='GET, HEAD, OPTIONS'):
        body = json.dumps(obj, indent=2, ensure_ascii=False)
        if self.truncate:
            body = body.encode('utf-8')[:max(1, len(body) // 2)]
        self.send(status, body, 'application/json', extra, allow)

    def base(self):
        host = self.headers.get('Host') or '127.0.0.1:%d' % (
            self.server.server_address[1])
        return 'http://' + host

    def take_fault(self):
        """Returns the fault to apply to this request, or None."""
        with faults_lock:
            faults['served'] += 1
            if faults['match'] and faults['match'] not in self.path:
                return None, 0
            if faults['method'] and faults['method'] != self.command:
                return None, 0
            delay = faults['delay_ms']
            for key in ('reset_next', 'fail_next', 'rate_limit_next',
                        'html_next', 'truncate_next',
                        'drop_response_next', 'canned_next'):
                if faults[key] > 0:
                    faults[key] -= 1
                    faults['faulted'] += 1
                    return key, delay
            return None, delay

    def reset(self):
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack('ii', 1, 0))
        except OSError:
            pass
        self.close_connection = True
        self.connection.close()

    def handle_one(self):
        self.truncate = False
        self.discard = False
        u = urllib.parse.urlsplit(self.path)
        self.query = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        path = u.path
        if path == '/__control__':
            return self.control()
        self.record()
        fault, delay = self.take_fault()
        if delay:
            time.sleep(delay / 1000.0)
        if fault == 'reset_next':
            return self.reset()
        if fault == 'fail_next':
            return self.send(faults['fail_status'],
                             b'<h1>Server Error (500)</h1>', 'text/html')
        if fault == 'rate_limit_next':
            ra = faults['retry_after']
            return self.send_json(429, {
                'detail': 'Request was throttled. Expected available in '
                          '%d seconds.' % ra},
                extra={'Retry-After': str(ra)})
        if fault == 'html_next':
            return self.send(faults['html_status'],
                             '<html><head><title>502 Bad Gateway</title>'
                             '</head><body><h1>Bad Gateway</h1><p>The '
                             'proxy received an invalid response.</p>'
                             '</body></html>\n', 'text/html; charset=utf-8')
        if fault == 'canned_next':
            return self.send_canned(faults['canned'] or {})
        if fault == 'truncate_next':
            self.truncate = True
        if fault == 'drop_response_next':
            # the request is carried out, the answer is lost: what a
            # client sees when the server or the network dies mid-reply
            self.discard = True
        try:
            with store.lock:
                self.route(path)
        except NotFound as e:
            self.send_json(404, {'detail': e.detail}, allow=self.allow)
        except Denied as e:
            self.send_json(403, {'detail': e.detail}, allow=self.allow)
        except Bad as e:
            self.send_json(400, e.errors, allow=self.allow)
        except ServerError:
            self.send(500, SERVER_ERROR_PAGE, 'text/html')

    def do_GET(self):
        self.handle_one()

    def do_HEAD(self):
        self.handle_one()

    def do_POST(self):
        self.handle_one()

    def do_PATCH(self):
        self.handle_one()

    def do_PUT(self):
        self.handle_one()

    def body(self):
        n = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(n) if n else b''
        ctype = (self.headers.get('Content-Type') or '').split(';')[0]
        if ctype == 'application/json':
            try:
                data = json.loads(raw.decode('utf-8') or '{}')
            except ValueError as e:
                raise Bad({'detail': 'JSON parse error - %s' % e})
            if not isinstance(data, dict):
                raise Bad({'non_field_errors': [
                    'Invalid data. Expected a dictionary, but got %s.' %
                    type(data).__name__]})
            return data
        q = urllib.parse.parse_qs(raw.decode('utf-8', 'replace'),
                                  keep_blank_values=True)
        return {k: v[-1] for k, v in q.items()}

    def control(self):
        if self.command == 'POST':
            n = int(self.headers.get('Content-Length') or 0)
            req = json.loads(self.rfile.read(n).decode('utf-8') or '{}')
            out = {}
            with faults_lock:
                if req.get('clear'):
                    for k in ('delay_ms', 'fail_next', 'rate_limit_next',
                              'truncate_next', 'html_next', 'reset_next',
                              'drop_response_next', 'mbox_short_next',
                              'canned_next'):
                        faults[k] = 0
                    faults['match'] = faults['method'] = ''
                for k in faults:
                    if k in req and k not in ('served', 'faulted'):
                        faults[k] = req[k]
            if 'freeze_clock' in req:
                with store.lock:
                    store.frozen = (parse_iso(req['freeze_clock'])
                                    if req['freeze_clock'] else None)
            if 'hold' in req:
                with store.lock:
                    store.hold = req['hold'] or None
            if 'import' in req:
                obj = store.import_mail(req['import'],
                                        req.get('events', True))
                out['imported'] = obj['id'] if obj else None
            if req.get('release'):
                out['released'] = [o['id'] if o else None
                                   for o in store.release()]
            with store.lock:
                out['held'] = len(store.held)
            with faults_lock:
                out.update(faults)
            return self.send(200, json.dumps(out))
        with faults_lock:
            return self.send(200, json.dumps(faults))

    # -- auth --
    def auth(self):
        """The user of the token, None when anonymous; 403 when invalid."""
        h = self.headers.get('Authorization')
        if not h:
            return None
        parts = h.split()
        if not parts or parts[0].lower() != 'token':
            return None
        if len(parts) == 1:
            raise Denied('Invalid token header. No credentials provided.')
        if len(parts) > 2:
            raise Denied('Invalid token header. Token string should not '
                         'contain spaces.')
        u = store.user_by_token(parts[1])
        if not u:
            raise Denied('Invalid token.')
        return u

    # -- routing --
    def route(self, path):
        self.allow = 'GET, HEAD, OPTIONS'
        m = re.match(r'^/api/(?:(\d+\.\d+)/)?(.*)$', path)
        if m:
            ver = m.group(1)
            if ver and ver not in API_VERSIONS:
                raise NotFound()
            self.ser = Ser(self.base(), ver)
            self.ver = ver or API_VERSIONS[-1]
            self.allow = allow_for(m.group(2))
            self.user = self.auth()
            return self.api(m.group(2))
        self.ser = Ser(self.base(), None)
        m = re.match(r'^/(patch|cover)/(\d+)/mbox/$', path)
        if m:
            pool = store.patches if m.group(1) == 'patch' else store.covers
            obj = self.get(pool, m.group(2))
            loc = '/project/%s/%s/%s/mbox/' % (obj['project']['link_name'],
                                               m.group(1),
                                               obj['msgid'][1:-1])
            return self.send(302, b'', 'text/html; charset=utf-8',
                             {'Location': loc})
        m = re.match(r'^/project/([^/]+)/(patch|cover)/(.+)/mbox/$', path)
        if m:
            msgid = '<%s>' % urllib.parse.unquote(m.group(3))
            hits = [store.by_msgid.get((m.group(2), pr['id'], msgid))
                    for pr in store.projects
                    if pr['link_name'] == m.group(1)]
            hits = [h for h in hits if h]
            if hits:
                obj = min(hits, key=lambda h: h['id'])
                data = (patch_mbox(obj) if m.group(2) == 'patch'
                        else cover_mbox(obj))
                return self.send(200, data, 'text/plain; charset=utf-8',
                                 {'Content-Disposition':
                                  'attachment; filename=' +
                                  filename_of(obj['name'])})
            return self.send(404, b'<h1>Not Found</h1>', 'text/html')
        m = re.match(r'^/series/(\d+)/mbox/$', path)
        if m:
            s = by_id(store.series, m.group(1))
            if not s:
                return self.send(404, b'<h1>Not Found</h1>', 'text/html')
            skip = 0
            with faults_lock:
                if faults['mbox_short_next'] > 0:
                    faults['mbox_short_next'] -= 1
                    skip = 1
            data = b'\n'.join(patch_mbox(p) for p in s['patches'][skip:])
            return self.send(200, data, 'text/plain',
                             {'Content-Disposition': 'attachment; filename=' +
                              filename_of(s['name'])})
        return self.send(404, b'<h1>Not Found</h1>', 'text/html')

    def get(self, pool, ident):
        obj = by_id(pool, ident)
        if obj is None:
            raise NotFound()
        return obj

    def q(self, key):
        v = self.query.get(key)
        return v[-1] if v else None

    def api(self, rest):
        s = self.ser
        if rest == '':
            names = ['projects', 'users', 'people', 'patches', 'covers',
                     'series', 'events', 'bundles']
            return self.send_json(200, {n: s.api(n + '/') for n in names})
        parts = rest.rstrip('/').split('/')
        if not rest.endswith('/'):
            raise NotFound()
        kind = parts[0]
        if kind == 'projects':
            if len(parts) == 1:
                return self.listing(store.projects, lambda p: s.project(p))
            self.allow = 'GET, PUT, PATCH, HEAD, OPTIONS'
            p = store.project(parts[1])
            if not p or len(parts) > 2:
                raise NotFound()
            return self.send_json(200, s.project(p), allow=self.allow)
        if kind in ('people', 'users'):
            if not self.user:
                raise Denied(MSG_NOAUTH)
            pool = store.people if kind == 'people' else store.users
            fn = ((lambda p: s.person(p, True)) if kind == 'people'
                  else s.user)
            if len(parts) == 1:
                return self.listing(pool, fn)
            return self.send_json(200, fn(self.get(pool, parts[1])))
        if kind == 'patches':
            return self.api_patches(parts)
        if kind == 'covers':
            if len(parts) == 1:
                items = self.filtered(store.covers, 'covers')
                return self.listing(items, lambda c: s.cover(c, False))
            c = self.get(store.covers, parts[1])
            if len(parts) == 2:
                return self.send_json(200, s.cover(c, True))
            if parts[2] == 'comments' and len(parts) == 3:
                return self.listing(list(store.cover_comments_of.get(
                    c['id'], ())), s.comment)
            raise NotFound()
        if kind == 'series':
            if len(parts) == 1:
                items = self.filtered(store.series, 'series')
                return self.listing(items, s.series)
            if len(parts) > 2:
                raise NotFound()
            return self.send_json(200, s.series(self.get(store.series,
                                                         parts[1])))
        if kind == 'events':
            if len(parts) > 1:
                raise NotFound()
            items = self.filtered(store.events, 'events')
            return self.listing(items, s.event)
        if kind == 'bundles' and len(parts) == 1:
            return self.listing([], None)
        raise NotFound()

    def api_patches(self, parts):
        s = self.ser
        if len(parts) == 1:
            items = self.filtered(store.patches, 'patches')
            return self.listing(items, lambda p: s.patch(p, False))
        self.allow = 'GET, PUT, PATCH, HEAD, OPTIONS'
        if len(parts) == 2:
            p = self.get(store.patches, parts[1])
            if self.command in ('PATCH', 'PUT'):
                return self.update_patch(p)
            if self.command == 'POST':
                return self.send_json(405, {
                    'detail': 'Method "POST" not allowed.'},
                    allow=self.allow)
            return self.send_json(200, s.patch(p, True), allow=self.allow)
        sub = parts[2]
        if sub == 'comments' and len(parts) == 3:
            self.allow = 'GET, HEAD, OPTIONS'
            p = self.get(store.patches, parts[1])
            return self.listing(list(store.comments_of.get(p['id'], ())),
                                s.comment)
        if sub == 'checks':
            self.allow = 'GET, POST, HEAD, OPTIONS'
            if len(parts) == 3:
                if self.command == 'POST':
                    return self.post_check(parts[1])
                p = self.get(store.patches, parts[1])
                items = list(store.checks_of.get(p['id'], ()))
                items = self.filtered(items, 'checks')
                return self.listing(items, s.check)
            if len(parts) == 4:
                self.allow = 'GET, HEAD, OPTIONS'
                p = self.get(store.patches, parts[1])
                for c in store.checks_of.get(p['id'], ()):
                    if str(c['id']) == parts[3]:
                        return self.send_json(200, s.check(c))
                raise NotFound()
        raise NotFound()

    def editable(self, p):
        u = self.user
        if not u:
            return False
        if p['delegate'] is u:
            return True
        return p['project']['link_name'] in u.get('maintains', [])

    def post_check(self, pid):
        if not self.user:
            raise Denied()
        p = self.get(store.patches, pid)
        if not self.editable(p):
            raise Denied()
        data = self.body()
        errors = {}
        state = data.get('state')
        if state is None or state == '':
            errors['state'] = ['This field is required.']
        elif state not in CHECK_STATES:
            errors['state'] = ['"%s" is not a valid choice.' % state]
        context = data.get('context')
        if context is None or context == '':
            context = 'default'
        elif not re.match(r'^[-a-zA-Z0-9_]+\Z', str(context)):
            errors['context'] = ['Enter a valid "slug" consisting of '
                                 'letters, numbers, underscores or '
                                 'hyphens.']
        elif len(str(context)) > 255:
            errors['context'] = ['Ensure this field has no more than 255 '
                                 'characters.']
        target = data.get('target_url')
        if target in ('', None):
            target = None
        elif not re.match(r'^(https?|ftps?)://[^\s/$.?#].[^\s]*$', target):
            errors['target_url'] = ['Enter a valid URL.']
        desc = data.get('description')
        if desc == '':
            desc = None
        if errors:
            raise Bad(errors)
        c = {'id': len(store.checks) + 1, 'patch': p, 'user': self.user,
             'date': store.now(), 'state': state, 'target_url': target,
             'context': context, 'description': desc}
        store.checks.append(c)
        store.checks_of.setdefault(p['id'], []).append(c)
        store.event(p['project'], 'check-created', actor=self.user,
                    patch=p, check=c)
        body = self.ser.check(c)
        return self.send_json(201, body, extra={'Location': body['url']},
                              allow=self.allow)

    def update_patch(self, p):
        if not self.editable(p):
            raise Denied()
        data = self.body()
        if 'state' in data:
            st = data['state']
            if st not in STATES:
                raise Bad({'state': ['Invalid state %s. Expected one of: '
                                     '%s.' % (st, ', '.join(STATES))]})
            if st != p['state']:
                old = p['state']
                p['state'] = st
                store.event(p['project'], 'patch-state-changed',
                            actor=self.user, patch=p, previous_state=old,
                            current_state=st)
        if 'archived' in data:
            v = data['archived']
            p['archived'] = v if isinstance(v, bool) else qbool(str(v))
        body = self.ser.patch(p, True)
        # as recorded: the update answer has no 'related'
        body.pop('related', None)
        return self.send_json(200, body, allow=self.allow)

    # -- filters, ordering and paging --
    def filtered(self, items, kind):
        """django-filter in strict mode: an invalid value gives []."""
        items = list(items)
        try:
            proj = self.q('project')
            if proj is not None and kind != 'checks':
                pr = store.project(proj)
                if not pr:
                    return []
                items = [i for i in items if i['project'] is pr]
            for key, op in (('since', lambda a, b: a >= b),
                            ('before', lambda a, b: a < b)):
                v = self.q(key)
                if v:  # an empty value filters nothing, as on Patchwork
                    d = parse_iso(v)
                    if d is None:
                        return []
                    items = [i for i in items if op(i['date'], d)]
            if kind == 'patches':
                states = self.query.get('state')
                if states:
                    items = [i for i in items if i['state'] in states]
                v = self.q('archived')
                if v is not None:
                    b = qbool(v)
                    items = [i for i in items if i['archived'] == b]
                v = self.q('series')
                if v is not None:
                    items = [i for i in items
                             if str(i['series']['id']) == v]
                v = self.q('msgid')
                if v is not None:
                    mid = v if v.startswith('<') else '<%s>' % v
                    items = [i for i in items if i['msgid'] == mid]
            if kind == 'events':
                cats = self.query.get('category')
                if cats:
                    items = [i for i in items if i['category'] in cats]
                for key in ('patch', 'series', 'cover'):
                    v = self.q(key)
                    if v is not None:
                        items = [i for i in items if key in i['payload'] and
                                 str(i['payload'][key]['id']) == v]
            if kind == 'checks':
                for key in ('state', 'context'):
                    v = self.q(key)
                    if v is not None:
                        items = [i for i in items if i[key] == v]
        except ValueError:
            return []
        order = self.q('order')
        default = '-date' if kind == 'events' else 'id'
        fields = {'events': ('date',), 'patches': ('id', 'name', 'date',
                                                   'state', 'archived'),
                  'series': ('id', 'name', 'date'),
                  'covers': ('id', 'name', 'date'),
                  'checks': ('id', 'date', 'state', 'context')}.get(kind, ())
        key = order if order and order.lstrip('-') in fields else default
        rev = key.startswith('-')
        f = key.lstrip('-')
        items.sort(key=lambda i: (i[f], i['id']), reverse=rev)
        return items

    def page_size(self):
        v = self.q('per_page')
        try:
            n = int(v)
            if n <= 0:
                raise ValueError()
            return min(n, MAX_PAGE_SIZE)
        except (TypeError, ValueError):
            return PAGE_SIZE

    def link(self, page):
        url = self.base() + self.path
        sp = urllib.parse.urlsplit(url)
        q = urllib.parse.parse_qs(sp.query, keep_blank_values=True)
        if page is None:
            q.pop('page', None)
        else:
            q['page'] = [str(page)]
        query = urllib.parse.urlencode(sorted(q.items()), doseq=True)
        return urllib.parse.urlunsplit((sp.scheme, sp.netloc, sp.path,
                                        query, sp.fragment))

    def listing(self, items, fn):
        size = self.page_size()
        pages = max(1, (len(items) + size - 1) // size)
        raw = self.q('page') or '1'
        try:
            page = pages if raw == 'last' else int(raw)
        except ValueError:
            raise NotFound('Invalid page.')
        if page < 1 or page > pages:
            raise NotFound('Invalid page.')
        chunk = items[(page - 1) * size:page * size]
        links = []
        if page < pages:
            links.append('<%s>; rel="next"' % self.link(page + 1))
        if page > 1:
            links.append('<%s>; rel="prev"' % self.link(
                None if page == 2 else page - 1))
        links.append('<%s>; rel="first"' % self.link(1))
        links.append('<%s>; rel="last"' % self.link(pages))
        return self.send_json(200, [fn(i) for i in chunk],
                              extra={'Link': ', '.join(links)},
                              allow=self.allow)


class QuietServer(ThreadingHTTPServer):
    """A client that went away (timeouts, the faults) is not an error.
    The listen backlog is a web server's, not socketserver's 5: with
    more connections than that arriving at once (a client posting
    checks eight at a time) the kernel drops SYNs, and each dropped one
    costs the client a 1 s retransmission."""

    request_queue_size = 128

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError,
                                          ConnectionResetError)):
            return
        ThreadingHTTPServer.handle_error(self, request, client_address)


def load(datadir, hold=None):
    with open(os.path.join(datadir, 'data.json')) as f:
        data = json.load(f)
    st = Store(data)
    st.hold = hold
    maildir = os.path.join(datadir, data.get('mail_dir', 'mail'))
    if os.path.isdir(maildir):
        for name in sorted(os.listdir(maildir)):
            if name.endswith('.eml'):
                with open(os.path.join(maildir, name), 'rb') as f:
                    st.import_mail(f.read())
    return st


def main():
    global store, record_file
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--data', required=True)
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--port-file')
    ap.add_argument('--record')
    ap.add_argument('--hold', help='hold back the mails whose Message-ID '
                    'matches this regex: their series never complete')
    for k in ('delay-ms', 'fail-next', 'rate-limit-next', 'retry-after',
              'truncate-next', 'html-next', 'reset-next'):
        ap.add_argument('--' + k, type=int)
    args = ap.parse_args()
    # a request thread waiting for the GIL behind the one importing
    # mail waits a switch interval (5 ms by default) each time it gives
    # it up; a shorter one keeps the answers' latency near their CPU
    sys.setswitchinterval(0.0005)
    store = load(args.data, args.hold)
    record_file = args.record
    for k in ('delay_ms', 'fail_next', 'rate_limit_next', 'retry_after',
              'truncate_next', 'html_next', 'reset_next'):
        v = getattr(args, k)
        if v is not None:
            faults[k] = v
    srv = QuietServer(('127.0.0.1', args.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + '.tmp'
        with open(tmp, 'w') as f:
            f.write('%d\n' % port)
        os.rename(tmp, args.port_file)
    else:
        print(port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
