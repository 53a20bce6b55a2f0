#!/bin/sh
# mkrepo.sh DIR [more] - the synthetic history of test_history.c: a v1.0
# release without rcs, v1.1-rc1..rc6 and v1.1 (annotated, two days after
# its last commit), Fixes: by full, abbreviated, ambiguous and wrong ids,
# a revert, trivial fixes (comment only, spelling, theoretical race), a
# .mailmap and a MAINTAINERS file.  Commit n is dated 2020-01-01 + n days.
# With "more", add one commit to an existing DIR (the incremental run).
set -e
cd "$1"
export GIT_CONFIG_NOSYSTEM=1 HOME="$1"
n_file=.git/pt-n

commit() { # name email; message on stdin
	n=$(($(cat $n_file) + 1))
	echo $n > $n_file
	d=$((1577836800 + n * 86400))
	git add -A
	GIT_AUTHOR_NAME="$1" GIT_AUTHOR_EMAIL="$2" \
	GIT_AUTHOR_DATE="@$d +0000" GIT_COMMITTER_NAME=Committer \
	GIT_COMMITTER_EMAIL=committer@example.org \
	GIT_COMMITTER_DATE="@$d +0000" git commit -q -F -
}
id() { git rev-parse "$1"; }
short() { git rev-parse --short=12 "$1"; }
alice() { commit Alice alice@example.org; }
bob() { commit Bob bob@example.org; }
carol() { commit Carol carol@example.org; }

if [ "$2" = more ]; then
	echo 'int b9;' >> src/b.c
	bob <<M
b: one more
M
	exit 0
fi

git init -q -b main .
git config core.abbrev 12
echo 0 > $n_file
mkdir -p src lib
for i in 1 2 3 4 5 6 7 8 9 10; do echo "int a$i;"; done > src/a.c
echo 'Helo world' > README
cat > .mailmap <<M
Alice <alice@example.org> <alice@old.example>
Carol <carol@example.org> <carol@old.example>
M
cat > MAINTAINERS <<M
List of maintainers
	M: Not a maintainer <nobody@example.org>

SRC
M:	Dave <dave@example.org>
F:	src/

LIB
R:	Carol <carol@example.org>
F:	lib
X:	lib/private/
M
commit Alice alice@old.example <<M
initial
M
git tag v1.0
sed -i 's/int a5;/int a5 = 5;\nint a11;\nint a12;/' src/a.c
bob <<M
a: add feature
M
for i in 1 2 3 4 5; do echo "int x$i;"; done > lib/x.c
alice <<M
x: add helper
M
git tag v1.1-rc1
sed -i 's/int x2;/int x2 = 2;/' lib/x.c
bob <<M
x: tweak

Tweak it.

Reviewed-by: Carol <carol@old.example>
Signed-off-by: Bob <bob@example.org>
M
git tag v1.1-rc2
for i in 1 2 3 4; do echo "int b$i;"; done > src/b.c
carol <<M
b: add b
M
sed -i 's/int a5 = 5;/int a5 = 6;/' src/a.c
alice <<M
a: fix feature

Fix it.

Fixes: $(id v1.1-rc1~1) ("a: add feature")
Reviewed-by: Dave <dave@example.org>
Reviewed-by: Carol <carol@example.org>
Signed-off-by: Alice <alice@example.org>
M
git tag v1.1-rc3
sed -i 's/int x4;/int x4 = 4;/' lib/x.c
bob <<M
x: fix helper

Fixes: $(short v1.1-rc1) ("x: add helper")
Cc: stable@vger.kernel.org
Signed-off-by: Bob <bob@example.org>
M
git tag v1.1-rc4
# blobs until two objects share a 4-digit prefix: an ambiguous id
i=0
amb=
while [ -z "$amb" ]; do
	for j in 1 2 3 4 5 6 7 8 9 10; do
		i=$((i + 1))
		echo "filler $i" | git hash-object -w --stdin > /dev/null
	done
	amb=$(git cat-file --batch-all-objects --batch-check='%(objectname)' |
	      cut -c1-4 | sort | uniq -d | head -1)
done
echo "$amb" > .git/pt-ambiguous
sed -i 's/int x2 = 2;/int x2 = 22;/' lib/x.c
alice <<M
x: fix tweak

Fixes: $amb ("x: tweak")
M
sed -i 's/int b1;/int b1 = 1;/' src/b.c
alice <<M
b: fix b

Fixes: deadbeefdead ("b: add b")
M
git tag v1.1-rc5
sed -i 's|int a1;|int a1;\n/* the feature */|' src/a.c
bob <<M
a: fix comment

Fixes: $(short v1.1-rc1~1) ("a: add feature")
M
sed -i 's/Helo/Hello/' README
bob <<M
README: fix spelling

Fixes: $(id v1.0) ("initial")
M
sed -i 's/int x5;/int x5 = 5;/' lib/x.c
carol <<M
x: avoid a race

There is a theoretical race between open and close.

Fixes: $(short v1.1-rc2) ("x: tweak")
M
sed -i 's/int b2;/int b2 = 2;/' src/b.c
sed -i 's/int x3;/int x3 = 3;/' lib/x.c
carol <<M
b: rework

Fixes: 0123456789ab ("no such commit")
M
git tag v1.1-rc6
printf 'int a13;\nint a14;\n' >> src/a.c
commit Dave dave@example.org <<M
a: add more

Reviewed-by: Carol <carol@example.org>
M
d=$((1577836800 + 16 * 86400))
GIT_COMMITTER_NAME=Committer GIT_COMMITTER_EMAIL=committer@example.org \
GIT_COMMITTER_DATE="@$d +0000" git tag -a -m 'v1.1' v1.1
more=$(id HEAD)
sed -i '/int a13;/d; /int a14;/d' src/a.c
alice <<M
Revert "a: add more"

This reverts commit $more.
M
sed -i 's/int b3;/int b3 = 3;/' src/b.c
bob <<M
b: stable thing

Cc: stable@dpdk.org
Signed-off-by: Bob <bob@example.org>
M
