# Functions: arguments, return status, locals, recursion, dynamic scope, arrays.
greet() {
  echo "hello $1 ($# args: $*)"
  return $(($# + 40))
}
greet world a b
echo "status $?"
fib() {
  local n=$1
  if ((n < 2)); then echo "$n"; return; fi
  local a b
  a=$(fib $((n - 1)))
  b=$(fib $((n - 2)))
  echo $((a + b))
}
echo "fib 7 = $(fib 7)"
fact() { if (($1 <= 1)); then r=1; else fact $(($1 - 1)); r=$((r * $1)); fi; }
fact 20
echo "20! = $r"
x=global
show() { echo "x is $x in ${FUNCNAME[0]} called from ${FUNCNAME[1]:-main}"; }
scope() { local x=local; show; }
scope
show
arr=(zero one "two three" four)
echo "${#arr[@]} ${arr[2]} ${arr[@]:1:2}"
arr+=(five)
for e in "${arr[@]}"; do echo "[$e]"; done
declare -A map=([k1]=v1 [k2]=v2)
map[k3]=v3
for k in k1 k2 k3; do echo "$k=${map[$k]}"; done
str="Hello, World"
echo "${str^^} ${str,,} ${str/World/There} ${str#*, } ${str%,*} ${#str}"
upper() { local -n ref=$1; ref=${ref^^}; }
v=abc
upper v
echo "$v"
set -- p q r
shift
echo "$@ $#"
rec() { (($1 > 0)) && rec $(($1 - 1)); echo -n "$1 "; }
rec 5
echo
missing_function_here
echo "status $?"
