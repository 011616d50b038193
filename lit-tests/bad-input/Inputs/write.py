#!/usr/bin/env python3
"""write.py OUT TEXT: write TEXT to OUT as bytes, decoding Python bytes
escapes (\\n \\r \\t \\xNN \\\\), so that a RUN line can spell out an input
with NULs, byte order marks, CRLF line ends or bytes that are not UTF-8."""
import codecs
import sys

data, _ = codecs.escape_decode(sys.argv[2].encode("utf-8"))
with open(sys.argv[1], "wb") as f:
    f.write(data)
