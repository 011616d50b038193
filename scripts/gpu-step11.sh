#!/usr/bin/env bash
# Issue 17 on the GPU: the Python package (python/) installed with pip
# offline, the README's quickstart, every example bundle called from Python
# on torch tensors against `tmac run --dump-dir` on the same inputs, streams,
# CUDA graph capture, torch.compile, bad inputs, and the host overhead per
# call against a Triton launch and torch.mm (python/tests/gpu_run.py).
#
#   scripts/gpu-step11.sh build      # here (llc): build/tmac, build/gpu (gpu-build.sh: every example
#                                    #   bundle), build/gpu/py (the quickstart's and overhead's bundles)
#   scripts/gpu-step11.sh run [PART] # there (GPU; build/ carried): PART = all (default), examples,
#                                    #   features or overhead; logs in build/gpu/step11, table last
#                                    #   (EXAMPLES_FROM=NAME continues the examples from bundle NAME)
#
# The run stops starting steps after RUN_BUDGET seconds (default 540).
# Exit status 0 when every step passed.
set -u -o pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
build)
	export CGO_ENABLED=0
	scripts/gpu-build.sh || exit 1
	mkdir -p build/gpu/py
	build/tmac compile examples/tutorial/copy.tma --emit=bundle -o build/gpu/py/copy.tmab || exit 1
	build/tmac compile examples/gemm_ws_persistent.tma --emit=bundle -o build/gpu/py/gemm.tmab || exit 1
	git rev-parse --short HEAD >build/gpu/COMMIT
	du -sh build/gpu build/tmac
	;;
run)
	part=${2:-all}
	budget=${RUN_BUDGET:-540}
	start=$SECONDS
	out=$PWD/build/gpu/step11
	mkdir -p "$out"
	tmac=$PWD/build/tmac
	python=${PYTHON:-$(command -v /opt/torch/.venv/bin/python3 || command -v python3)}
	gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)
	echo "GPU: ${gpu:-none found}; commit $(cat build/gpu/COMMIT 2>/dev/null || echo unknown); python $python"
	rows=()
	failed=0
	TAIL=40
	. scripts/gpu-steps.sh
	add() { # NAME RC NOTES
		local v
		v=$(verdict "$2")
		[ "$v" = PASS ] || failed=$((failed + 1))
		rows+=("| $1 | $v | $3 |")
	}

	step pip-install 120 "$python" -m pip install --no-build-isolation --no-index --force-reinstall ./python
	add "pip install ./python (offline)" $rc "$(grep -m1 -o 'Successfully installed.*' "$out/pip-install.log")"
	# From here on the installed package is used: run from a directory
	# without python/ on the path.
	cd "$out" || exit 1
	runpy=python/tests/gpu_run.py
	[ -f "../../../$runpy" ] && runpy=../../../$runpy
	if [ "$part" = all ] || [ "$part" = quickstart ]; then
		step quickstart 90 "$python" ../../../examples/python/quickstart.py ../py/copy.tmab
		add "examples/python/quickstart.py" $rc "$(tail -1 quickstart.log)"
	fi
	if [ "$part" = all ] || [ "$part" = examples ]; then
		step examples 480 "$python" "$runpy" examples ../bundles "$tmac" . "${EXAMPLES_FROM:-}"
		add "every example bundle from Python = tmac run --dump-dir" $rc "$(grep -c 'RESULT example:.* PASS' examples.log) PASS, $(grep -c 'RESULT example:.* FAIL' examples.log) FAIL"
	fi
	if [ "$part" = all ] || [ "$part" = features ]; then
		step features 240 "$python" "$runpy" features ../py/gemm.tmab ../py/copy.tmab
		add "streams, CUDA graph, torch.compile, bad inputs" $rc "$(grep -c 'RESULT .* PASS' features.log) PASS, $(grep -c 'RESULT .* FAIL' features.log) FAIL"
	fi
	if [ "$part" = all ] || [ "$part" = overhead ]; then
		step overhead 240 "$python" "$runpy" overhead ../py/gemm.tmab ../py/copy.tmab "$tmac"
		add "host overhead" $rc "$(grep -c '^HOST' overhead.log) measurements"
		step gemm-module 180 "$python" ../../../examples/python/gemm_module.py ../py/gemm.tmab
		add "examples/python/gemm_module.py" $rc "$(tail -1 gemm-module.log)"
		# Go's host path per launch (tmac run's declarative plan and IR executor vs a bare driver call)
		step go-overhead 120 ../overhead -bundle ../overhead.tmab
		add "gpu-tests/overhead (Go host path)" $rc "$(grep -m3 -i 'us' go-overhead.log | tr '\n' ';')"
	fi
	echo
	echo "== results ($((SECONDS - start)) s)"
	grep -h '^RESULT' ./*.log 2>/dev/null | grep -v ' PASS ' | head -40
	grep -h '^HOST\|^KERNEL\|^LOOP' overhead.log 2>/dev/null
	echo "| step | result | notes |"
	echo "|---|---|---|"
	printf '%s\n' "${rows[@]}"
	[ "$failed" -eq 0 ]
	;;
*)
	sed -n '2,14p' "$0"
	exit 2
	;;
esac
