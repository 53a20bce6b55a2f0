#!/bin/sh
# mkrepo.sh DIR - the release cycle of test_cycle.c: v1.0 (no rcs); a
# stable branch from it with v1.0.1 and v1.0.0.1 (a fourth component);
# on main, one cycle v1.1-rc1 .. v1.1-rc6 and v1.1 (annotated) with a
# commit first released in each tag (2 in -rc1), then fixes of the -rc1,
# -rc3 and -rc6 commits and of the final's, unreleased.  Each commit adds
# a file of as many lines as its subject says, so a row's lines are
# known; commit n is dated 2020-01-01 + n days.
set -e
cd "$1"
export GIT_CONFIG_NOSYSTEM=1 HOME="$1"
n=0

commit() { # SUBJECT [MESSAGE BODY]
	n=$((n + 1))
	d=$((1577836800 + n * 86400))
	git add -A
	GIT_AUTHOR_NAME=Alice GIT_AUTHOR_EMAIL=alice@example.org \
	GIT_AUTHOR_DATE="@$d +0000" GIT_COMMITTER_NAME=Committer \
	GIT_COMMITTER_EMAIL=committer@example.org \
	GIT_COMMITTER_DATE="@$d +0000" git commit -q -m "$1" ${2:+-m "$2"}
}
lines() { # FILE N: a new file of N lines
	i=0
	while [ $i -lt "$2" ]; do i=$((i + 1)); echo "int v$i = 1;"; done >"$1"
}
fix() { # FILE SUBJECT-OF-THE-BUGGY-COMMIT
	sed -i 's/int v1 = 1;/int v1 = 2;/' "$1"
	commit "fix: $2" "Fixes: $(git log --format=%H --grep="^$2\$") (\"$2\")"
}

git init -q -b main .
lines base.c 10
commit "initial"
git tag v1.0
git checkout -q -b stable-1.0
lines stable.c 3
commit "stable: backport 3"
git tag v1.0.1
git tag v1.0.0.1
git checkout -q main
lines mw1.c 4
commit "mw: one 4"
lines mw2.c 6
commit "mw: two 6"
git tag v1.1-rc1
lines rc2.c 2
commit "rc2: two 2"
git tag v1.1-rc2
lines rc3.c 3
commit "rc3: three 3"
git tag v1.1-rc3
lines rc4.c 4
commit "rc4: four 4"
git tag v1.1-rc4
lines rc5.c 5
commit "rc5: five 5"
git tag v1.1-rc5
lines rc6.c 15
commit "rc6: six 15"
git tag v1.1-rc6
lines final.c 7
commit "final: seven 7"
d=$((1577836800 + (n + 1) * 86400))
GIT_COMMITTER_NAME=Committer GIT_COMMITTER_EMAIL=committer@example.org \
GIT_COMMITTER_DATE="@$d +0000" git tag -a -m v1.1 v1.1
fix mw1.c "mw: one 4"
fix rc3.c "rc3: three 3"
fix rc6.c "rc6: six 15"
fix final.c "final: seven 7"
