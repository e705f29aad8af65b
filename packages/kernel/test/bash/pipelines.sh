# Pipelines: builtins, subshells and separate bash processes joined by pipes; PIPESTATUS and pipefail.
echo "one two three" | { read -r a b c; echo "$c $b $a"; }
for i in 3 1 2; do echo "$i"; done | while read -r n; do echo "got $n"; done
printf 'x\ny\nz\n' | /bin/bash-static -c 'while read -r l; do echo "child read $l"; done'
/bin/bash-static -c 'for i in 1 2 3; do echo $i; done' | /bin/bash-static -c 'while read -r l; do s=$((s + l)); done; echo "sum $s"'
echo start | /bin/bash-static -c 'read l; echo "$l-a"' | /bin/bash-static -c 'read l; echo "$l-b"' | { read -r l; echo "$l-c"; }
true | false | true
echo "PIPESTATUS ${PIPESTATUS[*]}"
/bin/bash-static -c 'exit 3' | /bin/bash-static -c 'exit 5'
echo "PIPESTATUS ${PIPESTATUS[*]}"
set -o pipefail
/bin/bash-static -c 'exit 7' | true
echo "pipefail status $?"
set +o pipefail
hello | { read -r l; echo "from fixture: $l"; }
args 1 "2 3" | while read -r l; do case $l in argv*) echo "$l" ;; esac; done
big() { for ((i = 0; i < 150; i++)); do echo "line $i of a long pipe"; done; }
big | /bin/bash-static -c 'n=0; while read -r l; do n=$((n + 1)); last=$l; done; echo "$n lines, last: $last"'
! false
echo "negated: $?"
( echo "subshell out"; echo "subshell err" >&2; exit 4 ) 2>&1 | { while read -r l; do echo "merged: $l"; done; }
echo "status ${PIPESTATUS[0]} ${PIPESTATUS[1]}"
