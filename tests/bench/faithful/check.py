#!/usr/bin/python3
"""tests/bench/faithful/check.py STATE REPO [N] - is every reason true?

For the newest N non-merge commits of REPO (default 200), run
`patchtriage --state STATE score --json --commit C --repo REPO` and
`explain --json` (PT_BIN or patchtriage on PATH) and check each reason
that score shows against the commit itself:

- a word of the subject or changelog ("subject says 'fix'", "changelog
  says ..."): the word occurs as a whole word (letters, digits, '_';
  case folded as the tokenizer does) in the subject, or in the
  changelog the model reads (trailer-like lines dropped), as claimed;
- a word of the code ("adds code with 'kfree'", "removes ...", "adds
  and removes ..."): a whole word, case kept, of the added or removed
  lines of the diff;
- the subject's prefix ("subject prefix 'net/ice'"): the subject starts
  with it and ': ';
- a tag ("... v23.11-rc4 ..."): the claim the reason makes of it (see
  TAG_RULES) holds in the repository;
- any other reason: each number it states is the feature's value as
  explain --json gives it (as written, as a percentage, or rounded as
  the sentence rounds it), and "no X" means the value is 0; a yes/no
  column (YES_NO) says yes when its value is 1 and its negation ("not a
  revert", "changes more than tests") when 0.

No sentence may be stated twice, among the reasons score shows or among
explain's rows (each one such is a false statement too).

A reason that matches none of these forms is counted as unchecked and
listed.  Prints the counts and every false statement, and exits 1 if
there is any false statement (2 on a usage or tool error).
"""
import json
import os
import re
import subprocess
import sys

BIN = os.environ.get('PT_BIN', 'patchtriage')
DROPPED = ('fixes', 'cc', 'link', 'closes', 'signed-off-by',
           'reviewed-by', 'acked-by', 'tested-by', 'reported-by',
           'suggested-by', 'co-developed-by', 'reported-and-tested-by',
           'bugzilla id', 'coverity issue', 'message-id', 'change-id',
           'bug', 'buglink')
WORD = re.compile(r"^(subject says|changelog says) '(.+)'$")
CODE = re.compile(r"^(adds and removes|adds|removes) code with '(.+)'$")
PREFIX = re.compile(r"^subject prefix '(.+)'$")
NUM = re.compile(r'(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])')
YES_NO = {'label.fixes_tag', 'label.cc_stable', 'test.bot_report',
          'test.tested_claim', 'test.arch_specific', 'proc.revert',
          'proc.bug_tracker', 'review.self_committed',
          'review.reviewer_frequent', 'proc.resend', 'code.comment_only',
          'code.whitespace_only', 'code.doc_only', 'code.test_only',
          'code.build_only', 'code.one_line'}
NEGATION = re.compile(r'^(no |not |changes more than |refers to no |'
                      r'touches no |committed by someone other |'
                      r'changelog does not )')
TAG = re.compile(r'\bv\d[\w.]*(?:-rc\d+)?\b')


def git(repo, *args):
    return subprocess.run(['git', '-C', repo] + list(args),
                          capture_output=True, check=True).stdout.decode(
                              'utf-8', 'surrogateescape')


def pt(state, *args):
    r = subprocess.run([BIN, '--quiet', '--state', state] + list(args),
                       capture_output=True)
    if r.returncode:
        raise RuntimeError(r.stderr.decode(errors='replace').strip())
    return json.loads(r.stdout)


def changelog(msg):
    lines = msg.split('\n')[1:]
    keep = []
    for ln in lines:
        s = ln.strip()
        key = s.split(':', 1)[0].lower() if ':' in s else None
        if key in DROPPED:
            continue
        keep.append(ln)
    return '\n'.join(keep)


def words(text, fold):
    if fold:
        text = text.lower()
    return set(re.findall(r'[A-Za-z0-9_]+', text))


class Commit:
    def __init__(self, repo, c):
        self.c = c
        msg = git(repo, 'log', '-1', '--format=%B', c)
        self.subject = msg.split('\n', 1)[0]
        self.subj_words = words(self.subject, True)
        self.log_words = words(changelog(msg), True)
        diff = git(repo, 'show', '--format=', '--no-color', '-U0', c)
        add, rem = [], []
        for ln in diff.split('\n'):
            if ln.startswith('+++') or ln.startswith('---'):
                continue
            if ln.startswith('+'):
                add.append(ln[1:])
            elif ln.startswith('-'):
                rem.append(ln[1:])
        self.add_words = words('\n'.join(add), False)
        self.rem_words = words('\n'.join(rem), False)


def check_word(cm, m):
    where, w = m.group(1), m.group(2)
    parts = w.split()
    in_s = all(p in cm.subj_words for p in parts)
    in_l = all(p in cm.log_words for p in parts)
    if where == 'subject says':
        return in_s
    return in_l


def check_code(cm, m):
    side, w = m.group(1), m.group(2)
    if side == 'adds':
        return w in cm.add_words
    if side == 'removes':
        return w in cm.rem_words
    return w in cm.add_words and w in cm.rem_words


def number_forms(v):
    """The ways a sentence may print v, as numbers."""
    return {float(f % x) for f in ('%g', '%.0f', '%.1f', '%.2f')
            for x in (v, 100 * v)}


def check_numbers(text, value, feature=''):
    """True, False, or None (nothing to check)."""
    if value is None:
        return 'unknown' in text or None
    low = text.lower()
    if feature in YES_NO:
        return (value == 0) == bool(NEGATION.match(low))
    if low.startswith('no '):
        return value == 0
    # numbers inside a quoted name or a path are not claims
    text_q = re.sub(r"'[^']*'|\S*/\S*", ' ', text)
    nums = NUM.findall(text_q)
    if not nums:
        return None
    forms = number_forms(float(value))
    return any(float(n) in forms for n in nums)


def tag_first_containing(repo, c, tags_order):
    out = git(repo, 'tag', '--contains', c).split()
    got = [t for t in tags_order if t in set(out)]
    return got[0] if got else None


RELEASE = re.compile(r'^v\d+\.\d+(\.\d+)?(-rc\d+)?$')


def mainline_tags(repo, cache):
    """[(date, name)] of the release tags on HEAD's first-parent history
    (cycle.c's mainline: no stable-branch tag), oldest first."""
    if 'mainline' not in cache:
        fp = set(git(repo, 'rev-list', '--first-parent', 'HEAD').split())
        out = git(repo, 'for-each-ref', '--format=%(refname:short) '
                  '%(creatordate:unix) %(objectname) %(*objectname)',
                  'refs/tags')
        tags = []
        for ln in out.splitlines():
            f = ln.split()
            name, date, obj = f[0], int(f[1]), f[-1]
            if RELEASE.match(name) and obj in fp:
                tags.append((date, name))
        cache['mainline'] = sorted(tags)
    return cache['mainline']


def mainline_at(repo, c, cache, final=False):
    """The newest mainline tag (final: release) dated before c's author
    date, as the model reads the cycle."""
    when = int(git(repo, 'log', '-1', '--format=%at', c).strip())
    got = [n for d, n in mainline_tags(repo, cache)
           if d < when and (not final or '-rc' not in n)]
    return got[-1] if got else None


def check_tag(repo, c, text, cache):
    """Claims about a tag: 'merged in T' (T is the first release tag
    containing c); 'authored/posted while the mainline was at T' and
    'N days after the mainline's T tag' (T is the newest mainline tag,
    on HEAD's first parents, dated before c's author date); 'N days
    after the mainline's T release' (the newest such final release)."""
    m = TAG.search(text)
    if not m:
        return None
    tag = m.group(0)
    if 'tags' not in cache:
        cache['tags'] = git(repo, 'tag', '--sort=creatordate').split()
    if text.startswith('merged in ') or ' merged in ' in text:
        return tag_first_containing(repo, c, cache['tags']) == tag
    if 'mainline was at' in text or text.endswith(' tag'):
        return mainline_at(repo, c, cache) == tag
    if text.endswith(' release') and "mainline's" in text:
        return mainline_at(repo, c, cache, True) == tag
    return None


def check_reason(repo, cm, r, values, cache):
    text = r['reason']
    for rx, fn in ((WORD, check_word), (CODE, check_code)):
        m = rx.match(text)
        if m:
            return 'text', fn(cm, m)
    m = PREFIX.match(text)
    if m:
        return 'prefix', cm.subject.startswith(m.group(1) + ': ')
    t = check_tag(repo, cm.c, text, cache)
    if t is not None and ' days after ' in text and r['feature'] in values:
        n = check_numbers(text, values[r['feature']], r['feature'])
        return 'tag', t and n is not False
    if t is not None:
        return 'tag', t
    if r['feature'] in values:
        ok = check_numbers(text, values[r['feature']], r['feature'])
        if ok is not None:
            return 'number', ok
    return 'unchecked', None


def duplicates(expl, shown):
    """Sentences stated twice: among explain's rows (every column and
    token) or among the reasons score shows."""
    out = []
    for rows in ([r['reason'] for r in expl.get('features', []) +
                  expl.get('text', [])], [r['reason'] for r in shown]):
        seen = set()
        for t in rows:
            if t in seen:
                out.append(t)
            seen.add(t)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__.split('\n\n')[0], file=sys.stderr)
        return 2
    state, repo = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    commits = git(repo, 'rev-list', '--no-merges', '-n', str(n),
                  'HEAD').split()
    counts, false, unchecked, cache = {}, [], {}, {}
    for c in commits:
        try:
            s = pt(state, 'score', '--json', '--commit', c, '--repo', repo)
            e = pt(state, 'explain', '--json', '--commit', c, '--repo',
                   repo)
        except RuntimeError as err:
            print(f'{c[:12]}: not scored: {err}')
            counts['not scored'] = counts.get('not scored', 0) + 1
            continue
        cm = Commit(repo, c)
        for task in ('fix', 'risk'):
            for d in duplicates(e.get(task, {}), s['reasons'].get(task, [])):
                false.append(f'{c[:12]} {task}: "{d}" stated twice')
            values = {f['feature']: f['value']
                      for f in e.get(task, {}).get('features', [])}
            for r in s['reasons'].get(task, []):
                kind, ok = check_reason(repo, cm, r, values, cache)
                counts[kind] = counts.get(kind, 0) + 1
                if ok is False:
                    false.append(f'{c[:12]} {task}: "{r["reason"]}" '
                                 f'({r["feature"]} = '
                                 f'{values.get(r["feature"])})')
                elif ok is None:
                    unchecked[r['reason']] = unchecked.get(r['reason'],
                                                           0) + 1
    checked = sum(v for k, v in counts.items()
                  if k not in ('unchecked', 'not scored'))
    print(f'commits {len(commits)}, reasons checked {checked}, false '
          f'{len(false)}, unchecked {counts.get("unchecked", 0)}, by '
          f'kind {json.dumps(counts, sort_keys=True)}')
    for f in false:
        print('FALSE ' + f)
    for t, k in sorted(unchecked.items(), key=lambda x: -x[1])[:20]:
        print(f'unchecked ({k}x): {t}')
    return 1 if false else 0


if __name__ == '__main__':
    sys.exit(main())
