"""Reading .tmab bundles (tmac._bundle): the tar rules and manifest
validation of Go's bundle.Read, and format-2 entries."""

import copy
import io
import json
import os
import tarfile
import tempfile
import unittest

from tmac import _bundle, _plan
from tmac._errors import BundleError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PTX = (b"//\n.version 8.0\n.target sm_90a\n.address_size 64\n"
       b".visible .entry gemm_pipelined_kernel_0(\n.param .u64 p0\n)\n{ ret; }\n")


def fixture_manifest():
    with open(os.path.join(HERE, "fixtures", "gemm_pipelined.gemm_pipelined.entry.json"),
              encoding="utf-8") as f:
        entry = json.load(f)
    kernels = entry.pop("kernels")
    return {"format": 2, "tmac_version": "test", "source": "gemm_pipelined.tma",
            "target": "sm_90a", "ptx_version": 80, "kernels": kernels, "entries": [entry]}


def make_tar(files, kinds=None):
    """A tar of (name, bytes) pairs; kinds maps a name to a tarfile type."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.type = (kinds or {}).get(name, tarfile.REGTYPE)
            if info.type == tarfile.SYMTYPE:
                info.size = 0
                info.linkname = "/etc/passwd"
                tar.addfile(info)
            else:
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def bundle_bytes(manifest=None, ptx=PTX, extra=(), drop=(), kinds=None):
    m = fixture_manifest() if manifest is None else manifest
    files = [("manifest.json", json.dumps(m).encode()), ("kernels.ptx", ptx),
             ("kernels.ll", b"; llvm\n"), ("module.tma", b"// module\n")]
    files = [f for f in files if f[0] not in drop] + list(extra)
    return make_tar(files, kinds)


class ReadTest(unittest.TestCase):

    def error(self, data):
        with self.assertRaises(BundleError) as cm:
            _bundle.read_bundle(data)
        return str(cm.exception)

    def test_good_bundle(self):
        b = _bundle.read_bundle(bundle_bytes())
        self.assertEqual(b.manifest["format"], 2)
        self.assertEqual(b.ptx, PTX)
        self.assertEqual(b.llvm, b"; llvm\n")
        self.assertEqual(b.module, b"// module\n")
        self.assertEqual([k["name"] for k in b.kernels], ["gemm_pipelined_kernel_0"])
        self.assertEqual([e.name for e in b.entries], ["gemm_pipelined"])
        e = b.entry()
        self.assertIs(b.entry("gemm_pipelined"), e)
        self.assertEqual([a.type for a in e.args], ["memref<4096x4096xf16>"] * 2 + ["memref<4096x4096xf32>"])
        self.assertEqual([a.output for a in e.args], [False, False, True])

    def test_path_and_messages_name_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.tmab")
            with open(path, "wb") as f:
                f.write(bundle_bytes())
            self.assertEqual(_bundle.read_bundle(path).path, path)
            with open(path, "wb") as f:
                f.write(bundle_bytes(drop=("kernels.ll",)))
            with self.assertRaises(BundleError) as cm:
                _bundle.read_bundle(path)
            self.assertEqual(str(cm.exception), "%s: bundle: missing kernels.ll" % path)
            with self.assertRaises(BundleError) as cm:
                _bundle.read_bundle(os.path.join(d, "none.tmab"))
            self.assertIn("none.tmab: cannot read the bundle", str(cm.exception))

    def test_entry_selection(self):
        m = fixture_manifest()
        second = copy.deepcopy(m["entries"][0])
        second["name"] = "other"
        m["entries"].append(second)
        b = _bundle.read_bundle(bundle_bytes(m))
        self.assertEqual(b.entry("other").name, "other")
        with self.assertRaises(BundleError) as cm:
            b.entry()
        self.assertIn("2 entry functions (gemm_pipelined, other); choose one with entry=", str(cm.exception))
        with self.assertRaises(BundleError) as cm:
            b.entry("nope")
        self.assertIn("no entry function 'nope'; the bundle has gemm_pipelined, other", str(cm.exception))
        m["entries"].append(second)
        self.assertIn("entry other is listed twice", self.error(bundle_bytes(m)))

    def test_tar_rules(self):
        self.assertIn("unexpected entry \"notes.txt\"",
                      self.error(bundle_bytes(extra=[("notes.txt", b"x")])))
        self.assertIn("unexpected entry \"../manifest.json\"",
                      self.error(bundle_bytes(extra=[("../manifest.json", b"x")])))
        self.assertIn("module.tma appears more than once",
                      self.error(bundle_bytes(extra=[("module.tma", b"x")])))
        self.assertIn("kernels.ll is not a regular file",
                      self.error(bundle_bytes(kinds={"kernels.ll": tarfile.SYMTYPE})))
        self.assertIn("missing manifest.json, kernels.ptx", self.error(bundle_bytes(drop=("manifest.json", "kernels.ptx"))))
        self.assertIn("not a valid tmac bundle (tar)", self.error(b"this is not a tar file" * 40))
        data = bundle_bytes()
        self.assertIn("bundle:", self.error(data[:700]))

    def test_size_limits(self):
        big = json.dumps(fixture_manifest()).encode() + b" " * (_bundle.MAX_MANIFEST_SIZE)
        data = make_tar([("manifest.json", big), ("kernels.ptx", PTX), ("kernels.ll", b""),
                         ("module.tma", b"")])
        self.assertIn("manifest.json is %d bytes, more than the limit of %d" % (
            len(big), _bundle.MAX_MANIFEST_SIZE), self.error(data))

    def test_format(self):
        m = fixture_manifest()
        m["format"] = 1
        self.assertEqual(self.error(bundle_bytes(m)),
                         "<bytes>: bundle format 1 has no host plan; rebuild it with tmac compile --emit=bundle")
        m["format"] = 3
        self.assertIn("manifest format 3 is not supported", self.error(bundle_bytes(m)))
        m["format"] = "2"
        self.assertIn("manifest format \"2\" is not supported", self.error(bundle_bytes(m)))

    def test_real_format_1_bundle_is_refused(self):
        path = os.path.join(ROOT, "bundle", "testdata", "saxpy.tmab")
        if not os.path.exists(path):
            self.skipTest("no bundle/testdata/saxpy.tmab")
        with self.assertRaises(BundleError) as cm:
            _bundle.read_bundle(path)
        self.assertIn("bundle format 1 has no host plan", str(cm.exception))

    def test_manifest_validation(self):
        def err(change=None, ptx=PTX):
            m = fixture_manifest()
            if change:
                change(m)
            return self.error(bundle_bytes(m, ptx=ptx))
        self.assertIn("does not parse", self.error(make_tar([
            ("manifest.json", b"{"), ("kernels.ptx", PTX), ("kernels.ll", b""), ("module.tma", b"")])))
        self.assertIn("the manifest names no target", err(lambda m: m.pop("target")))
        self.assertIn("the manifest says target sm_80 but kernels.ptx is for sm_90a",
                      err(lambda m: m.update(target="sm_80")))
        self.assertIn("kernels.ptx has no .target directive", err(ptx=b".version 8.0\n"))
        self.assertIn("the manifest has no ptx_version", err(lambda m: m.pop("ptx_version")))
        self.assertIn("the manifest says PTX 8.3 but kernels.ptx is PTX 8.0",
                      err(lambda m: m.update(ptx_version=83)))
        self.assertIn("kernels.ptx has no .version directive", err(ptx=b".target sm_90a\n"))
        self.assertIn("the manifest lists no kernels", err(lambda m: m.update(kernels=[])))
        self.assertIn("kernel gemm_pipelined_kernel_0 is not defined in kernels.ptx",
                      err(ptx=PTX.replace(b".entry", b".func")))
        self.assertIn("kernel gemm_pipelined_kernel_0 is listed twice",
                      err(lambda m: m["kernels"].append(m["kernels"][0])))
        self.assertIn("parameter 0: unknown role \"ptr\"",
                      err(lambda m: m["kernels"][0]["params"][0].update(role="ptr")))
        self.assertIn("parameter 0: argument index 5 is out of order or range",
                      err(lambda m: m["kernels"][0]["params"][0].update(arg=5)))
        self.assertIn("parameter 2: bad dimension 1 for role base",
                      err(lambda m: m["kernels"][0]["params"][2].update(dim=1)))
        self.assertIn("parameter 2: no LLVM type", err(lambda m: m["kernels"][0]["params"][2].pop("type")))
        self.assertIn("has no entries", err(lambda m: m.update(entries=[])))

    def test_bundle_written_by_go(self):
        # fixtures/saxpy.tmab: tmac compile --emit=bundle examples/saxpy.tma
        b = _bundle.read_bundle(os.path.join(HERE, "fixtures", "saxpy.tmab"))
        e = b.entry()
        self.assertEqual(e.name, "saxpy")
        self.assertEqual([(a.name, a.type, a.kind) for a in e.args],
                         [("arg0", "f32", "scalar"), ("arg1", "memref<1024x1024xf32>", "memref"),
                          ("arg2", "memref<1024x1024xf32>", "memref")])
        self.assertEqual([a.output for a in e.args], [False, False, False])  # no {tmac.output}
        x = _plan.MemrefBinding(0x7F0100000000, [1024, 1024], [1024, 1], (2, 32), (2, 0))
        y = _plan.MemrefBinding(0x7F0200000000, [1024, 1024], [1024, 1], (2, 32), (2, 0))
        trace = _plan.evaluate(e, [2.0, x, y])
        launches = [s for s in trace.steps if s["op"] == "launch"]
        self.assertTrue(launches)
        self.assertEqual({s["kernel"] for s in launches}, {k["name"] for k in b.kernels})

    def test_entry_errors_are_bundle_errors(self):
        m = fixture_manifest()
        m["entries"][0]["steps"][2]["grid"][0] = "32 +"
        self.assertIn("bundle: entry gemm_pipelined: step 2 (launch at gemm_pipelined.tma:33:3): "
                      "grid: expression \"32 +\": unexpected end", self.error(bundle_bytes(m)))


if __name__ == "__main__":
    unittest.main()
