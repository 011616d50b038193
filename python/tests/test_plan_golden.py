"""The Go/Python plan agreement test (design 2.9, 2.10): for every
golden triple <stem>.<entry>.{entry,bindings,trace}.json, Python's
evaluator must produce trace.json exactly (parsed JSON equality, so the
packed parameter bytes agree byte for byte).

python/tests/golden is written by Go's TestPlanGolden; the hand-written
triples in python/tests/fixtures follow the same contract and run
always.
"""

import glob
import json
import os
import unittest

from tmac import _dtypes, _plan

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
FIXTURES = os.path.join(HERE, "fixtures")


def triples(directory):
    """The (name, entry, bindings, trace) paths of every triple in
    directory, sorted by name."""
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.entry.json"))):
        stem = path[:-len(".entry.json")]
        out.append((os.path.basename(stem), path, stem + ".bindings.json", stem + ".trace.json"))
    return out


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def bindings_for(entry, doc):
    """Python bindings from a bindings.json: memrefs as CUDA arrays on
    device 0, scalars as Python numbers of the argument's kind (Go writes
    the float 2.0 as 2)."""
    if doc["entry"] != entry.name:
        raise AssertionError("bindings for %s, entry %s" % (doc["entry"], entry.name))
    out = []
    for a, b in zip(entry.args, doc["args"]):
        if a.kind == "memref":
            dtype = _dtypes.accepted(b.get("elem", a.elem))[0]
            out.append(_plan.MemrefBinding(b["ptr"], b["shape"], b["strides"], dtype, (2, 0)))
        elif a.is_float:
            out.append(float(b["value"]))
        else:
            out.append(int(b["value"]))
    return out


def check_triple(test, name, entry_path, bindings_path, trace_path):
    entry = _plan.Entry.from_json(load_json(entry_path))
    args = bindings_for(entry, load_json(bindings_path))
    got = json.loads(_plan.evaluate(entry, args).to_json())
    want = load_json(trace_path)
    test.assertEqual(got["entry"], want["entry"], name)
    test.assertEqual(len(got["steps"]), len(want["steps"]), "%s: number of steps" % name)
    for i, (g, w) in enumerate(zip(got["steps"], want["steps"])):
        test.assertEqual(g, w, "%s: step %d" % (name, i))
    test.assertEqual(got, want, name)


class GoldenTest(unittest.TestCase):

    def test_go_goldens(self):
        found = triples(GOLDEN)
        # Fails rather than passing vacuously when the goldens are gone.
        self.assertGreaterEqual(len(found), 20, "golden triples missing from %s (Go's "
                                "TestPlanGolden -update writes them)" % GOLDEN)
        for name, e, b, t in found:
            with self.subTest(name=name):
                check_triple(self, name, e, b, t)

    def test_bad_bindings_of_every_golden_are_refused(self):
        # For every golden entry, a misaligned pointer, a wrong dtype and a
        # wrong rank of each memref argument are ArgumentErrors naming it.
        from tmac._errors import ArgumentError
        for name, e, b, _ in triples(GOLDEN):
            entry = _plan.Entry.from_json(load_json(e))
            good = bindings_for(entry, load_json(b))
            for i, a in enumerate(entry.args):
                if a.kind != "memref":
                    continue
                m = good[i]
                wrong_dtype = (0, 16) if m.dtype != (0, 16) else (2, 32)
                for bad in (_plan.MemrefBinding(m.ptr + 8, m.shape, m.strides, m.dtype, m.device),
                            _plan.MemrefBinding(m.ptr, m.shape, m.strides, wrong_dtype, m.device),
                            _plan.MemrefBinding(m.ptr, m.shape + (1,), m.strides + (1,), m.dtype, m.device)):
                    args = list(good)
                    args[i] = bad
                    with self.subTest(name=name, arg=i), self.assertRaises(ArgumentError) as cm:
                        _plan.evaluate(entry, args)
                    self.assertTrue(str(cm.exception).startswith("argument %d (arg%d): expected " % (i, i)),
                                    str(cm.exception))

    def test_fixtures(self):
        found = triples(FIXTURES)
        self.assertGreaterEqual(len(found), 3, "hand-written triples missing from %s" % FIXTURES)
        for name, e, b, t in found:
            with self.subTest(name=name):
                check_triple(self, name, e, b, t)


if __name__ == "__main__":
    unittest.main()
