#!/usr/bin/env bash
# The bash completion offers profctl's verbs, sub-verbs, formats and options.
set -u
completion=$1
source /usr/share/bash-completion/bash_completion || { echo "bash-completion is not installed"; exit 1; }
source "$completion"

failed=0
expect() { # description, expected word, command line words...
	local what=$1 want=$2
	shift 2
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_profctl profctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	if [[ " ${COMPREPLY[*]} " != *" $want "* ]]; then
		echo "FAIL: $what: '$want' not offered for '${COMP_LINE}' (got: ${COMPREPLY[*]})"
		failed=1
	fi
}

expect "verbs" record profctl ""
expect "verb prefix" sessions profctl se
expect "global options" --address= profctl --add
expect "run sub-verbs" render profctl run ""
expect "export formats" pprof profctl export x -f ""
expect "record options" --backend profctl record --b
expect "backends" perf-dwarf profctl record --backend ""
expect "render options" --json profctl run render --j
exit $failed
