# Loops: for over words and ranges, C-style for, while, until, break and continue, nesting.
for w in alpha beta "gamma delta"; do
  echo "word: $w"
done
for i in {1..5}; do printf '%d ' "$i"; done
echo
for ((i = 0; i < 20; i += 3)); do
  ((i == 9)) && continue
  ((i > 15)) && break
  echo "c-style $i"
done
n=0
while [ "$n" -lt 4 ]; do
  n=$((n + 1))
  echo "while $n"
done
until ((n == 0)); do
  ((n--))
  echo -n "$n"
done
echo
for i in 1 2 3; do
  for j in a b c; do
    [[ $j == b ]] && continue 2
    echo "$i$j"
  done
done
s=
for ((i = 0; i < 300; i++)); do s+=$((i % 10)); done
echo "${#s} ${s:0:12} ${s: -5}"
i=0
while read -r line; do
  i=$((i + 1))
  echo "line $i: <$line>"
done <<< $'one\ntwo two\n three'
case "x$n" in
  x0) echo "case zero" ;;
  *) echo "case other" ;;
esac
