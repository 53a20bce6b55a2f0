#!/usr/bin/env python3
"""No banned C library calls (curl's checksrc, git's banned.h): every
.c and .h under scoring/, bot/ and tests/ is scanned, comments and
string and character literals blanked out, for a call of sprintf,
vsprintf, strcpy, strcat, strncpy, strncat, atoi, atol, atoll, atof,
gets or strtok (the name as a word, then '(').  Prints one line per
use: FILE:LINE: banned FUNC (use ...), and exits 1 if there is any."""
import re
import sys

from styleutil import report, sources

DIRS = ('scoring', 'bot', 'tests')

USE = {
    'sprintf': 'snprintf or buf_addf',
    'vsprintf': 'vsnprintf',
    'strcpy': 'memcpy with a known length, or pt_strdup',
    'strcat': 'struct buf (buf_addstr)',
    'strncpy': 'memcpy with a known length, or snprintf',
    'strncat': 'struct buf (buf_add)',
    'atoi': 'strtol with end, errno and range checks',
    'atol': 'strtol with end, errno and range checks',
    'atoll': 'strtoll with end, errno and range checks',
    'atof': 'strtod with an end check',
    'gets': 'fgets or getline',
    'strtok': 'strtok_r',
}
CALL = re.compile(r'\b(' + '|'.join(sorted(USE, key=len, reverse=True)) +
                  r')\s*\(')


def blank(text):
    """The text with comments and literals replaced by spaces, newlines
    kept, so that line numbers still hold."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r'[^\n]', ' ', text[i:j]))
        i = j
    return ''.join(out)


def check():
    bad = []
    for d in DIRS:
        for rel, text in sources(d, ('.c', '.h')):
            for n, line in enumerate(blank(text).split('\n'), 1):
                for m in CALL.finditer(line):
                    # a struct member of that name is not the function
                    before = line[:m.start()].rstrip()
                    if before.endswith(('.', '->')):
                        continue
                    name = m.group(1)
                    bad.append(f'{rel}:{n}: banned {name} '
                               f'(use {USE[name]})')
    return bad


def main():
    return report(check(), 'banned: {} use(s)')


if __name__ == '__main__':
    sys.exit(main())
