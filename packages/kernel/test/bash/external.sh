# External commands: PATH search, arguments, environment, exit statuses, redirections, exec.
hello
echo "hello status $?"
args "" "two words" 'single $quoted' "caf\u00e9"
echo "args status $?"
PROBEKIT_X=1 PROBEKIT_Y="a b" args | { while read -r l; do case $l in PROBEKIT*|argc*) echo "$l" ;; esac; done; }
export PROBEKIT_EXPORTED=yes
args one >"$WORK/external-out" 2>&1
echo "redirected status $?"
while IFS= read -r l; do case $l in argv\[1\]*|PROBEKIT_EXPORTED*) echo "file: $l" ;; esac; done <"$WORK/external-out"
type hello | { read -r l; echo "${l%% is *} is found"; }
command -v args >/dev/null && echo "command -v finds args"
hash -r
no-such-command-xyz arg
echo "not found status $?"
/bin/bash-static -c 'echo "child pid differs: $(( $$ != PPID ))"; exit 42'
echo "child status $?"
/bin/bash-static -c 'kill -TERM $$; echo unreachable'
echo "killed status $?"
(exit 17)
echo "subshell status $?"
/bin/bash-static -c 'echo "on stderr" >&2; echo "on stdout"'
# Read all of it: a reader that left early would make args' fate (SIGPIPE or not) a race.
x=$(/bin/bash-static -c 'exec args exec-ed' | { read -r l; while read -r _; do :; done; echo "$l"; })
echo "exec: $x"
/bin/bash-static -c 'cd /dev && pwd && cd .. && pwd'
bg() { /bin/bash-static -c 'echo background job; exit 6' & wait $!; echo "waited: $?"; }
bg
echo "last" >&2
exec args final "exec replaces the shell"
echo "not reached"
