#!/bin/sh
# interrupt.sh LOG CMD...: runs CMD, sends it SIGTERM once LOG is written
# (by Inputs/llc-sleep.sh: llc is running), then prints CMD's exit status
# and whether the directory named in LOG still exists.
log=$1; shift
"$@" &
pid=$!
i=0
while [ ! -s "$log" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
kill -TERM $pid
wait $pid
echo "exit $?"
d=$(cat "$log")
if [ -e "$d" ]; then echo "left $d"; else echo "temporary directory removed"; fi
