"""Lists the examples (examples/*.tma, examples/variants/*.tma) that no
lit test under lit-tests/emu runs, and fails if there are any: issue 8
asks for every example under the emulator in make test."""
import pathlib
import sys

emu = pathlib.Path(sys.argv[1])
root = emu.parent.parent
tests = "".join(p.read_text() for p in emu.glob("*.tma"))
missing = [str(p.relative_to(root)) for d in ("examples", "examples/variants")
           for p in sorted((root / d).glob("*.tma"))
           if str(p.relative_to(root)) not in tests]
for m in missing:
    print(f"not run under the emulator: {m}")
sys.exit(1 if missing else 0)
