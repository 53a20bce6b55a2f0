#!/usr/bin/python3
"""pwproxy.py - a loopback HTTP proxy that makes the Patchwork stand-in
(tests/lib/pw_standin.py) hostile, for the hostile-peer suite.

It forwards every request to the stand-in (the Host header kept, so that
the stand-in's absolute links point back at the proxy) and, when a rule
matches, answers differently.  Rules are set at run time:

  POST /__proxy__ {"rules": [RULE, ...]}   add rules (first match wins)
  POST /__proxy__ {"clear": true}          drop every rule
  GET  /__proxy__                          the rules with their hit counts

RULE = {"match": "substring of the path", "method": "GET" (optional),
        "count": N (how many requests it applies to; 0: every one),
        "fault": NAME, ...its arguments}.  The faults:

  status    answer "status" (500) with "retry_after" and "body", unforwarded
  drip      the real answer, its body a byte every "ms" (200) milliseconds,
            for at most "max_s" (60) seconds
  hang      read the request, answer nothing; hold the connection until
            the client goes or "max_s" (120) seconds pass
  truncate  the real answer's headers, half its body, then close
  drop      carry the request out at the stand-in, then close the
            connection without a byte of answer
  huge      200 with a JSON-looking body of "mib" (300) MiB, generated as
            it is sent, never held in memory
  gzip      200, Content-Encoding: gzip, "mib" (1024) MiB of zeros that
            compress to about 1/1000 of that (computed once, cached)
  body      200 (or "status") with "body" as JSON; "nested": N makes the
            body N '[' then N ']'
  edit      the real JSON list answer with item "index" (0) field "key"
            ("payload.series" for a nested one) set to the raw JSON text
            "raw" (so "9223372036854775808", "1e308", "\\"a\\u0000b\\"");
            "where": {"field": "value"} picks the first item that has
            them instead of "index" (answered unchanged when none has)
  redirect  "status" (302) to "location", where {self} is this request's
            own URL on the proxy
  link      the real answer with Link: <"target">; rel="next" ({self} as
            above)
  delay     the real answer, "ms" (300) milliseconds late; the rule
            counts the requests it holds at once, the most in "max_inflight"

Loopback only; Python 3 standard library only.
Usage: pwproxy.py --upstream PORT --port-file F [--log F]
"""

import argparse
import http.client
import json
import os
import select
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIB = 1 << 20
lock = threading.Lock()
rules = []
gzip_cache = {}
upstream = 0


def take_rule(method, path):
    """The rule for this request (its count taken), or None."""
    with lock:
        for r in rules:
            if r.get('match', '') not in path:
                continue
            if r.get('method') and r['method'] != method:
                continue
            if r.get('count', 1) and r['hits'] >= r.get('count', 1):
                continue
            r['hits'] += 1
            return dict(r, _rule=r)
    return None


def gzip_zeros(mib):
    """A gzip stream of mib MiB of zeros, made once per size."""
    with lock:
        if mib not in gzip_cache:
            z = zlib.compressobj(9, zlib.DEFLATED, 31)
            chunk = bytes(MIB)
            parts = [z.compress(chunk) for _ in range(mib)]
            parts.append(z.flush())
            gzip_cache[mib] = b''.join(parts)
        return gzip_cache[mib]


def set_raw(doc, r):
    """doc (a JSON list) with the rule's item's key set to the raw text."""
    sentinel = '__pwproxy_raw__'
    obj = json.loads(doc)
    where = r.get('where')
    if where:
        hits = [i for i in obj
                if all(i.get(k) == v for k, v in where.items())]
        if not hits:
            return doc.decode()
        item = hits[0]
    else:
        item = obj[r.get('index', 0)]
    key, raw = r['key'], r['raw']
    parts = key.split('.')
    for p in parts[:-1]:
        item = item[p]
    item[parts[-1]] = sentinel
    return json.dumps(obj, indent=2).replace('"%s"' % sentinel, raw)


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.0'

    def log_message(self, fmt, *args):
        pass

    def body_in(self):
        n = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(n) if n else None

    def answer(self, status, headers, body):
        self.send_response_only(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self, body):
        c = http.client.HTTPConnection('127.0.0.1', upstream, timeout=30)
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ('connection', 'content-length',
                                     'accept-encoding')}
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        hdrs = [(k, v) for k, v in r.getheaders()
                if k.lower() not in ('connection', 'content-length',
                                     'transfer-encoding', 'server',
                                     'date')]
        c.close()
        return r.status, hdrs, data

    def self_url(self):
        return 'http://%s%s' % (self.headers.get('Host'), self.path)

    def gone(self, wait):
        """1 when the client closed its end within wait seconds."""
        s = self.connection
        r, _, _ = select.select([s], [], [], wait)
        if not r:
            return False
        try:
            return s.recv(1, 0x2) == b''  # MSG_PEEK
        except OSError:
            return True

    def control(self, body):
        global rules
        if self.command == 'POST':
            req = json.loads(body or b'{}')
            with lock:
                if req.get('clear'):
                    rules = []
                for r in req.get('rules', []):
                    r['hits'] = 0
                    r['inflight'] = r['max_inflight'] = 0
                    rules.append(r)
        with lock:
            out = json.dumps({'rules': rules}).encode()
        self.answer(200, [('Content-Type', 'application/json')], out)

    def handle_any(self):
        body = self.body_in()
        if self.path.startswith('/__proxy__'):
            return self.control(body)
        r = take_rule(self.command, self.path)
        fault = r['fault'] if r else None
        v = {}
        try:
            if fault == 'delay':
                return self.f_delay(r, body)
            if fault in (None, 'drip', 'truncate', 'drop', 'edit', 'link'):
                v['status'], v['hdrs'], v['data'] = self.forward(body)
            if fault is None:
                return self.answer(v['status'], v['hdrs'], v['data'])
            return getattr(self, 'f_' + fault)(r, v)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any

    # ---- the faults --------------------------------------------------

    def f_status(self, r, v):
        hdrs = [('Content-Type', 'application/json')]
        if 'retry_after' in r:
            hdrs.append(('Retry-After', str(r['retry_after'])))
        body = r.get('body', '{"detail": "injected"}').encode()
        self.answer(r.get('status', 500), hdrs, body)

    def f_drip(self, r, v):
        self.send_response_only(v['status'])
        for k, val in v['hdrs']:
            self.send_header(k, val)
        self.send_header('Content-Length', str(len(v['data'])))
        self.end_headers()
        self.wfile.flush()
        end = time.monotonic() + r.get('max_s', 60)
        for i in range(len(v['data'])):
            if time.monotonic() > end or self.gone(r.get('ms', 200) / 1e3):
                return
            self.wfile.write(v['data'][i:i + 1])
            self.wfile.flush()

    def f_hang(self, r, v):
        end = time.monotonic() + r.get('max_s', 120)
        while time.monotonic() < end and not self.gone(0.2):
            pass

    def f_truncate(self, r, v):
        self.send_response_only(v['status'])
        for k, val in v['hdrs']:
            self.send_header(k, val)
        self.send_header('Content-Length', str(len(v['data'])))
        self.end_headers()
        self.wfile.write(v['data'][:len(v['data']) // 2])

    def f_drop(self, r, v):
        pass

    def f_delay(self, r, body):
        rule = r['_rule']
        with lock:
            rule['inflight'] += 1
            rule['max_inflight'] = max(rule['max_inflight'],
                                       rule['inflight'])
        try:
            time.sleep(r.get('ms', 300) / 1e3)
            self.answer(*self.forward(body))
        finally:
            with lock:
                rule['inflight'] -= 1

    def f_huge(self, r, v):
        size = r.get('mib', 300) * MIB
        self.send_response_only(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(size))
        self.end_headers()
        item = b'{"id": 1, "category": "x", "date": "2026-01-01T00:00:00"},'
        chunk = b'[' + item * (MIB // len(item))
        sent = 0
        while sent < size:
            part = chunk[:size - sent]
            self.wfile.write(part)
            sent += len(part)
            chunk = item * (MIB // len(item))

    def f_gzip(self, r, v):
        data = gzip_zeros(r.get('mib', 1024))
        self.answer(200, [('Content-Type', 'application/json'),
                          ('Content-Encoding', 'gzip')], data)

    def f_body(self, r, v):
        if 'nested' in r:
            n = r['nested']
            body = b'[' * n + b']' * n
        else:
            body = r.get('body', '').encode()
        self.answer(r.get('status', 200),
                    [('Content-Type', 'application/json')], body)

    def f_edit(self, r, v):
        doc = set_raw(v['data'], r)
        self.answer(v['status'], v['hdrs'], doc.encode())

    def f_redirect(self, r, v):
        loc = r['location'].replace('{self}', self.self_url())
        self.answer(r.get('status', 302), [('Location', loc)], b'')

    def f_link(self, r, v):
        target = r['target'].replace('{self}', self.self_url())
        hdrs = [h for h in v['hdrs'] if h[0].lower() != 'link']
        hdrs.append(('Link', '<%s>; rel="next"' % target))
        self.answer(v['status'], hdrs, v['data'])


class Server(ThreadingHTTPServer):
    """With a web server's listen backlog (socketserver's is 5)."""

    daemon_threads = True
    request_queue_size = 128


def main():
    global upstream
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--upstream', type=int, required=True)
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--port-file', required=True)
    args = ap.parse_args()
    upstream = args.upstream
    srv = Server(('127.0.0.1', args.port), Handler)
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write('%d\n' % srv.server_address[1])
    os.rename(tmp, args.port_file)
    srv.serve_forever()


if __name__ == '__main__':
    main()
