# Here-documents and here-strings: expanded, quoted, tab-stripped, large, fed to other processes.
name=World
while IFS= read -r l; do echo "read: $l"; done <<EOF2
Hello, $name!
  sum $((2 + 3)) and $(echo subst)
\$name stays literal
EOF2
while IFS= read -r l; do echo "quoted: $l"; done <<'EOF2'
$name $((1+1)) `echo no`
EOF2
	while IFS= read -r l; do echo "stripped: $l"; done <<-EOF2
	tab-indented $name
		two tabs
	EOF2
/bin/bash-static <<EOF2
echo "a script on stdin, \$((6 * 7)) = $((6 * 7))"
for i in 1 2; do echo "child loop \$i"; done
exit 2
EOF2
echo "child status $?"
read -r first rest <<< "here string words"
echo "$first | $rest"
/bin/bash-static -c 'read -r l; echo "child got: $l"' <<< "to a child"
# Larger than a pipe holds (F_GETPIPE_SZ): bash writes it to a temporary file instead.
big=$(printf '%070000d' 7)
n=0
while IFS= read -r l; do n=$((n + ${#l})); done <<EOF2
$big
and a second line
EOF2
echo "big heredoc: $n chars"
args <<EOF2 | { n=0; while read -r l; do n=$((n + 1)); done; echo "fixture printed $n lines"; }
ignored
EOF2
cat_() { while IFS= read -r l; do echo "$l"; done; }
cat_ <<EOF2 >"$WORK/heredoc-out"
written to a file
and read back
EOF2
cat_ <"$WORK/heredoc-out"
