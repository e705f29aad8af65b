# Arithmetic: $(( )), (( )), let, bases, bit operations, 64-bit wraparound, errors.
echo $((1 + 2 * 3)) $(((1 + 2) * 3)) $((17 / 5)) $((17 % 5)) $((-17 / 5)) $((-17 % 5))
echo $((2 ** 10)) $((2 ** 62)) $((2 ** 63)) $((2 ** 64))
echo $((9223372036854775807 + 1)) $((-9223372036854775807 - 1))
echo $((0x1f)) $((010)) $((2#101101)) $((36#zz)) $((64#@_))
echo $((5 & 3)) $((5 | 3)) $((5 ^ 3)) $((~5)) $((1 << 40)) $((-256 >> 4))
echo $((3 > 2)) $((3 < 2)) $((3 == 3)) $((3 != 3)) $((!0)) $((2 && 0)) $((2 || 0))
echo $((7 > 3 ? 10 : 20)) $((x = 5, x * x))
a=10
((a += 5, a *= 2))
let 'b = a / 3' 'c = a % 7'
echo "a=$a b=$b c=$c"
((a++)); ((++a)); ((a--))
echo "a=$a"
if ((a > 30)); then echo "a is big"; fi
((0)); echo "status of ((0)): $?"
let 'z = 0'; echo "status of let z=0: $?"
declare -i k=3
k+=4*2
echo "k=$k"
h=0
for ((i = 1; i <= 200; i++)); do ((h = (h * 31 + i) % 1000000007)); done
echo "hash $h"
printf '%x %o %05d %-4s| %e %.3f\n' 255 8 42 ab 12345.678 3.14159
echo $((1 / 0))
echo "the script goes on after the error"
exit 3
