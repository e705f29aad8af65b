# Shell state the kernel keeps: umask, resource limits, file tests, traps and signals, job control (set -m).
umask 027
umask
umask -S
ulimit -S -n 100
echo "soft nofile $(ulimit -S -n)"
ulimit -S -s 4096
echo "soft stack $(ulimit -S -s)"
[ -x "$(command -v hello)" ] && echo "hello is executable"
[ -w /dev/null ] && echo "/dev/null is writable"
[ -d /dev ] && [ ! -f /dev ] && echo "/dev is a directory"
[ -e /no/such/file ] || echo "no such file"
[ -p /dev/stdin ] && echo "stdin is a pipe" || echo "stdin is not a pipe"
# /dev/stdin is fd 0 (the harness's own stdout and stderr are sockets natively, so only stdin is looked at).
echo | { [ -p /dev/stdin ] && echo "a pipeline's stdin is a pipe"; }
echo "through /dev/stdin" | { read -r l </dev/stdin; echo "read $l"; }
: >"$WORK/plain"
[ -s "$WORK/plain" ] || echo "an empty file"
echo data >"$WORK/plain"
[ -s "$WORK/plain" ] && [ -r "$WORK/plain" ] && echo "a non-empty readable file"
trap 'echo "trapped USR1"' USR1
kill -USR1 $$
trap 'echo "trapped TERM in the child"; exit 9' TERM
/bin/bash-static -c 'trap "echo child got TERM; exit 12" TERM; kill -TERM $$; echo not here'
echo "child status $?"
trap - TERM
kill -0 $$ && echo "kill -0 on itself works"
set -m
/bin/bash-static -c 'exit 4'
echo "job-control status $?"
/bin/bash-static -c 'echo "in a background job"; exit 5' &
wait $!
echo "background status $?"
set +m
( trap 'echo "subshell EXIT trap"' EXIT; echo "in subshell" )
trap 'echo "EXIT trap, status $?"' EXIT
false
