#!/usr/bin/env python3
"""limits.py SECONDS MEGABYTES COMMAND...: run COMMAND (its stderr and
stdout pass through), then print "within limits" when it finished within
SECONDS of wall time and its peak resident memory stayed under MEGABYTES,
else what it took. Exits with COMMAND's status (killed: 124)."""
import resource
import subprocess
import sys
import time

secs, mb, cmd = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
start = time.monotonic()
try:
    rc = subprocess.run(cmd, timeout=secs).returncode
except subprocess.TimeoutExpired:
    print("TIMEOUT after %.0f s" % secs)
    sys.exit(124)
took = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
sys.stdout.flush()
if took <= secs and peak <= mb:
    print("within limits")
else:
    print("OVER LIMITS: %.1f s, %.0f MB" % (took, peak))
sys.exit(rc)
