#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# tests/unit/cli/test_completion.sh BFBPF: the bash completion that `BFBPF completion bash`
# prints, sourced in this shell and asked as bash would ask it (COMP_WORDS, COMP_CWORD), must
# offer exactly the commands of `BFBPF --help` and, for each command, exactly the options of
# `BFBPF COMMAND --help`: both come from the CLI's table, the completion through its own
# generator. Any user, no root; run by `make check`.
set -u

BFBPF=${1:?usage: $0 BFBPF}
failures=0
checks=0

comp_fail() {
	echo "test_completion: FAIL: $*"
	failures=$((failures + 1))
}

# comp_ask WORD...: COMPREPLY for the last word, sorted and unique, one line.
comp_ask() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_bfbpf
	printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' '
}

# comp_expect WANT WORD...: the completion of WORD... is the set WANT (words, any order).
comp_expect() {
	local want got
	# shellcheck disable=SC2086 # WANT is a list of words
	want=$(printf '%s\n' $1 | sort -u | tr '\n' ' ')
	shift
	got=$(comp_ask "$@")
	checks=$((checks + 1))
	[ "$got" = "$want" ] || comp_fail "'$*<TAB>': got [$got], want [$want]"
}

# comp_includes WORD WORDS...: the completion of WORDS... offers WORD.
comp_includes() {
	local word=$1 got
	shift
	got=" $(comp_ask "$@")"
	checks=$((checks + 1))
	case $got in *" $word "*) ;; *) comp_fail "'$*<TAB>': [$got] lacks $word" ;; esac
}

script=$(mktemp)
trap 'rm -f "$script"' EXIT
"$BFBPF" completion bash >"$script" || {
	echo "test_completion: FAIL: $BFBPF completion bash exited $?"
	exit 1
}
bash -n "$script" || comp_fail "the script does not parse"
# shellcheck disable=SC1090
. "$script"
complete -p bfbpf >/dev/null || comp_fail "no 'complete' for bfbpf"

# The table as the help prints it: the lines under "Commands:", the "--name" under "Options:".
commands=$("$BFBPF" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$commands" ] || comp_fail "no commands in '$BFBPF --help'"
comp_expect "$commands help --help --version" bfbpf ''
comp_expect "attach" bfbpf att
for command in $commands; do
	options=$("$BFBPF" "$command" --help | sed -n '/^Options:/,/^$/s/^  \(--[a-z][a-z-]*\).*/\1/p')
	[ -n "$options" ] || comp_fail "no options in '$BFBPF $command --help'"
	comp_expect "$options" bfbpf "$command" --
	# A word after the command: its options, but for those that take an operand.
	case $command in run | docker-runtime | completion) ;; *) comp_expect "$options" bfbpf "$command" '' ;; esac
done
# Values, operands, and the command that run confines.
comp_expect "public no-network allowlist" bfbpf attach --mode ''
comp_expect "allowlist" bfbpf run --cgroup-parent /x --mode al
comp_expect "docker podman" bfbpf detach --runtime ''
comp_expect "error warn info debug" bfbpf daemon --log-level ''
comp_expect "bash" bfbpf completion ''
comp_expect "attach" bfbpf help att
comp_includes bash bfbpf run --mode no-network -- bas
comp_includes bash bfbpf run --mode no-network bas
comp_includes --allow bfbpf run --mode allowlist --al
comp_includes "$script" bfbpf attach --policy "$script"
comp_expect "" bfbpf attach --allow ''
comp_expect "" bfbpf no-such-command ''

echo "test_completion: $checks checks, $failures failed"
[ "$failures" = 0 ]
