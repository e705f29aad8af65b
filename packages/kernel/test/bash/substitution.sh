# Command substitution: $( ), backquotes, nesting, trailing newlines, status, from external programs.
a=$(echo inner)
b=`echo backquoted`
echo "$a $b"
nested=$(echo "outer $(echo "middle $(echo core)")")
echo "$nested"
lines=$(printf 'one\ntwo\n\n\n')
echo "[$lines]"
count=$(for i in 1 2 3 4; do echo "$i"; done | { n=0; while read -r l; do n=$((n + l)); done; echo $n; })
echo "count $count"
out=$(/bin/bash-static -c 'echo from child; exit 9')
echo "out=$out status=$?"
fix=$(hello)
echo "fixture said: $fix"
argc=$(args x y z | { read -r l; echo "${l#argc: }"; })
echo "args saw $argc"
words=($(echo "a b   c"))
echo "${#words[@]} words"
echo "len $(echo -n "$(echo abcdef)" | { read -r l; echo ${#l}; })"
big=$(for ((i = 0; i < 200; i++)); do echo "row $i"; done)
echo "big: ${#big} chars"
err=$( { echo to-stderr >&2; echo to-stdout; } 2>&1 )
echo "captured: $(echo $err)"
echo "$(exit 3)status $?"
printf -v padded '%08.3f' 3.5
echo "$padded"
x=$(echo no newline; printf 'tail')
echo "$x"
