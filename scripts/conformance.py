#!/usr/bin/env python3
"""Upstream conformance: tmac against MLIR 22's own test files.

The upstream files are not part of the repository. They live under
build/upstream/<path in llvm-project> (git-ignored); scripts/conformance-files.txt
lists each one with the llvm-project commit it was read at, how the local
copy differs from that commit (if at all) and the SHA-256 of the local copy.
docs/conformance.md says how to populate build/upstream and gives the counts.

    scripts/conformance.py              # measure; report on stdout, details in build/conformance
    scripts/conformance.py --files GPU  # only the files whose path contains GPU
    scripts/conformance.py --update-doc # measure all and rewrite the counts in docs/conformance.md
    scripts/conformance.py check        # compare build/upstream with the manifest (SHA-256)
    scripts/conformance.py fetch        # download the files (needs network: raw.githubusercontent.com)

What is measured, with mlir-opt 22 as the oracle for every item:

  parse/print  A file is cut into chunks at `// -----` when its RUN line has
               -split-input-file. A chunk without expected-* annotations is cut
               into top-level ops (the children of an explicit `module`, with the
               module kept around them); each op is an item, run alone with the
               chunk's alias definitions. An item counts when mlir-opt accepts it
               (RUN-line flags: --allow-unregistered-dialect); tmac accepts it
               when `tmac opt` succeeds, and prints it identically when the
               custom (and, separately, the generic) output equals mlir-opt's
               byte for byte. Ops that only make sense together (a launch_func
               and its kernel) are measured as their whole chunk.
  diagnostics  A chunk with expected-* annotations is an item; it counts when
               `mlir-opt --verify-diagnostics` passes on it, and is reproduced
               when `tmac opt --verify-diagnostics` passes too.
  programs     The sm90 integration programs: `tmac compile` must succeed on
               the file as it is (after mlir-opt accepts it).

mlir-opt 22 registers upstream's test dialect; items with generic "test.*"
ops are given to tmac with --allow-unregistered-dialect.

Items mlir-opt 22 itself rejects (a stored copy older or newer than LLVM 22)
are listed as stale and left out of the counts. The report (stdout and
build/conformance/report.md, Markdown) starts with when and at which commit
it was measured, then the counts table docs/conformance.md shows, the
failing items grouped by cause (an op tmac lacks, a dialect it does not
claim, a diagnostic or printed form that differs) and then one by one. Every file is processed with
its original line numbers (the text around an item is blanked, not removed),
so the errors in the failure list point into build/upstream/<path>.
"""
import argparse
import collections
import concurrent.futures
import datetime
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MANIFEST = os.path.join(ROOT, "scripts", "conformance-files.txt")
RAW_URL = "https://raw.githubusercontent.com/llvm/llvm-project/{commit}/{path}"
DIAG_RE = re.compile(r"expected-(error|warning|remark|note)")
LOC_RE = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)\s*$')
ALIAS_RE = re.compile(r"^\s*[#!][\w.$-]+\s*=")
SPLIT_RE = re.compile(r"^// -----")


# --- manifest -----------------------------------------------------------------

class Entry:
    def __init__(self, kind, path, commit, sha, edits):
        self.kind, self.path, self.commit, self.sha, self.edits = kind, path, commit, sha, edits


def read_manifest():
    """Lines: KIND PATH COMMIT SHA256 [EDIT...]; '#' starts a comment."""
    entries = []
    for line in open(MANIFEST, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        entries.append(Entry(f[0], f[1], f[2], f[3], f[4:]))
    return entries


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# The local copies that differ from the commit they were read at, and how:
# each edit is applied by `fetch` to the downloaded text, in order.
def apply_edit(name, text):
    if name == "program-only":
        # The file ends in hundreds of CHECK lines (the printed matrix); keep
        # the program, which ends before the first blank-line-separated CHECK.
        cut = text.find("\n\n\n// CHECK:")
        return text if cut < 0 else text[:cut + 1]
    if name == "no-check-lines":
        # Most of the file is FileCheck lines on what the conversion
        # produces, which is not measured here; the input program is kept.
        return "".join(l for l in text.splitlines(True) if not re.match(r"\s*//\s*CHECK", l))
    if name == "printf-comma":
        # LLVM 22's gpu.printf takes a comma after the format string.
        return re.sub(r'(gpu\.printf "(?:[^"\\\n]|\\.)*")(?=\s*%)', r"\1,", text)
    if name == "parity-i1":
        # try_wait.parity takes an i1 phase in LLVM 22 (an index before).
        return re.sub(r"^([ \t]*)(nvgpu\.mbarrier\.try_wait\.parity (%\w+)\[%c0\]), %c0, ",
                      r"\1%phase_c0 = arith.constant 0 : i1\n\1\2, %phase_c0, ", text, flags=re.M)
    if name == "opaque-ptr":
        return text.replace("!llvm.ptr<i8>", "!llvm.ptr")
    if name == "transposeB-attr":
        # The stored copy is newer than LLVM 22, which spells it {transposeB}.
        return text.replace("%mc transposeB :", "%mc {transposeB} :")
    raise SystemExit("conformance: unknown edit %r in %s" % (name, MANIFEST))


def cmd_fetch(args):
    for e in read_manifest():
        dst = os.path.join(args.upstream, e.path)
        if os.path.exists(dst) and sha256(dst) == e.sha:
            continue
        url = RAW_URL.format(commit=e.commit, path=e.path)
        try:
            text = urllib.request.urlopen(url, timeout=60).read().decode("utf-8")
        except OSError as err:
            raise SystemExit("conformance: %s: %s (read it with the search tool instead: docs/conformance.md)" % (url, err))
        for edit in e.edits:
            text = apply_edit(edit, text)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "w", encoding="utf-8").write(text)
        print("fetched %s" % e.path)
    return cmd_check(args)


def cmd_check(args):
    bad = 0
    for e in read_manifest():
        p = os.path.join(args.upstream, e.path)
        if not os.path.exists(p):
            print("missing   %s" % e.path)
            bad += 1
        elif sha256(p) != e.sha:
            print("different %s" % e.path)
            bad += 1
    if bad:
        print("%d of %d files are missing or differ from %s" % (bad, len(read_manifest()), os.path.relpath(MANIFEST, ROOT)))
        return 1
    print("all %d files match %s" % (len(read_manifest()), os.path.relpath(MANIFEST, ROOT)))
    return 0


# --- running the tools ----------------------------------------------------------

class Tools:
    def __init__(self, args, workdir):
        self.mlir_opt, self.tmac, self.workdir = args.mlir_opt, args.tmac, workdir
        self.timeout = args.timeout

    def write(self, relpath, text):
        p = os.path.join(self.workdir, relpath)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w", encoding="utf-8").write(text)
        return relpath

    def run(self, argv):
        try:
            p = subprocess.run(argv, cwd=self.workdir, capture_output=True, text=True,
                               errors="replace", timeout=self.timeout)
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            return 124, "", "timed out after %ds" % self.timeout

    def upstream(self, path, flags, *extra):
        return self.run([self.mlir_opt] + flags + list(extra) + [path])

    def ours(self, path, flags, *extra):
        return self.run([self.tmac, "opt"] + flags + list(extra) + [path])


def tmac_flags(flags, text):
    """mlir-opt 22 registers upstream's test dialect; tmac reads its generic
    "test.*" ops as unregistered ones."""
    if "--allow-unregistered-dialect" not in flags and re.search(r'"test\.', text):
        return flags + ["--allow-unregistered-dialect"]
    return flags


def first_error(stderr):
    for line in stderr.splitlines():
        if "error:" in line:
            return line.strip()
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def first_difference(want, got):
    a, b = want.splitlines(), got.splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<end>"
        y = b[i] if i < len(b) else "<end>"
        if x != y:
            return "line %d: mlir-opt `%s` tmac `%s`" % (i + 1, x.strip(), y.strip())
    return "(same lines, different bytes)"


# --- cutting files into items ----------------------------------------------------

def run_flags(text):
    """The mlir-opt flags of the file's first RUN line that matter here."""
    run, lines = "", text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^//\s*RUN:(.*)$", line)
        if m:
            run = m.group(1)
            j = i
            while run.rstrip().endswith("\\") and j + 1 < len(lines):
                j += 1
                n = re.match(r"^//\s*RUN:(.*)$", lines[j])
                run = run.rstrip()[:-1] + " " + (n.group(1) if n else "")
            break
    return {
        "allow": re.search(r"-allow-unregistered-dialect", run) is not None,
        "split": re.search(r"-split-input-file", run) is not None,
    }


def chunks_of(lines, split):
    """[(first, last)] 0-based line ranges, cut at `// -----` when split."""
    if not split:
        return [(0, len(lines) - 1)]
    out, start = [], 0
    for i, line in enumerate(lines):
        if SPLIT_RE.match(line):
            out.append((start, i - 1))
            start = i + 1
    out.append((start, len(lines) - 1))
    return [c for c in out if c[0] <= c[1]]


def padded(lines, keep):
    """The file with every line outside keep blanked (line numbers preserved)."""
    return "\n".join(l if i in keep else "" for i, l in enumerate(lines)) + "\n"


def strip_comment(line):
    out, q, i = [], False, 0
    while i < len(line):
        c = line[i]
        if q:
            if c == "\\":
                out.append(line[i:i + 2])
                i += 2
                continue
            if c == '"':
                q = False
        elif c == '"':
            q = True
        elif line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join(out)


def alias_lines(lines, first, last):
    """Lines of the alias definitions (#a = ..., !t = ...) in [first, last]."""
    keep, i = set(), first
    while i <= last:
        if ALIAS_RE.match(lines[i]):
            depth, j = 0, i
            while j <= last:
                code = strip_comment(lines[j]).replace("->", "")  # an affine map's arrow is no bracket
                depth += sum(code.count(c) for c in "([{<") - sum(code.count(c) for c in ")]}>")
                keep.add(j)
                if depth <= 0:
                    break
                j += 1
            i = j
        i += 1
    return keep


def top_level_ops(generic):
    """From mlir-opt's generic output with local-scope locations: a list of
    (name, line, children) for the ops of the module body; line is the 1-based
    source line of the op; children lists the same for a builtin.module's body
    (one level)."""
    lines = generic.splitlines()

    def ops_at(start, end, indent):
        ops, i = [], start
        pre = " " * indent
        while i < end:
            line = lines[i]
            if line.startswith(pre) and not line.startswith(pre + " ") and line[indent:indent + 1] in ('"', "%"):
                m = re.match(r'^\s*(?:%[^=]*=\s*)?"([^"]+)"', line)
                name = m.group(1) if m else "?"
                j = i
                while not LOC_RE.search(lines[j]) or (j > i and not lines[j].startswith(pre + "}")):
                    if j != i and lines[j].startswith(pre) and not lines[j].startswith(pre + " ") and lines[j][indent:indent + 1] in ('"', "%"):
                        break
                    j += 1
                    if j >= end:
                        break
                loc = LOC_RE.search(lines[min(j, end - 1)])
                src = int(loc.group(1)) if loc else 0
                children = ops_at(i + 1, j, indent + 2) if name == "builtin.module" and j > i else None
                ops.append((name, src, children))
                i = j + 1
                continue
            i += 1
        return ops

    if not lines:
        return []
    root = ops_at(0, len(lines), 0)
    if len(root) == 1 and root[0][0] == "builtin.module" and root[0][1] == 0:
        return root[0][2] or []  # the implicit module
    return root


def source_top_level_ops(lines, first, last):
    """Top-level ops as the text shows them: lines at column 1 that start an
    op (an op name, a generic "op" or a result), the layout of upstream's
    tests. Used only where mlir-opt cannot parse the chunk."""
    ops = []
    for i in range(first, last + 1):
        m = re.match(r'^(?:%[\w#:, %]*=\s*)?"?([a-z_][\w$]*\.[\w.$]+)', lines[i])
        if m:
            ops.append((m.group(1), i + 1, None))
        elif re.match(r"^module\b", lines[i]):
            ops.append(("builtin.module", i + 1, None))  # measured whole
    return ops


class Item:
    def __init__(self, path, kind, line, name):
        self.path, self.kind, self.line, self.name = path, kind, line, name
        self.stale = None       # mlir-opt's error when it rejects the item
        self.accepted = False
        self.custom = False
        self.generic = False
        self.reason = ""        # why tmac failed it
        self.grouped = False    # measured as its whole chunk

    def key(self):
        return "%s:%d" % (self.path, self.line)

    def to_json(self):
        return {k: v for k, v in self.__dict__.items()}


def measure_parse_print(tools, path, lines, flags, first, last):
    """Items of a chunk without diagnostics."""
    fl = ["--allow-unregistered-dialect"] if flags["allow"] else []
    chunk_keep = set(range(first, last + 1))
    chunk_text = padded(lines, chunk_keep)
    rel = tools.write(path, chunk_text)
    rc, out, err = tools.upstream(rel, fl, "--mlir-print-debuginfo", "--mlir-print-local-scope", "--mlir-print-op-generic")
    chunk_ok = rc == 0
    if chunk_ok:
        ops = top_level_ops(out)
    else:
        # mlir-opt rejects some op of the chunk; find the top-level ops from
        # the text instead, so that the others are still measured.
        ops = source_top_level_ops(lines, first, last)
        if len(ops) < 2:
            it = Item(path, "parse-print", first + 1, "chunk")
            it.stale = first_error(err)
            return [it]
    # Boundaries between items: every top-level op and module child start.
    starts = sorted({op[1] - 1 for op in ops} | {c[1] - 1 for op in ops if op[2] for c in op[2]})
    aliases = alias_lines(lines, first, last)

    def span(start, limit):
        nxt = [s for s in starts if s > start]
        end = min(nxt[0] - 1 if nxt else last, limit)
        return set(range(start, end + 1))

    units = []  # (name, start line index, keep set)
    top_starts = sorted(op[1] - 1 for op in ops)
    for op in ops:
        s = op[1] - 1
        later = [t for t in top_starts if t > s]
        op_end = (later[0] - 1) if later else last
        if op[0] == "builtin.module" and op[2]:
            kids = sorted(c[1] - 1 for c in op[2])
            close = op_end
            while close > kids[-1] and "}" not in strip_comment(lines[close]):
                close -= 1
            header = set(range(s, kids[0]))
            for c in op[2]:
                cs = c[1] - 1
                units.append((c[0], cs, header | {close} | span(cs, close - 1)))
        else:
            units.append((op[0], s, span(s, op_end)))

    chunk_result = None

    def whole_chunk():
        nonlocal chunk_result
        if chunk_result is None:
            r = {}
            _, r["up"], _ = tools.upstream(rel, fl)
            _, r["upg"], _ = tools.upstream(rel, fl, "--mlir-print-op-generic")
            r["rc"], r["out"], r["err"] = tools.ours(rel, tmac_flags(fl, chunk_text))
            _, r["outg"], _ = tools.ours(rel, tmac_flags(fl, chunk_text), "--print-op-generic")
            chunk_result = r
        return chunk_result

    items = []
    for name, s, keep in units:
        it = Item(path, "parse-print", s + 1, name)
        text = padded(lines, keep | aliases)
        tools.write(path, text)
        rc, up, uerr = tools.upstream(rel, fl)
        if rc != 0 and not chunk_ok:
            it.stale = first_error(uerr)
            items.append(it)
            continue
        if rc != 0:
            # Not measurable alone (a symbol defined elsewhere in the chunk).
            it.grouped = True
            tools.write(path, chunk_text)
            r = whole_chunk()
            it.accepted = r["rc"] == 0
            it.custom = it.accepted and r["out"] == r["up"]
            it.generic = it.accepted and r["outg"] == r["upg"]
            it.reason = first_error(r["err"]) if not it.accepted else (
                "" if it.custom else "custom: " + first_difference(r["up"], r["out"]))
            if it.accepted and it.custom and not it.generic:
                it.reason = "generic: " + first_difference(r["upg"], r["outg"])
            items.append(it)
            continue
        _, upg, _ = tools.upstream(rel, fl, "--mlir-print-op-generic")
        ifl = tmac_flags(fl, text)
        trc, out, terr = tools.ours(rel, ifl)
        it.accepted = trc == 0
        if it.accepted:
            it.custom = out == up
            _, outg, _ = tools.ours(rel, ifl, "--print-op-generic")
            it.generic = outg == upg
            if not it.custom:
                it.reason = "custom: " + first_difference(up, out)
            elif not it.generic:
                it.reason = "generic: " + first_difference(upg, outg)
        else:
            it.reason = first_error(terr)
        items.append(it)
    return items


def measure_diagnostics(tools, path, lines, flags, first, last):
    fl = ["--allow-unregistered-dialect"] if flags["allow"] else []
    it = Item(path, "diagnostics", first + 1, "chunk")
    text = padded(lines, set(range(first, last + 1)))
    rel = tools.write(path, text)
    rc, _, err = tools.upstream(rel, fl, "--verify-diagnostics")
    if rc != 0:
        it.stale = first_error(err)
        return [it]
    rc, _, err = tools.ours(rel, tmac_flags(fl, text), "--verify-diagnostics")
    it.accepted = it.custom = it.generic = rc == 0
    if rc != 0:
        it.reason = first_error(err)
    return [it]


def measure_program(tools, path, text, emit):
    it = Item(path, "program", 1, "program")
    rel = tools.write(path, text)
    rc, _, err = tools.upstream(rel, [])
    if rc != 0:
        it.stale = first_error(err)
        return [it]
    rc, _, err = tools.run([tools.tmac, "compile", rel, "--emit=" + emit, "-o", rel + ".out"])
    it.accepted = it.custom = it.generic = rc == 0
    if rc != 0:
        it.reason = first_error(err)
    return [it]


def measure_file(args, entry):
    path = entry.path
    src = os.path.join(args.upstream, path)
    text = open(src, encoding="utf-8").read()
    work = tempfile.mkdtemp(prefix="conformance-")
    try:
        tools = Tools(args, work)
        if entry.kind == "program":
            return measure_program(tools, path, text, args.emit)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        flags = run_flags(text)
        items = []
        for first, last in chunks_of(lines, flags["split"]):
            body = "\n".join(lines[first:last + 1])
            if not re.search(r"\S", "\n".join(l for l in lines[first:last + 1] if not l.lstrip().startswith("//"))):
                continue  # comments only
            if DIAG_RE.search(body):
                items += measure_diagnostics(tools, path, lines, flags, first, last)
            else:
                items += measure_parse_print(tools, path, lines, flags, first, last)
        return items
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- report ------------------------------------------------------------------------

def summarize(items):
    s = {"pp": 0, "pp_acc": 0, "pp_custom": 0, "pp_generic": 0, "diag": 0, "diag_ok": 0,
         "prog": 0, "prog_ok": 0, "stale": 0}
    for it in items:
        if it.stale is not None:
            s["stale"] += 1
        elif it.kind == "parse-print":
            s["pp"] += 1
            s["pp_acc"] += it.accepted
            s["pp_custom"] += it.custom
            s["pp_generic"] += it.custom and it.generic
        elif it.kind == "diagnostics":
            s["diag"] += 1
            s["diag_ok"] += it.accepted
        else:
            s["prog"] += 1
            s["prog_ok"] += it.accepted
    return s


def frac(a, b):
    return "%d/%d" % (a, b) if b else "-"


# Why a failing item fails, for the report's summary: an op tmac lacks, a
# dialect it does not claim, or a difference in what both accept.
MISSING_DIALECT_RE = re.compile(r"tmac does not support the '([^']+)' dialect")
MISSING_OP_RE = re.compile(r"(?:custom op '([^']+)' is unknown|unregistered operation '([^']+)' found in dialect)")
LOC_PREFIX_RE = re.compile(r"^\S+:\d+:\d+: error: (?:unexpected error: )?")


def cause(it):
    m = MISSING_DIALECT_RE.search(it.reason)
    if m:
        return "dialect not claimed by tmac: %s" % m.group(1)
    m = MISSING_OP_RE.search(it.reason)
    if m:
        return "op not in tmac: %s" % (m.group(1) or m.group(2))
    if it.reason.startswith("custom:"):
        return "custom form printed differently"
    if it.reason.startswith("generic:"):
        return "generic form printed differently"
    if it.kind == "diagnostics":
        return "diagnostic differs"
    return "rejected by tmac: " + LOC_PREFIX_RE.sub("", it.reason)[:120]


def provenance(args):
    """When, with which tmac and which mlir-opt the counts were taken."""
    def out(argv):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""
    commit = out(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]) or "unknown"
    if out(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]):
        commit += " with uncommitted changes"
    version = next((l.strip() for l in out([args.mlir_opt, "--version"]).splitlines() if "version" in l), "mlir-opt")
    return "Measured %s UTC, tmac at %s, %s.\n\n" % (
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), commit, version)


def report(results, out, header="", details=True):
    """The Markdown report: header, counts table, failures by cause and,
    with details, every failing and stale item."""
    w = out.write
    w(header)
    w("| file | items | accepted | custom identical | custom+generic identical | diagnostics reproduced | programs compiled | stale |\n")
    w("|---|---:|---:|---:|---:|---:|---:|---:|\n")
    total = []
    for path, items in results:
        total += items
        s = summarize(items)
        w("| %s | %d | %s | %s | %s | %s | %s | %d |\n" % (
            path.replace("mlir/test/", ""), s["pp"], frac(s["pp_acc"], s["pp"]), frac(s["pp_custom"], s["pp"]),
            frac(s["pp_generic"], s["pp"]), frac(s["diag_ok"], s["diag"]), frac(s["prog_ok"], s["prog"]), s["stale"]))
    s = summarize(total)
    w("| **total** | %d | %s | %s | %s | %s | %s | %d |\n\n" % (
        s["pp"], frac(s["pp_acc"], s["pp"]), frac(s["pp_custom"], s["pp"]), frac(s["pp_generic"], s["pp"]),
        frac(s["diag_ok"], s["diag"]), frac(s["prog_ok"], s["prog"]), s["stale"]))
    fails = [it for it in total if it.stale is None and not (it.accepted and it.custom and it.generic)]
    causes = collections.Counter(cause(it) for it in fails)
    if causes:
        w("Failing items by cause:\n\n| cause | items |\n|---|---:|\n")
        for c, n in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])):
            w("| %s | %d |\n" % (c.replace("|", "\\|"), n))
        w("\n")
    if not details:
        return s
    w("Failing items (%d): file:line of the item, what it is, and the first line of tmac's error\n"
      "or the first difference from mlir-opt's output.\n\n" % len(fails))
    for it in fails:
        w("- `%s` %s%s: %s\n" % (it.key(), it.name, " (whole chunk)" if it.grouped else "", it.reason))
    stale = [it for it in total if it.stale is not None]
    if stale:
        w("\nStale items (%d), which mlir-opt 22 itself rejects and the counts leave out:\n\n" % len(stale))
        for it in stale:
            w("- `%s` %s: %s\n" % (it.key(), it.kind, it.stale))
    return s


def cmd_run(args):
    entries = [e for e in read_manifest() if not args.files or any(f in e.path for f in args.files)]
    missing = [e.path for e in entries if not os.path.exists(os.path.join(args.upstream, e.path))]
    if missing:
        raise SystemExit("conformance: %d upstream files missing under %s (first: %s); see docs/conformance.md"
                         % (len(missing), args.upstream, missing[0]))
    for tool in (args.tmac, args.mlir_opt):
        if not shutil.which(tool):
            raise SystemExit("conformance: %s not found (make build; scripts/install-deps.sh)" % tool)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [(e, pool.submit(measure_file, args, e)) for e in entries]
        results = [(e.path, f.result()) for e, f in futures]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({p: [it.to_json() for it in items] for p, items in results}, f, indent=1)
    header = provenance(args)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        report(results, f, header)
    report(results, sys.stdout, header)
    if args.update_doc:
        update_doc(results, header)
    return 0


DOC = os.path.join(ROOT, "docs", "conformance.md")
DOC_BEGIN, DOC_END = "<!-- counts: scripts/conformance.py --update-doc -->", "<!-- end of counts -->"


def update_doc(results, header):
    """Replace the counts section of docs/conformance.md (between its two
    markers) with this run's header, table and failures by cause."""
    text = open(DOC, encoding="utf-8").read()
    begin, end = text.find(DOC_BEGIN), text.find(DOC_END)
    if begin < 0 or end < begin:
        raise SystemExit("conformance: %s lacks the markers %r and %r" % (DOC, DOC_BEGIN, DOC_END))
    buf = io.StringIO()
    report(results, buf, header, details=False)
    text = text[:begin + len(DOC_BEGIN)] + "\n\n" + buf.getvalue().rstrip("\n") + "\n\n" + text[end:]
    open(DOC, "w", encoding="utf-8").write(text)
    print("updated %s" % os.path.relpath(DOC, ROOT), file=sys.stderr)


def main():
    global MANIFEST
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", nargs="?", default="run", choices=["run", "check", "fetch"])
    ap.add_argument("--upstream", default=os.path.join(ROOT, "build", "upstream"))
    ap.add_argument("--manifest", default=MANIFEST, help="the file list (the script's own test uses another)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "conformance"))
    ap.add_argument("--tmac", default=os.path.join(ROOT, "build", "tmac"))
    ap.add_argument("--mlir-opt", default=os.environ.get("MLIR_OPT", "/usr/lib/llvm-22/bin/mlir-opt"))
    ap.add_argument("--emit", default="ptx", help="what tmac compile emits for the programs (ptx needs llc)")
    ap.add_argument("--files", nargs="*", help="only files whose path contains one of these")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--update-doc", action="store_true",
                    help="write the counts and failures by cause into docs/conformance.md (all files only)")
    args = ap.parse_args()
    args.tmac = os.path.abspath(args.tmac)
    MANIFEST = os.path.abspath(args.manifest)
    if args.update_doc and args.files:
        ap.error("--update-doc measures every file; leave out --files")
    try:
        sys.exit({"run": cmd_run, "check": cmd_check, "fetch": cmd_fetch}[args.command](args))
    except BrokenPipeError:  # the report piped into head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    main()
