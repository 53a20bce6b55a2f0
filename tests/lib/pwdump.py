#!/usr/bin/python3
"""pwdump.py - what a Patchwork server (the stand-in) holds, for the bot's
end-to-end tests: every patch of every project with its checks, as one
JSON document on stdout:

  {"patches": [{"id", "project", "msgid", "series": [ids], "name",
                "checks": [{"context", "state", "description", "user"}]}]}

usage: pwdump.py URL        (e.g. http://127.0.0.1:PORT)
Follows the Link header's rel="next" like any client; standard library.
"""
import json
import re
import sys
import urllib.request


def get_all(url):
    out = []
    for _ in range(10000):  # bounded: 10,000 pages
        with urllib.request.urlopen(url, timeout=30) as r:
            out.extend(json.load(r))
            link = r.headers.get('Link') or ''
        m = re.search(r'<([^>]+)>;\s*rel="next"', link)
        if not m:
            return out
        url = m.group(1)
    raise SystemExit('pwdump: more than 10,000 pages at %s' % url)


def main():
    base = sys.argv[1].rstrip('/')
    patches = []
    for p in get_all(base + '/api/1.3/patches/?per_page=250&order=id'):
        checks = get_all(p['checks'] + '?per_page=250')
        patches.append({
            'id': p['id'], 'project': p['project']['link_name'],
            'msgid': p['msgid'].strip('<>'), 'name': p['name'],
            'series': [s['id'] for s in p.get('series', [])],
            'checks': [{'context': c['context'], 'state': c['state'],
                        'description': c['description'],
                        'user': (c.get('user') or {}).get('username')}
                       for c in checks]})
    json.dump({'patches': patches}, sys.stdout, indent=1)
    print()


if __name__ == '__main__':
    main()
