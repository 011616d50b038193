"""Reading .tmab bundles: a tar of exactly manifest.json, kernels.ptx,
kernels.ll and module.tma, validated as Go's bundle.Read does
(bundle/bundle.go), plus the host plans of manifest format 2.

Nothing is extracted to disk: members are read into memory, regular
files only, each within its size limit.
"""

import io
import json
import os
import re
import tarfile

from ._errors import BundleError
from ._plan import MAX_ENTRIES, Entry

MANIFEST_FILE = "manifest.json"
PTX_FILE = "kernels.ptx"
LLVM_FILE = "kernels.ll"
MODULE_FILE = "module.tma"
FILES = (MANIFEST_FILE, PTX_FILE, LLVM_FILE, MODULE_FILE)

# Go's bundle package: FormatVersion and the limits Read enforces.
FORMAT_VERSION = 2
MAX_MANIFEST_SIZE = 1 << 20
MAX_FILE_SIZE = 64 << 20
MAX_KERNELS = 4096
MAX_PARAMS = 4096
# The largest tar the limits allow: the four files, their headers and
# padding, the end-of-archive blocks (generously).
MAX_BUNDLE_SIZE = 3 * MAX_FILE_SIZE + MAX_MANIFEST_SIZE + (1 << 20)

ROLES = ("scalar", "base", "offset", "size", "stride", "tensormap")

_VERSION_RE = re.compile(rb"^\s*\.version\s+(\d+)\.(\d+)\s*$", re.M)
_TARGET_RE = re.compile(rb"^\s*\.target\s+([A-Za-z0-9_]+)", re.M)
_ENTRY_RE = re.compile(rb"\.entry\s+([A-Za-z_$%][A-Za-z0-9_$]*)\s*\(")


class Bundle:
    """A decoded, validated bundle.

    manifest: the parsed manifest.json (dict); ptx, llvm, module: the
    files' bytes; kernels: the manifest's kernel list; entries: one
    Entry (the compiled host plan) per public host function."""

    def __init__(self, manifest, ptx, llvm, module, entries, name):
        self.manifest = manifest
        self.ptx = ptx
        self.llvm = llvm
        self.module = module
        self.kernels = manifest["kernels"]
        self.entries = entries
        self.name = name
        self.path = name

    def entry(self, name=None):
        """The entry called name, or the only entry when name is None."""
        names = [e.name for e in self.entries]
        if name is None:
            if len(self.entries) == 1:
                return self.entries[0]
            raise BundleError("%s: the bundle has %d entry functions (%s); "
                              "choose one with entry=" % (
                                  self.name, len(names), ", ".join(names)))
        for e in self.entries:
            if e.name == name:
                return e
        raise BundleError("%s: no entry function %r; the bundle has %s" % (
            self.name, name, ", ".join(names)))

    def __repr__(self):
        return "<tmac bundle %s: entries %s>" % (
            self.name, ", ".join(e.name for e in self.entries))


def read_bundle(source):
    """Read and validate a bundle from a path (str or os.PathLike) or
    from its bytes; raises BundleError naming the bundle and the
    problem."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        name, data = "<bytes>", bytes(source)
    else:
        name = os.fspath(source)
        try:
            with open(name, "rb") as f:
                data = f.read(MAX_BUNDLE_SIZE + 1)
        except OSError as e:
            raise BundleError("%s: cannot read the bundle: %s" % (name, e.strerror or e)) from None
        if len(data) > MAX_BUNDLE_SIZE:
            raise BundleError("%s: bundle: more than %d bytes, larger than a bundle within the "
                              "size limits can be" % (name, MAX_BUNDLE_SIZE))
    try:
        return _decode(data, name)
    except BundleError as e:
        raise BundleError("%s: %s" % (name, e)) from None


def _decode(data, name):
    files = _read_tar(data)
    ptx = files[PTX_FILE]
    try:
        manifest = json.loads(files[MANIFEST_FILE].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise BundleError("bundle: %s does not parse: %s" % (MANIFEST_FILE, e)) from None
    if not isinstance(manifest, dict):
        raise BundleError("bundle: %s is not a JSON object" % MANIFEST_FILE)
    _validate(manifest, ptx)
    kernels = manifest["kernels"]
    raw = manifest.get("entries")
    if not isinstance(raw, list) or not raw:
        raise BundleError("bundle: %s (format 2) has no entries" % MANIFEST_FILE)
    if len(raw) > MAX_ENTRIES:
        raise BundleError("bundle: the manifest has %d entries, more than %d" % (
            len(raw), MAX_ENTRIES))
    entries = []
    for e in raw:
        entries.append(Entry.from_json(e, kernels))
    seen = set()
    for e in entries:
        if e.name in seen:
            raise BundleError("bundle: entry %s is listed twice" % e.name)
        seen.add(e.name)
    return Bundle(manifest, ptx, files[LLVM_FILE], files[MODULE_FILE], entries, name)


def _read_tar(data):
    """The four files of a bundle tar, as bytes, with Go's checks."""
    got = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for member in tar:
                if member.name not in FILES:
                    raise BundleError("bundle: unexpected entry %s" % json.dumps(member.name))
                if not member.isreg():
                    raise BundleError("bundle: %s is not a regular file" % member.name)
                if member.issparse():
                    raise BundleError("bundle: %s is a sparse file" % member.name)
                if member.name in got:
                    raise BundleError("bundle: %s appears more than once" % member.name)
                limit = MAX_MANIFEST_SIZE if member.name == MANIFEST_FILE else MAX_FILE_SIZE
                if member.size < 0 or member.size > limit:
                    raise BundleError("bundle: %s is %d bytes, more than the limit of %d" % (
                        member.name, member.size, limit))
                f = tar.extractfile(member)
                body = f.read(limit + 1) if f is not None else b""
                if len(body) != member.size:
                    raise BundleError("bundle: %s is truncated" % member.name)
                got[member.name] = body
    except (tarfile.TarError, EOFError) as e:
        raise BundleError("bundle: not a valid tmac bundle (tar): %s" % e) from None
    missing = [n for n in FILES if n not in got]
    if missing:
        raise BundleError("bundle: missing %s" % ", ".join(missing))
    return got


def _validate(m, ptx):
    """Go's bundle.validate, plus the format-1 refusal."""
    fmt = m.get("format")
    if fmt == 1:
        raise BundleError("bundle format 1 has no host plan; rebuild it with "
                          "tmac compile --emit=bundle")
    if type(fmt) is not int or fmt < 1 or fmt > FORMAT_VERSION:
        raise BundleError("bundle: manifest format %s is not supported (this tmac reads "
                          "format %d)" % (json.dumps(fmt), FORMAT_VERSION))
    target = m.get("target")
    if not isinstance(target, str) or not target:
        raise BundleError("bundle: the manifest names no target")
    t = _TARGET_RE.search(ptx)
    if t is None:
        raise BundleError("bundle: %s has no .target directive" % PTX_FILE)
    if t.group(1).decode() != target:
        raise BundleError("bundle: the manifest says target %s but %s is for %s" % (
            target, PTX_FILE, t.group(1).decode()))
    version = m.get("ptx_version")
    if type(version) is not int:
        raise BundleError("bundle: the manifest has no ptx_version")
    v = _VERSION_RE.search(ptx)
    if v is None:
        raise BundleError("bundle: %s has no .version directive" % PTX_FILE)
    got = int(v.group(1)) * 10 + int(v.group(2))
    if got != version:
        raise BundleError("bundle: the manifest says PTX %d.%d but %s is PTX %d.%d" % (
            version // 10, version % 10, PTX_FILE, got // 10, got % 10))
    kernels = m.get("kernels")
    if not isinstance(kernels, list) or not kernels:
        raise BundleError("bundle: the manifest lists no kernels")
    if len(kernels) > MAX_KERNELS:
        raise BundleError("bundle: the manifest lists %d kernels, more than %d" % (
            len(kernels), MAX_KERNELS))
    defined = {e.decode() for e in _ENTRY_RE.findall(ptx)}
    seen = set()
    for k in kernels:
        _validate_kernel(k, defined, seen)


def _validate_kernel(k, defined, seen):
    name = k.get("name") if isinstance(k, dict) else None
    if not isinstance(name, str) or not name:
        raise BundleError("bundle: a kernel in the manifest has no name")
    if name in seen:
        raise BundleError("bundle: kernel %s is listed twice" % name)
    seen.add(name)
    if name not in defined:
        raise BundleError("bundle: kernel %s is not defined in %s" % (name, PTX_FILE))
    params = k.get("params") or []
    args = k.get("args")
    if not isinstance(params, list):
        raise BundleError("bundle: kernel %s: params is not a list" % name)
    if len(params) > MAX_PARAMS:
        raise BundleError("bundle: kernel %s has %d parameters, more than %d" % (
            name, len(params), MAX_PARAMS))
    last = -1
    for i, p in enumerate(params):
        where = "bundle: kernel %s, parameter %d" % (name, i)
        if not isinstance(p, dict):
            raise BundleError("%s: not an object" % where)
        role, arg, dim = p.get("role"), p.get("arg", 0), p.get("dim", 0)
        if role not in ROLES:
            raise BundleError("%s: unknown role %s" % (where, json.dumps(role)))
        if (type(arg) is not int or arg < 0 or arg < last
                or (isinstance(args, list) and arg >= len(args))):
            raise BundleError("%s: argument index %s is out of order or range" % (where, arg))
        if type(dim) is not int or dim < 0 or (dim != 0 and role not in ("size", "stride")):
            raise BundleError("%s: bad dimension %s for role %s" % (where, dim, role))
        if not p.get("type"):
            raise BundleError("%s: no LLVM type" % where)
        last = arg
