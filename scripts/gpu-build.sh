#!/usr/bin/env bash
# Builds everything the GPU check needs, here (where llc is), into build/gpu:
# the PTX of every GPU test, every example that compiles today and every
# code generation lit test input (for ptxas); one `tmac run` bundle per
# example and per GPU test program (build/gpu/bundles). The GPU tests are
# outlined programs (gpu.module + gpu.func kernels, the host function that
# launches them and @reference), compiled with the --pass-pipeline of their
# `// tmac-run-flags:` lines (lower-nvgpu,canonicalize,cse): one bundle
# test-NAME.tmab per program, or test-NAME-N.tmab per flags line when there
# are several, with the line's other flags in test-NAME[-N].flags. A
# program that does not compile is reported and skipped;
# GPU_BUILD_STRICT=1 makes that an error. build/gpu travels to the GPU
# machine (about 30 MB, most of it the bundles' LLVM IR); the total is
# printed.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0
go build -o build/tmac ./cmd/tmac
rm -rf build/gpu && mkdir -p build/gpu/ptx build/gpu/bundles
failed=()
for f in gpu-tests/*.tma; do
	# deadlock.tma is a gpu.launch program (lower-nvgpu needs outline-kernels
	# first); its bundle is built below.
	[ "$f" = gpu-tests/deadlock.tma ] && continue
	if ! build/tmac compile "$f" --pass-pipeline='builtin.module(lower-nvgpu,canonicalize,cse)' \
		-o "build/gpu/ptx/$(basename "$f" .tma).ptx" 2>build/gpu/compile.err; then
		failed+=("$f")
		echo "GPU test $f does not compile:"
		head -5 build/gpu/compile.err
	fi
done
rm -f build/gpu/compile.err
for f in examples/*.tma; do
	n=example-$(basename "$f" .tma)
	build/tmac compile "$f" -o "build/gpu/ptx/$n.ptx" 2>/dev/null || echo "skip example $f (does not compile yet)"
done
# One bundle per example (PTX + host plan) for `tmac run` on the GPU
# machine, which has no llc: scripts/gpu-run-examples.sh runs them all.
for f in examples/*.tma examples/variants/*.tma; do
	n=$(basename "$f" .tma)
	case "$f" in examples/variants/*) n=variant-$n;; esac
	# A `// tmac-run-flags: ...` line in the source (e.g. --shape for
	# dynamically shaped arguments) travels as NAME.flags.
	sed -n 's|^// tmac-run-flags: ||p' "$f" | head -1 >"build/gpu/bundles/$n.flags"
	[ -s "build/gpu/bundles/$n.flags" ] || rm -f "build/gpu/bundles/$n.flags"
	if ! build/tmac compile "$f" --emit=bundle -o "build/gpu/bundles/$n.tmab" 2>build/gpu/compile.err; then
		failed+=("$f")
		echo "example $f does not compile to a bundle:"
		head -5 build/gpu/compile.err
	fi
done
rm -f build/gpu/compile.err
# The GPU test programs: one bundle per `// tmac-run-flags:` line.
for f in gpu-tests/*.tma; do
	n=test-$(basename "$f" .tma)
	lines=$(grep -c '^// tmac-run-flags: ' "$f" || true)
	[ "$lines" -gt 0 ] || continue
	i=0
	while IFS= read -r flags; do
		i=$((i + 1))
		b=$n
		[ "$lines" -gt 1 ] && b=$n-$i
		pipeline=$(printf '%s\n' "$flags" | grep -oE -- '--pass-pipeline=[^ ]+' || true)
		printf '%s\n' "$flags" | sed -E 's/ *--pass-pipeline=[^ ]+//; s/^ *//; /^$/d' >"build/gpu/bundles/$b.flags"
		[ -s "build/gpu/bundles/$b.flags" ] || rm -f "build/gpu/bundles/$b.flags"
		[ "$i" -gt 1 ] && { cp "build/gpu/bundles/$n-1.tmab" "build/gpu/bundles/$b.tmab"; continue; }
		# shellcheck disable=SC2086 # pipeline is one flag or none
		if ! build/tmac compile "$f" $pipeline --emit=bundle -o "build/gpu/bundles/$b.tmab" 2>build/gpu/compile.err; then
			failed+=("$f")
			echo "GPU test $f does not compile to a bundle:"
			head -5 build/gpu/compile.err
			break
		fi
	done < <(sed -n 's|^// tmac-run-flags: ||p' "$f")
done
rm -f build/gpu/compile.err
ls build/gpu/bundles/*.tmab | wc -l | xargs echo "bundles:"
for f in lit-tests/codegen/*.tma; do
	case "$f" in *errors*) continue;; esac
	build/tmac compile "$f" --pass-pipeline='builtin.module()' -o "build/gpu/ptx/lit-$(basename "$f" .tma).ptx" 2>/dev/null || true
done
# The watchdog test (a kernel that never finishes) and an example without
# {tmac.output} marks (outputs found by running @reference first).
# (mbarrier-phase proves this kernel can never finish at compile time, so it
# is compiled without that check to exercise the run-time watchdog.)
build/tmac compile gpu-tests/deadlock.tma --pass-pipeline='builtin.module(outline-kernels,smem-plan,lower-nvgpu,canonicalize,cse)' --emit=bundle -o build/gpu/deadlock.tmab
sed 's/ {tmac.output}//g' examples/scalar_add.tma > build/gpu/scalar_add_unmarked.tma
build/tmac compile build/gpu/scalar_add_unmarked.tma --emit=bundle -o build/gpu/scalar_add_unmarked.tmab
# The launch-overhead benchmark (gpu-tests/overhead): its bundle and program.
build/tmac compile gpu-tests/overhead.tma --emit=bundle -o build/gpu/overhead.tmab
go build -ldflags=-s -o build/gpu/overhead ./gpu-tests/overhead
ls build/gpu/ptx | wc -l | xargs echo "PTX files:"
# The GPU machine's copy of the checkout may report a stale HEAD: record ours.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' + uncommitted changes')" >build/gpu/COMMIT
du -sh build/gpu | cut -f1 | xargs echo "build/gpu size:"
if [ ${#failed[@]} -gt 0 ]; then
	echo "GPU tests that do not compile (${#failed[@]}): ${failed[*]}"
	[ "${GPU_BUILD_STRICT:-0}" = 1 ] && exit 1
fi
exit 0
