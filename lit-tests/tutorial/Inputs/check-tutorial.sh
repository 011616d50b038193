#!/usr/bin/env bash
# Runs the README's 5-minute tutorial as written (lit-tests/tutorial/tutorial.tma):
#   check-tutorial.sh README OUTDIR
# from the repository root. It takes the commands between the
# tutorial:begin and tutorial:end markers, runs each one but `make ...`
# (lit runs after `make build`; rebuilding build/tmac under the other lit
# tests would race them) and writes a transcript ("$ command", its output,
# "exit N") to OUTDIR/transcript. Then it checks the README's quotes
# against reality: every line of the section's plain ``` blocks (outputs)
# must appear in the transcript, and every line of its ```mlir blocks in
# examples/tutorial/copy.tma (timings "in 0.05 s" are compared as "in N s").
set -u
readme=$1
out=$2
mkdir -p "$out"
section=$(awk '/^## 5-minute tutorial/{f=1} f&&/^## /&&!/^## 5-minute tutorial/{f=0} f' "$readme")
if [ -z "$section" ]; then
	echo "check-tutorial: no '## 5-minute tutorial' section in $readme" >&2
	exit 1
fi
awk '/<!-- tutorial:begin/{f=1;next} /<!-- tutorial:end/{f=0} f&&!/^```/' <<<"$section" >"$out/commands"
: >"$out/transcript"
while IFS= read -r cmd; do
	[ -z "$cmd" ] && continue
	case $cmd in make\ *) echo "(skipped: $cmd)" >>"$out/transcript"; continue ;; esac
	echo "\$ $cmd" >>"$out/transcript"
	bash -c "$cmd" >>"$out/transcript" 2>&1
	echo "exit $?" >>"$out/transcript"
done <"$out/commands"
norm() { sed -E 's/in [0-9]+(\.[0-9]+)? s$/in N s/'; }
# blocks LANG: the lines of the section's code blocks whose fence is ```LANG.
blocks() { awk -v lang="$1" '/^```/{if(inb){inb=0}else{inb=1;want=($0=="```" lang)};next} inb&&want' <<<"$section"; }
blocks "" | norm >"$out/quoted-output"
blocks mlir >"$out/quoted-source"
norm <"$out/transcript" >"$out/transcript.norm"
status=0
while IFS= read -r line; do
	[ -z "$line" ] && continue
	if ! grep -qxF -- "$line" "$out/transcript.norm"; then
		echo "check-tutorial: the README quotes an output line the commands do not print: $line" >&2
		status=1
	fi
done <"$out/quoted-output"
while IFS= read -r line; do
	[ -z "$line" ] && continue
	if ! grep -qxF -- "$line" examples/tutorial/copy.tma; then
		echo "check-tutorial: the README quotes a line examples/tutorial/copy.tma does not have: $line" >&2
		status=1
	fi
done <"$out/quoted-source"
cat "$out/transcript"
exit $status
