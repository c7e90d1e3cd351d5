#!/usr/bin/env bash
# The device evidence the open issues still need, one step per device call (each under 9 minutes
# on the 16-core H200 machine). Run from the repository root with the device tool: command
# "bash bench/device_plan.sh STEP", carry [".tc", ".whl"] (the toolchain, git-ignored, from
# ../shared/device/toolchain.sh; .whl: pytest-xdist, execnet, filelock, pytest-timeout wheels).
# Results go to $OUT (bench/results without it). The fuzzer's steps are bench/fuzz_device.sh. The tree and the
# toolchain pass the 64 MiB a call carries: `bash bench/carry_aside.sh out` before a call, `in` after it.
#
#   tests      the whole GPU test suite (-n 16, per-test timeout), its log and a summary line
#   speed      bench/h200.py --passes 3: each workload as the library runs it (run-time sizes) and as
#              the fixed-size program (tileir_exact), beside torch, in the same run (the 2% check)
#   host       the norms at run-time / exact sizes (bench/exact_sizes.py), the checked variant's overhead, the launch overhead, a tileir.ops model under
#              torch.compile vs eager
#   launch     the runtime's GPU tests (streams, graphs, threads, devices), the launch overhead, the norms
#              at run-time / exact sizes at the two squares, 5 interleaved rounds
#   examples   every example on the GPU -> examples_h200.txt (docs quote it), 07's curves ->
#              training_curves_h200.json and .png
#   training   bench/training_device.py (every op, full sweep) -> training_h200.json
#   training-rows  the same for softmax, layernorm and rmsnorm alone -> training_rows_h200.json
#   training-attention  the same for attention alone -> training_attention_h200.json
#   matmul     the product's probe (PROBE=1: bench/matmul_probe.py: tiles, splits, padded rows, gemm's host
#              time), the host time of the suite's slowest shapes (bench/host_bound.py), the suite's matmul families into suite_matmul_h200.json (a fresh file: merge it into
#              suite_h200.json), then 07_training.py's curves and tokens/s and a profile of its step
#              (bench/training_profile.py); figures, logs and curves come back in matmul_step.tgz
#   campaign-suite  the fuzzer's campaign 3 cut to ~4 minutes, then the suite's row and matrix families
#   hostpath   the host's cost of a call as a PyTorch program makes it: the launch overhead, each op's
#              host time (bench/op_host_cost.py), 07_training.py's curves and tokens/s and a profile of its
#              step (bench/training_profile.py); logs and the PNG come back in hostpath.tgz
#   graph      the GPU tests of tileir.ops and the training kernels, 07_training.py eager and with --graph
#              (training_curves_h200.json, training_curves_graph_h200.json), bench/training_profile.py,
#              bench/tn_split_probe.py; logs and PNGs in graph.tgz
#   short      bench/training_profile.py, bench/swiglu_probe.py, bench/attention_small_probe.py (the training
#              attention kernels at short sequences, GPU time); logs in short.tgz
#   layout     bench/attention_small_probe.py at the example's [B, S, 3, H, D] views and contiguous, then 07
#              eager and graphed (the eager run without the control) and its profile; logs in layout.tgz
#   walk       the persistent walk's GPU tests and the suite's f16, bf16, bmm and linear_bf16 families ->
#              suite_walk_h200.json
#   walk-rule  the walk rule at held-out shapes, 07 eager / graphed / pinned to one core and its profile
#   walk-f8    the fp8 walk's GPU tests and the suite's fp8 family -> suite_f8_h200.json
#   final      the whole GPU test suite, then 07 eager / graphed and its profile
#   fused-rule the fused attention backward at held-out shapes, the training attention's GPU tests, attention's walk
#   unmeasured the whole GPU test suite, then bench/small_m_probe.py --part nt (x @ W^T at 1 and 16 rows)
#   ftz        the whole GPU test suite (not with NO_TESTS=1), layer 2's transcendental family with its mutants
#              (exp2 with flush_to_zero), bench/ftz_ab.py (the attention kernels' fma + exp2 ftz against the
#              arithmetic before, SDPA beside); FUSED=1: bench/attention_fused_ab.py at the base shapes
#   ftz-rule   bench/attention_fused_ab.py at the held-out shapes alone, the suite's attention family (fresh file)
#   d128       bench/attention_fwd_configs.py (the forward at D 128 beside the rule), the training attention rows
#   scan       the one-pass scan's GPU tests and timing (vector_probe --only lookback)
#   halves     gemm's 3xtf32 from B's halves: its GPU tests and tileir.ops' products', the suite's 3xtf32
#              family (FAMILIES=linear_bf16 adds it) -> suite_halves.json (a fresh file: merge it, name the card)
#   nt-small   bench/persistent_probe.py --part nt-small: x @ W^T where the walk rule keeps one cell a block
#   stores     bench/split_b_probe.py (3xtf32 from B's halves), bench/persistent_probe.py --part stores: the
#              products with C written by its warps (no_tma_store) and one wave of cells at K 64-2048
#   k-major    3xtf32 from both operands' halves along K: its GPU tests, split_b_probe; the persistent probe's cells
#              (the 128 x 128 walk at 4 warps); the suite's attention family (fresh files: rename by the card)
#   stream-k-suite  stream-k, nt-small, the halves' GPU tests, the suite's 3xtf32 and linear_bf16 -> suite_stream_k.json
#   stream-k   tests/test_matmul_stream_k.py on the GPU, bench/stream_k_probe.py -> stream_k_h200.json (rename by card)
#   caller     07_training.py eager with each backward on the engine's device thread (torch's default) and on the
#              calling thread (--backward-on-caller, both models), two interleaved rounds, no control ->
#              training_curves_{engine,caller}{1,2}_h200.json (rename by the card)
#   linear     the GPU tests of tileir.ops' products, the suite's linear_bf16 family (x @ W^T: the narrow rows since
#              2026-12-07) and attention family (the causal D 128 short rule) -> suite_linear_attention_h200.json
#              (a fresh file, named for an H200: rename it by the card, merge it)
#   d128-rule  bench/attention_fwd_configs.py --held-out, the suite's attention family (fresh files, no card in the name)
#   train-attention  bench/training_device.py's attention rows (merge them into training_h200.json)
#   key-walk   the dK/dV walk's tiles without the refusals (bench/key_walk_check.py), the training attention's GPU
#              tests, 07 eager and graphed
#   walk-attention  attention's persistent walk (GPU tests, bench/attention_order_probe.py --walk), the suite's
#              linear_bf16 family, 07 eager / graphed and its profile
#   small-m    bench/small_m_probe.py: small-M products' flushed, GPU and host time (one pass, split-K),
#              cProfiles of the split call and prefix_sum -> small_m_h200.json
#   splits     the suite's product families (f16, bf16, tf32, 3xtf32) into suite_matmul_h200.json (a fresh
#              file: merge it), the training attention's gradient tests and the small-M split test on the GPU
#   narrow     bench/small_m_probe.py --part tiles (row tiles of 16 and 32 at 1-32 rows), the matmul GPU tests
#              of tileir.ops and the kernels, then the suite's f16, bf16 and tf32 products into
#              suite_matmul_h200.json (a fresh file: merge it)
#   nt         bench/small_m_probe.py --part nt: matmul_nt (x @ W.t()) at 1 and 16 rows on row tiles of 16
#              against the rule's -> small_m_nt_h200.json, rename by card (whether heuristics.NARROW_ROWS should reach it)
#   latency    the GPU tests of attention, then the suite's attention family into suite_attention_h200.json
#              (a fresh file: merge it): heuristics.LONG_D64_LATENCY
#   train-checks  the training attention's GPU tests, bench/norm_bwd_probe.py -> norm_bwd_hints_h200.json
#   changed    what a session changed, in one call: the GPU tests of the training kernels and tileir.ops,
#              the fused attention backward's A/B (short), 07_training.py's curves and tokens/s, the
#              launch overhead; logs and the PNG come back in changed.tgz
#   fused      attention's backward, three kernels against the fused one (bench/attention_fused_ab.py),
#              then hostpath's launch overhead and op host costs
#   vector     vector_probe.py's histogram / merge / scan / sums parts, then the suite's vector and row
#              families into suite_vector_rows_h200.json (a fresh file: merge it)
#   gaps       the suite's lowest rows' probes: small_m_probe --part thin, bmm_probe, vector_probe's vadd and
#              scansizes parts, autograd_host_cost --profile (a backward's host time); logs in gaps_logs.tgz
#   rules      after a rule change: the GPU tests of vadd and the products, bmm_probe --occupancy, the suite's
#              product, vadd, scan and bmm families -> suite_rules_h200.json (merge it)
#   order      attention_order_probe.py (heavy_first), small_m_probe --part thin-tk, the suite's scan family
#              alone and after the f16 products (fresh files)
#   headline   attention's GPU tests and suite family, the headline's vadd and attention rows, vadd's two forms
#   order-long attention_order_probe --long --rounds 3 (heavy_first at long causal shapes), the suite's vadd family
#   persistent the heavy_first GPU test, the persistent product's cases on the GPU, bench/persistent_probe.py
#   softmax    softmax's GPU tests, bench/softmax_math_probe.py (the arithmetic's four ways; --wide: 65536
#              lanes) and the suite's softmax family into suite_softmax_h200.json (a fresh file: merge it)
#   suite1..3  bench/suite.py, a third of the families each (resumes from bench/results/suite_h200.json:
#              commit the file between calls)
#
# Lessons from 2026-12-01: never `pkill -f` a word that is in this command line (it kills the call
# itself); a pytest cut by `timeout` prints no summary, so -v writes each result as it comes.
set -u
STEP=${1:?usage: bench/device_plan.sh k-major|stream-k-suite|stream-k|scan|linear|caller|ftz|ftz-rule|d128|d128-rule|unmeasured|train-attention|key-walk|fused-rule|walk-attention|nt|latency|narrow|layout|training-attention|small-m|splits|train-checks|graph|short|softmax|gaps|rules|order|headline|order-long|persistent|tests|speed|host|launch|examples|training|training-rows|matmul|campaign-suite|hostpath|fused|changed|vector|suite1|suite2|suite3}
OUT=${OUT:-bench/results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)  # absolute: some steps run from bench/
if [ ! -x /tmp/tc/bin/tileiras ] && [ -f .tc/tc.tar.xz ]; then tar -C /tmp -xJf .tc/tc.tar.xz; fi
[ -d /tmp/tc/bin ] && export PATH=/tmp/tc/bin:$PATH
unset CUDA_HOME CUDA_PATH CUDA_ROOT
if ls .whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 TILEIR_CACHE_DIR=${TILEIR_CACHE_DIR:-/tmp/tcache}

# 07_training.py eager (ARGS: e.g. --no-control) and graphed, then bench/training_profile.py: the graph and
# layout steps' common tail
gpu_suite() {  # the whole GPU test suite within $1 seconds -> gpu_tests.log, its summary lines
  timeout "$1" python3 -m pytest -m gpu -n 16 -v -p no:cacheprovider -p no:benchmark --timeout=110 -rfE tests/ \
    > "$OUT/gpu_tests.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests.log"
  grep -cE " PASSED " "$OUT/gpu_tests.log" | sed 's/^/passed: /'
  grep -E " FAILED |^FAILED|^ERROR| passed| failed|^rc=" "$OUT/gpu_tests.log" | tail -20
}

training_runs() {
  timeout 150 python3 examples/07_training.py --device cuda "$@" --out "$OUT/training_curves_h200.json" \
    > "$OUT/training_example.log" 2>&1
  tail -4 "$OUT/training_example.log"
  timeout 120 python3 examples/07_training.py --device cuda --graph --out "$OUT/training_curves_graph_h200.json" \
    > "$OUT/training_example_graph.log" 2>&1
  tail -4 "$OUT/training_example_graph.log"
  timeout 120 python3 bench/training_profile.py --out "$OUT/training_profile_h200.json" > "$OUT/training_profile.log" 2>&1
  grep -E "^tileir|^torch|attention" "$OUT/training_profile.log" | cut -c 1-300
}

case "$STEP" in
matmul)
  if [ -n "${PROBE:-}" ]; then
    timeout 110 python3 bench/matmul_probe.py --out "$OUT/matmul_probe_after_h200.json" --budget-s 90 > "$OUT/matmul_probe.log" 2>&1
    grep "^{'shape'" "$OUT/matmul_probe.log"
  fi
  timeout 120 python3 bench/host_bound.py --out "$OUT/host_bound_h200.json" > "$OUT/host_bound.log" 2>&1
  cat "$OUT/host_bound.log"
  timeout 300 python3 bench/suite.py --out "$OUT/suite_matmul_h200.json" --families matmul_f16,matmul_bf16,matmul_tf32,bmm \
    --budget-s 260 > "$OUT/suite_matmul.log" 2>&1
  tail -8 "$OUT/suite_matmul.log"
  timeout 150 python3 examples/07_training.py --device cuda --out "$OUT/training_curves_h200.json" > "$OUT/training_example.log" 2>&1
  tail -5 "$OUT/training_example.log"
  timeout 90 python3 bench/training_profile.py --out "$OUT/training_profile_h200.json" > "$OUT/training_profile.log" 2>&1
  tail -30 "$OUT/training_profile.log"
  # a call brings back at most 8 files: the figures, logs and curves in one archive
  (cd "$OUT" && tar -czf matmul_step.tgz ./*.png ./*.log training_curves_h200.json 2>/dev/null && rm -f ./*.png ./*.log training_curves_h200.json)
  ;;
campaign-suite)
  # the fuzzer's campaign 3 (generator 3, the workarounds of today: 10,000 programs from seed 1, shrinking
  # cut short), then the suite's row and matrix families again into a fresh file (merge it:
  # bench/suite.py --merge); the figures come back in suite_figures.tgz (a call brings back 8 files)
  timeout 300 python3 -m tileir.diff fuzz --programs 10000 --seed 1 --time-limit 220 --max-shrink 6 \
    --max-shrink-per-class 2 --shrink-s 20 --shrink-total-s 60 --out "$OUT/fuzz_campaign3_h200.json" \
    --repro-dir "$OUT/campaign3_repro" > "$OUT/campaign3.log" 2>&1
  tail -c 1500 "$OUT/campaign3.log"
  (cd "$OUT" && [ -d campaign3_repro ] && tar -czf campaign3_repro.tgz campaign3_repro && rm -rf campaign3_repro)
  timeout 240 python3 bench/suite.py --out "$OUT/suite_more_h200.json" --budget-s 200 \
    --families softmax,layernorm,rmsnorm,matmul_f16,matmul_bf16,matmul_tf32,bmm > "$OUT/suite_more.log" 2>&1
  grep -E '"(geomean|min|min_shape)"|^ "[a-z_0-9]+": \{' "$OUT/suite_more.log" | tail -30
  (cd "$OUT" && tar -czf suite_figures.tgz ./*.png ./*.log && rm -f ./*.png ./*.log)
  ;;
tests)
  gpu_suite 500
  ;;
speed)
  (cd bench && timeout 540 python3 h200.py --passes 3 --out "$OUT/h200.json" > "$OUT/h200.log" 2>&1)
  grep -o '"workload": "[^"]*", "unit": "[^"]*", "tileir": [0-9.]*\|"runtime_sizes_cost": [0-9.]*' "$OUT/h200.log"
  ;;
host)
  (cd bench && timeout 150 python3 exact_sizes.py --out "$OUT/exact_sizes_h200.json" | cut -c 1-220)
  timeout 60 python3 bench/checked_overhead.py --out "$OUT/checked_overhead_h200.json"
  timeout 60 python3 bench/launch_overhead.py --out "$OUT/launch_overhead_h200.json" | tail -c 600
  timeout 90 python3 bench/compile_model.py --out "$OUT/compile_model_h200.json" | tail -4
  ;;
launch)
  timeout 200 python3 -m pytest -m gpu -v -p no:cacheprovider -p no:benchmark --timeout=110 -rfE \
    tests/test_torch_runtime.py tests/test_launch_fast_path.py tests/test_device_kernels.py > "$OUT/gpu_runtime_tests.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_runtime_tests.log"
  grep -E " FAILED |^FAILED|^ERROR| passed| failed|^rc=" "$OUT/gpu_runtime_tests.log" | tail -12
  timeout 60 python3 bench/launch_overhead.py --out "$OUT/launch_overhead_h200.json" | tail -c 900
  (cd bench && timeout 240 python3 exact_sizes.py --rounds 5 --shapes 8192x8192,4096x4096 \
     --out "$OUT/exact_sizes_rounds_h200.json" | cut -c 1-400)
  ;;
examples)
  EXAMPLE_TIMEOUT_S=300 timeout 520 bash bench/examples_device.sh "$OUT/examples_h200.txt"
  grep -E "^## |^\(exit" "$OUT/examples_h200.txt"
  ;;
training)
  timeout 520 python3 bench/training_device.py --out "$OUT/training_h200.json" > "$OUT/training.log" 2>&1
  grep -E "fwd:|bwd:|wrote" "$OUT/training.log" | tail -40
  ;;
training-rows)
  timeout 200 python3 bench/training_device.py --ops softmax,layernorm,rmsnorm --out "$OUT/training_rows_h200.json" \
    > "$OUT/training_rows.log" 2>&1
  grep -E "fwd:|bwd:|wrote" "$OUT/training_rows.log" | tail -20
  ;;
training-attention)
  timeout 300 python3 bench/training_device.py --ops attention --out "$OUT/training_attention_h200.json" \
    > "$OUT/training_attention.log" 2>&1
  grep -E "fwd:|bwd:|wrote" "$OUT/training_attention.log" | tail -20
  ;;
graph)
  # the gate's GPU tests, 07_training.py eager and as one CUDA graph a step (both models), the gate's probe
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_torch_ops.py \
    tests/test_matmul_tn_split.py \
    > "$OUT/gpu_tests_graph.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_graph.log"
  grep -E "FAILED|^ERROR| passed| failed|^rc=" "$OUT/gpu_tests_graph.log" | tail -8
  training_runs
  timeout 120 python3 bench/tn_split_probe.py --out "$OUT/tn_split_h200.json" 2>&1 | cut -c 1-700
  (cd "$OUT" && tar -czf graph.tgz ./*.png ./*.log 2>/dev/null && rm -f ./*.png ./*.log)
  ;;
short)
  # where a step of 07 goes, the gate's second round of cells, then the training attention kernels at
  # short sequences by GPU time
  timeout 120 python3 bench/training_profile.py --out "$OUT/training_profile_h200.json" > "$OUT/training_profile.log" 2>&1
  grep -E "^tileir|^torch" "$OUT/training_profile.log" | cut -c 1-300
  timeout 100 python3 bench/swiglu_probe.py --out "$OUT/swiglu_h200.json" > "$OUT/swiglu.log" 2>&1
  tail -c 300 "$OUT/swiglu.log"
  timeout 330 python3 bench/attention_small_probe.py --out "$OUT/attention_small_h200.json" > "$OUT/att_small.log" 2>&1
  grep -E "^torch|^best" "$OUT/att_small.log" | cut -c 1-400; tail -c 300 "$OUT/att_small.log"
  (cd "$OUT" && tar -czf short.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
layout)
  # the training attention kernels (head dimension recorded) at the example's layout and the contiguous
  # one (the rule's tiles and the long-sequence ones), then 07 eager and graphed and its profile
  timeout 150 python3 bench/attention_small_probe.py --layout bshd --shapes 4 --configs 0,7 \
    --out "$OUT/attention_small_bshd_h200.json" > "$OUT/att_bshd.log" 2>&1
  grep -E "^\[|^torch" "$OUT/att_bshd.log" | cut -c 1-330; tail -c 300 "$OUT/att_bshd.log"
  timeout 100 python3 bench/attention_small_probe.py --layout bhsd --shapes 4 --configs 0,7 \
    --out "$OUT/attention_small_bhsd_h200.json" > "$OUT/att_bhsd.log" 2>&1
  grep -E "^\[" "$OUT/att_bhsd.log" | cut -c 1-330
  training_runs --no-control
  (cd "$OUT" && tar -czf layout.tgz ./*.png ./*.log 2>/dev/null && rm -f ./*.png ./*.log)
  ;;
small-m)
  # small-M products: flushed, GPU-only and host time of gemm, one pass and split-K; cProfiles of the
  # split call's and prefix_sum's host path
  timeout 570 python3 bench/small_m_probe.py --out "$OUT/small_m_h200.json" --budget-s 480 > "$OUT/small_m.log" 2>&1
  grep -v '^{' "$OUT/small_m.log" | cut -c 1-200 | head -120
  (cd "$OUT" && tar -czf small_m.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
splits)
  # the small-M split rule and the unaligned rows' K slice (heuristics): the suite's product families into
  # a fresh file (merge it: bench/suite.py --merge; every record checks its answer, the split path's too),
  # the training attention's gradient tests (the head dimension recorded) and the small-M split test on the GPU
  timeout 370 python3 bench/suite.py --out "$OUT/suite_matmul_h200.json" \
    --families matmul_f16,matmul_bf16,matmul_tf32,matmul_3xtf32 --budget-s 320 > "$OUT/suite_matmul.log" 2>&1
  tail -30 "$OUT/suite_matmul.log" | grep -E '"(geomean|min|min_shape)"|^ "' | cut -c 1-200
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_backward.py tests/test_torch_ops_matmul.py \
    -k "attention_backward_on_the_gpu or small_m_products_split" > "$OUT/gpu_tests_attention.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_attention.log"; tail -3 "$OUT/gpu_tests_attention.log"
  # why one pass at 1-16 rows runs at half the speed of 64 rows on the same cubin (small_m_h200.json)
  timeout 60 python3 bench/small_m_probe.py --part padded --out "$OUT/small_m_padded_h200.json" 2>&1 | cut -c 1-220
  (cd "$OUT" && tar -czf splits.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
narrow)
  # heuristics.NARROW_ROWS: products of at most 16 rows on row tiles of 16
  if [ -n "${PROBE:-}" ]; then
    timeout 200 python3 bench/small_m_probe.py --part tiles --out "$OUT/small_m_tiles_h200.json" > "$OUT/tiles.log" 2>&1
  fi
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_torch_ops_matmul.py tests/test_any_size.py -k "matmul or gemm or product" \
    > "$OUT/gpu_tests_matmul.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_matmul.log"; tail -3 "$OUT/gpu_tests_matmul.log"
  timeout 300 python3 bench/suite.py --out "$OUT/suite_matmul_h200.json" \
    --families matmul_f16,matmul_bf16,matmul_tf32 --budget-s 260 > "$OUT/suite_matmul.log" 2>&1
  tail -30 "$OUT/suite_matmul.log" | grep -E '"(geomean|min|min_shape)"|^ "' | cut -c 1-200
  (cd "$OUT" && tar -czf narrow.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
nt)
  timeout 200 python3 bench/small_m_probe.py --part nt --out "$OUT/small_m_nt_h200.json" 2>&1 | grep '"part"' | cut -c 1-230
  ;;
latency)
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_device_kernels.py tests/test_torch_ops.py \
    -k attention > "$OUT/gpu_tests_attention.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_attention.log"; tail -3 "$OUT/gpu_tests_attention.log"
  timeout 330 python3 bench/suite.py --out "$OUT/suite_attention_h200.json" --families attention --budget-s 300 \
    > "$OUT/suite_attention.log" 2>&1
  tail -12 "$OUT/suite_attention.log" | grep -E '"(geomean|min|min_shape)"' | cut -c 1-200
  (cd "$OUT" && tar -czf latency.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
train-checks)
  # the training attention's GPU gradient tests (the head dimension recorded), then the norms' backward
  # by entry hints (bench/norm_bwd_probe.py)
  timeout 260 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_backward.py tests/test_torch_ops.py \
    -k "attention" > "$OUT/gpu_tests_attention.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_attention.log"; tail -4 "$OUT/gpu_tests_attention.log"
  timeout 280 python3 bench/norm_bwd_probe.py --out "$OUT/norm_bwd_hints_h200.json" > "$OUT/norm_bwd.log" 2>&1
  grep -v '^{' "$OUT/norm_bwd.log" | tail -8 | cut -c 1-250
  (cd "$OUT" && tar -czf train_checks.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
changed)
  timeout 170 python3 -m pytest -m gpu -n 12 -q -p no:cacheprovider -p no:benchmark --timeout=100 -rfE \
    tests/test_backward.py tests/test_torch_ops.py tests/test_torch_ops_matmul.py tests/test_torch_op.py \
    > "$OUT/gpu_tests_changed.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_changed.log"
  grep -E "FAILED|^ERROR| passed| failed|^rc=" "$OUT/gpu_tests_changed.log" | tail -15
  timeout 170 python3 bench/attention_fused_ab.py --budget-s 90 --out "$OUT/attention_fused_ab_h200.json" > "$OUT/fused.log" 2>&1
  grep -E "^[0-9]" "$OUT/fused.log" | cut -c 1-200; tail -c 600 "$OUT/fused.log"
  timeout 150 python3 examples/07_training.py --device cuda --no-control --out "$OUT/training_curves_h200.json" \
    > "$OUT/training_example.log" 2>&1
  tail -3 "$OUT/training_example.log"
  timeout 45 python3 bench/launch_overhead.py --out "$OUT/launch_overhead_h200.json" | tail -c 500
  (cd "$OUT" && tar -czf changed.tgz ./*.png ./*.log 2>/dev/null && rm -f ./*.png ./*.log)
  ;;
fused)
  timeout 300 python3 bench/attention_fused_ab.py --budget-s 200 --out "$OUT/attention_fused_ab_h200.json" > "$OUT/fused.log" 2>&1
  grep -E "^[0-9]" "$OUT/fused.log" | cut -c 1-230; tail -c 1500 "$OUT/fused.log"
  timeout 60 python3 bench/launch_overhead.py --out "$OUT/launch_overhead_h200.json" | tail -c 700
  timeout 120 python3 bench/op_host_cost.py --out "$OUT/op_host_cost_h200.json" > "$OUT/op_host_cost.log" 2>&1
  grep -E " us  " "$OUT/op_host_cost.log"
  (cd "$OUT" && tar -czf fused.tgz ./*.log && rm -f ./*.log)
  ;;
hostpath)
  timeout 60 python3 bench/launch_overhead.py --out "$OUT/launch_overhead_h200.json" | tail -c 900
  timeout 90 python3 bench/op_host_cost.py --out "$OUT/op_host_cost_h200.json" > "$OUT/op_host_cost.log" 2>&1
  grep -E " us  " "$OUT/op_host_cost.log"
  timeout 200 python3 examples/07_training.py --device cuda --out "$OUT/training_curves_h200.json" > "$OUT/training_example.log" 2>&1
  tail -3 "$OUT/training_example.log"
  timeout 100 python3 bench/training_profile.py --out "$OUT/training_profile_h200.json" > "$OUT/training_profile.log" 2>&1
  grep -E "^(tileir|torch) " "$OUT/training_profile.log"
  (cd "$OUT" && tar -czf hostpath.tgz ./*.png ./*.log 2>/dev/null && rm -f ./*.png ./*.log)
  ;;
suite1|suite2|suite3)
  fams=$(python3 - "$STEP" <<'EOF'
import sys
sys.path.insert(0, "bench")
from suite import FAMILIES
k = int(sys.argv[1][-1]) - 1
print(",".join(FAMILIES[k::3]))
EOF
)
  timeout 530 python3 bench/suite.py --out bench/results/suite_h200.json --families "$fams" --budget-s 420
  cp bench/results/suite_h200.json "$OUT/"
  for f in ${fams//,/ }; do cp "bench/results/suite_h200_$f.png" "$OUT/" 2> /dev/null; done
  ;;
vector)
  # the vector and row families as 2026-12-02 afternoon measured them: the probes, then the suite's
  # families into a fresh file (merge it into suite_h200.json with bench/suite.py --merge)
  (cd bench && timeout 150 python3 vector_probe.py --only histogram,merge,scan,sums --out "$OUT/vector_probe_run.json" \
    > "$OUT/vector_probe.log" 2>&1)
  tail -3 "$OUT/vector_probe.log" | cut -c1-300
  timeout 330 python3 bench/suite.py --out "$OUT/suite_vector_rows_h200.json" \
    --families vadd,sum,max,scan,histogram,softmax,layernorm,rmsnorm --budget-s 300 > "$OUT/suite_vector_rows.log" 2>&1
  tail -40 "$OUT/suite_vector_rows.log" | grep -E '"(geomean|min|min_shape)"|^ "'
  ;;
gaps)
  # the suite's lowest rows' probes in one call: tf32 / f16 products at 1 and 16 rows on 32-, 64- and
  # 128-wide column tiles, bmm's cells on held-in and held-out shapes, vadd on cells against pointers and
  # the scan's two half-speed sizes, then where a training backward's host time goes
  timeout 150 python3 bench/small_m_probe.py --part thin --out "$OUT/small_m_thin_h200.json" > "$OUT/thin.log" 2>&1
  grep -v '^{' "$OUT/thin.log" | tail -5; echo "thin rows: $(grep -c '^{' "$OUT/thin.log")"
  timeout 170 python3 bench/bmm_probe.py --out "$OUT/bmm_tiles_h200.json" > "$OUT/bmm.log" 2>&1
  grep -v '^{' "$OUT/bmm.log" | tail -5; echo "bmm rows: $(grep -c '^{' "$OUT/bmm.log")"
  (cd bench && timeout 100 python3 vector_probe.py --only vadd,scansizes --out "$OUT/vector_gaps_h200.json" \
    > "$OUT/vector_gaps.log" 2>&1)
  tail -2 "$OUT/vector_gaps.log" | cut -c1-300
  timeout 80 python3 bench/autograd_host_cost.py --out "$OUT/autograd_host_cost_h200.json" \
    --profile "$OUT/backward_profile_h200.txt" > "$OUT/autograd.log" 2>&1
  head -12 "$OUT/autograd.log"
  (cd "$OUT" && tar -czf gaps_logs.tgz ./*.log && rm -f ./*.log)
  ;;
rules)
  # after a rule change from the gaps step: the GPU tests of the kernels it touches, bmm's cells at two
  # blocks an SM, then the suite's product and vector families it moves into suite_rules_h200.json (a fresh
  # file: merge it)
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_device_kernels.py \
    tests/test_torch_ops_matmul.py tests/test_any_size.py -k "vadd or matmul or small or narrow" > "$OUT/rules_tests.log" 2>&1
  tail -3 "$OUT/rules_tests.log"
  timeout 150 python3 bench/bmm_probe.py --occupancy --out "$OUT/bmm_occupancy_h200.json" > "$OUT/bmm_occ.log" 2>&1
  echo "bmm rows: $(grep -c '^{' "$OUT/bmm_occ.log")"
  timeout 280 python3 bench/suite.py --out "$OUT/suite_rules_h200.json" --budget-s 240 \
    --families matmul_f16,matmul_bf16,matmul_tf32,vadd,scan,bmm > "$OUT/suite_rules.log" 2>&1
  tail -40 "$OUT/suite_rules.log" | grep -E '"(geomean|min|min_shape)"|^ "'
  (cd "$OUT" && tar -czf rules_logs.tgz ./*.log ./*.png && rm -f ./*.log ./*.png)
  ;;
order)
  # attention's block order (heavy_first) on the suite's shapes, the narrow products' K slices, the scan
  # family alone and after the f16 products (host time recorded: whether its mid sizes are host-bound)
  timeout 200 python3 bench/attention_order_probe.py --out "$OUT/attention_order_h200.json" > "$OUT/order.log" 2>&1
  echo "order rows: $(grep -c '^{' "$OUT/order.log")"; grep -v '^{' "$OUT/order.log" | tail -3
  timeout 150 python3 bench/small_m_probe.py --part thin-tk --out "$OUT/small_m_thin_tk_h200.json" > "$OUT/thin_tk.log" 2>&1
  echo "thin-tk rows: $(grep -c '^{' "$OUT/thin_tk.log")"; grep -v '^{' "$OUT/thin_tk.log" | tail -3
  timeout 100 python3 bench/suite.py --out "$OUT/suite_scan_alone_h200.json" --families scan --budget-s 80 \
    > "$OUT/scan_alone.log" 2>&1
  timeout 150 python3 bench/suite.py --out "$OUT/suite_scan_after_h200.json" --families matmul_f16,scan \
    --budget-s 120 > "$OUT/scan_after.log" 2>&1
  (cd "$OUT" && tar -czf order_logs.tgz ./*.log ./*.png && rm -f ./*.log ./*.png)
  ;;
headline)
  # after the block order reached the table's causal d 128 entry: attention's GPU tests, the suite's
  # attention family (fresh file: merge it), the headline's vadd and attention rows (3 passes), vadd on
  # cells against pointers to 2^28
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_device_kernels.py tests/test_torch_ops.py \
    -k attention > "$OUT/gpu_tests_attention.log" 2>&1; tail -1 "$OUT/gpu_tests_attention.log"
  timeout 200 python3 bench/suite.py --out "$OUT/suite_attention.json" --families attention --budget-s 170 \
    > "$OUT/suite_attention.log" 2>&1
  tail -12 "$OUT/suite_attention.log" | grep -E '"(geomean|min|min_shape)"' | cut -c 1-200
  (cd bench && timeout 200 python3 h200.py --passes 3 --out "$OUT/h200_changed_h200.json" \
    --workloads 'vadd_f32_2^28,fmha_f16_b4h32s4096d128,fmha_f16_causal_b4h32s4096d128' > "$OUT/h200_changed.log" 2>&1)
  grep -o '"workload": "[^"]*", "unit": "[^"]*", "tileir": [0-9.]*, "tileir_ms": [0-9.]*, "torch": [0-9.]*' \
    "$OUT/h200_changed.log"
  (cd bench && timeout 120 python3 vector_probe.py --only vadd --out "$OUT/vadd_forms_h200.json" > "$OUT/vadd.log" 2>&1)
  tail -1 "$OUT/vadd.log" | cut -c 1-300
  (cd "$OUT" && tar -czf headline_logs.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
order-long)
  # heavy_first against the default order at the causal shapes the rule gives it and the headline's,
  # interleaved, three rounds; then the suite's vadd family at the 1024-lane tile (fresh file: merge it)
  timeout 300 python3 bench/attention_order_probe.py --long --rounds 3 --out "$OUT/attention_order_long_h200.json" \
    > "$OUT/order_long.log" 2>&1
  echo "rows: $(grep -c '^{' "$OUT/order_long.log")"; grep -v '^{' "$OUT/order_long.log" | tail -3
  timeout 100 python3 bench/suite.py --out "$OUT/suite_vadd_h200.json" --families vadd --budget-s 80 > "$OUT/vadd.log" 2>&1
  tail -12 "$OUT/vadd.log" | grep -E '"(geomean|min|min_shape)"'
  (cd "$OUT" && tar -czf order_long_logs.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
persistent)
  # the GPU tests this session could not run (heavy_first, the persistent product's cases), then the
  # persistent product against the one-cell call and torch (bench/persistent_probe.py)
  timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_device_kernels.py -k "heavy or attention" \
    > "$OUT/gpu_tests_persistent.log" 2>&1
  timeout 80 python3 -c 'from tileir.cli import run_case; from tileir.kernels import CASES
for name, sizes in (("matmul_persistent_f16", ((200, 136, 300), (1000, 5000, 1000))),
                    ("matmul_persistent_bf16", ((130, 70, 100),)),
                    ("bmm_persistent_f16", ((3, 100, 70, 65), (16, 512, 512, 512)))):
    for size in sizes:
        print(name, size, run_case(CASES[name], size, "device", seed=3))' >> "$OUT/gpu_tests_persistent.log" 2>&1
  tail -6 "$OUT/gpu_tests_persistent.log"
  timeout 280 python3 bench/persistent_probe.py --out "$OUT/persistent_h200.json" > "$OUT/persistent.log" 2>&1
  echo "rows: $(grep -c '^{' "$OUT/persistent.log")"; grep -v '^{' "$OUT/persistent.log" | tail -3
  (cd "$OUT" && tar -czf persistent_logs.tgz ./*.log && rm -f ./*.log)
  ;;
walk)
  # heuristics.matmul_walk / bmm_walk: the walk's GPU tests, then the suite's f16, bf16 and bmm families into
  # a fresh file (merge it: bench/suite.py --merge)
  timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_torch_ops_matmul.py tests/test_device_kernels.py \
    -k "walk or persistent or bmm" > "$OUT/gpu_tests_walk.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_walk.log"; tail -3 "$OUT/gpu_tests_walk.log"
  timeout 380 python3 bench/suite.py --out "$OUT/suite_walk_h200.json" \
    --families matmul_f16,matmul_bf16,bmm,linear_bf16 --budget-s 340 > "$OUT/suite_walk.log" 2>&1
  tail -30 "$OUT/suite_walk.log" | grep -E '"(geomean|min|min_shape)"|^ "' | cut -c 1-200
  (cd "$OUT" && tar -czf walk.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
walk-rule)
  # the walk rule at shapes it was not fitted on (bench/persistent_probe.py --part rule), then 07 eager and
  # graphed, its profile (the forward products now walk), and 07 eager pinned to one core (taskset -c 5: where the
  # host's cross-core hand-offs go, bench/results/autograd_thread_profile_h200.txt)
  timeout 150 python3 bench/persistent_probe.py --part rule --out "$OUT/persistent_rule_h200.json" > "$OUT/persistent_rule.log" 2>&1
  echo "rows: $(grep -c '^{' "$OUT/persistent_rule.log")"; grep -v '^{' "$OUT/persistent_rule.log" | tail -3
  training_runs --no-control
  timeout 150 taskset -c 5 python3 examples/07_training.py --device cuda --no-control \
    --out "$OUT/training_curves_pinned_h200.json" > "$OUT/training_example_pinned.log" 2>&1
  tail -3 "$OUT/training_example_pinned.log"
  (cd "$OUT" && tar -czf walk_rule.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
walk-f8)
  # heuristics.F8_WALKS: the fp8 GPU tests, then the suite's fp8 family into a fresh file (merge it)
  timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_torch_ops_matmul.py tests/test_device_kernels.py \
    -k "f8 or scaled_mm" > "$OUT/gpu_tests_f8.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_f8.log"; tail -3 "$OUT/gpu_tests_f8.log"
  timeout 300 python3 bench/suite.py --out "$OUT/suite_f8_h200.json" --families matmul_fp8 --budget-s 260 \
    > "$OUT/suite_f8.log" 2>&1
  tail -30 "$OUT/suite_f8.log" | grep -E '"(geomean|min|min_shape)"|^ "' | cut -c 1-200
  (cd "$OUT" && tar -czf walk_f8.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
final)
  # the whole GPU test suite, then 07 eager and graphed and its profile
  gpu_suite 400
  training_runs --no-control
  (cd "$OUT" && tar -czf final.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
fused-rule)
  # the fused backward's rule at held-out shapes (bench/attention_fused_ab.py --held-out: the three kernels,
  # three fused configurations, SDPA, the fused path's parts), the training attention's GPU tests (both
  # backwards), then attention's persistent walk against the rule (bench/attention_order_probe.py --walk)
  timeout 320 python3 bench/attention_fused_ab.py --held-out --budget-s 260 --out "$OUT/attention_fused_rule_h200.json" \
    > "$OUT/fused.log" 2>&1
  grep -E "^[0-9]" "$OUT/fused.log" | cut -c 1-200; tail -c 300 "$OUT/fused.log"
  timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_backward.py tests/test_torch_ops.py \
    -k "attention" > "$OUT/gpu_tests_fused.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_fused.log"; tail -3 "$OUT/gpu_tests_fused.log"
  timeout 170 python3 bench/attention_order_probe.py --walk --out "$OUT/attention_walk_h200.json" > "$OUT/attention_walk.log" 2>&1
  echo "rows: $(grep -c '^{' "$OUT/attention_walk.log")"; grep -v '^{' "$OUT/attention_walk.log" | tail -3
  (cd "$OUT" && tar -czf fused_rule.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
ftz)
  [ -n "${NO_TESTS:-}" ] || gpu_suite 300
  timeout 60 python3 -m tileir.diff run --families transcendental --mutants --out "$OUT/diff_transcendental.json" \
    2>&1 | tail -4
  timeout 200 python3 bench/ftz_ab.py --out "$OUT/ftz_ab.json" > "$OUT/ftz_ab.log" 2>&1
  grep -o "'shape': [^]]*], 'causal': [A-Za-z]*\|'vs_sdpa': {[^}]*}, 'speedup': [0-9.]*\|'library_vs_sdpa': [0-9.]*, 'fused_speedup': [0-9.]*" \
    "$OUT/ftz_ab.log" | paste - - | cut -c 1-200
  tail -2 "$OUT/ftz_ab.log"
  if [ -n "${FUSED:-}" ]; then  # the fused backward's variants at the base shapes (latency, t_views, heavy_first)
    timeout 240 python3 bench/attention_fused_ab.py --budget-s 200 --out "$OUT/attention_fused_variants.json" \
      > "$OUT/fused.log" 2>&1
    grep -E "^[0-9]" "$OUT/fused.log" | cut -c 1-200
  fi
  (cd "$OUT" && tar -czf ftz_logs.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
ftz-rule)
  # the fused backward's latency at D 128 without the mask at the held-out shapes (and the rest of the rule
  # there), then the suite's attention family into a fresh file (exp2 with flush_to_zero in the forward)
  timeout 290 python3 bench/attention_fused_ab.py --shapes 0 --held-out --budget-s 250 \
    --out "$OUT/attention_fused_rule.json" > "$OUT/fused.log" 2>&1
  grep -E "^[0-9]" "$OUT/fused.log" | cut -c 1-150
  timeout 200 python3 bench/suite.py --out "$OUT/suite_attention.json" --families attention --budget-s 170 \
    > "$OUT/suite_attention.log" 2>&1
  tail -30 "$OUT/suite_attention.log" | grep -E '"(geomean|min|min_shape)"'
  (cd "$OUT" && tar -czf ftz_rule_logs.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
d128)
  # the forward's configurations at head dim 128 (bench/attention_fwd_configs.py), then the training attention
  # rows, quick (the fused backward's latency rule; exp2 with flush_to_zero)
  timeout 200 python3 bench/attention_fwd_configs.py --out "$OUT/attention_fwd_configs.json" 2>&1 | cut -c 1-260
  timeout 330 python3 bench/training_device.py --ops attention --quick --out "$OUT/training_attention.json" \
    > "$OUT/training_attention.log" 2>&1
  grep -E "fwd:|bwd:|wrote" "$OUT/training_attention.log" | tail -20
  (cd "$OUT" && tar -czf d128_logs.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
d128-rule)
  # the forward's 64-row blocks at D 128 without the mask (heuristics.HALF_ROWS_WARPS) at held-out shapes, then
  # the suite's attention family into a fresh file
  timeout 110 python3 bench/attention_fwd_configs.py --held-out --out "$OUT/attention_fwd_held_out.json" 2>&1 | cut -c 1-220
  timeout 140 python3 bench/suite.py --out "$OUT/suite_attention.json" --families attention --budget-s 100 \
    > "$OUT/suite_attention.log" 2>&1
  tail -30 "$OUT/suite_attention.log" | grep -E '"(geomean|min|min_shape)"'
  (cd "$OUT" && rm -f ./*.png ./*.log)
  ;;
scan)
  # the one-pass scan's GPU tests and its timing alone (~200 s)
  timeout 60 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark --timeout=50 -rfE tests/test_scan_lookback.py \
    2>&1 | tail -3
  (cd bench && timeout 130 python3 vector_probe.py --only lookback --out "$OUT/scan_lookback.json" 2>&1 | cut -c 1-600)
  ;;
halves)
  # gemm's 3xtf32 from B's halves on the GPU and the suite's 3xtf32 family (~150 s; FAMILIES= adds others)
  timeout 90 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfE tests/test_matmul_3xtf32.py \
    tests/test_torch_ops_matmul.py 2>&1 | tail -2
  timeout 500 python3 bench/suite.py --out "$OUT/suite_halves.json" --families "matmul_3xtf32${FAMILIES:+,$FAMILIES}" \
    --budget-s 440 > "$OUT/suite_halves.log" 2>&1
  tail -8 "$OUT/suite_halves.log" | cut -c 1-300
  (cd "$OUT" && rm -f ./*.png)
  ;;
stream-k)
  # the stream-K product's GPU tests (25 calls a shape, slots poisoned, answers bit for bit) and its probe
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfE tests/test_matmul_stream_k.py 2>&1 | tail -3
  timeout 150 python3 bench/stream_k_probe.py --out "$OUT/stream_k_h200.json" > "$OUT/stream_k.log" 2>&1
  grep -v '"round": 1' "$OUT/stream_k.log" | cut -c 1-220 | tail -60
  ;;
k-major)
  # 3xtf32 with both operands' halves along K (product_3xtf32(k_major=True)): its GPU tests (the tensor cores'
  # accumulator against torch's f32 error), bench/split_b_probe.py beside the B-halves form and torch, then the
  # suite's attention family into a fresh file (rename both by the card)
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfE tests/test_matmul_3xtf32.py 2>&1 | tail -4
  timeout 200 python3 bench/split_b_probe.py --out "$OUT/split_b_k_major_h200.json" 2>&1 | python3 -c "import sys, json
for ln in sys.stdin:
    if ln.startswith('{'):
        r = json.loads(ln); print(r['shape'], r['variant'][:42], r.get('ms'), r.get('x_torch_f32'), r.get('err_u'),
                                  r.get('error', '')[:160])
    else:
        print(ln.rstrip()[:300])"
  # the persistent walk's cells (the 128 x 128 walk at 4 warps: its HGMMAs stay in flight, at 8 they wait)
  timeout 130 python3 bench/persistent_probe.py --out "$OUT/persistent_w4_h200.json" 2>&1 | python3 -c "import sys, json
for ln in sys.stdin:
    if ln.startswith('{'):
        r = json.loads(ln); print(r['shape'], r['variant'][:34], r.get('ratio'), r.get('ok'))"
  timeout 200 python3 bench/suite.py --out "$OUT/suite_attention.json" --families attention --budget-s 170 \
    > "$OUT/suite_attention.log" 2>&1
  tail -30 "$OUT/suite_attention.log" | grep -E '"(geomean|min|min_shape)"'
  (cd "$OUT" && rm -f ./*.png)
  ;;
stream-k-suite)
  # everything pending at once (2026-12-08), most wanted first: the suite's 3xtf32 and linear_bf16 families, the
  # 3xtf32 halves' GPU tests, stream-K's probe (its GPU tests: STREAM_K_TESTS=1), the nt-small probe (NT_SMALL=1)
  timeout 170 python3 bench/suite.py --out "$OUT/suite_stream_k.json" \
    --families matmul_3xtf32,linear_bf16 --budget-s 130 > "$OUT/suite_stream_k.log" 2>&1
  tail -8 "$OUT/suite_stream_k.log" | cut -c 1-300
  (cd "$OUT" && rm -f ./*.png)
  timeout 80 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfE tests/test_matmul_3xtf32.py \
    tests/test_torch_ops_matmul.py 2>&1 | tail -2
  if [ -n "${STREAM_K_TESTS:-}" ]; then bash bench/device_plan.sh stream-k; else
    timeout 120 python3 bench/stream_k_probe.py --out "$OUT/stream_k_h200.json" 2>&1 | cut -c 1-220 | tail -40; fi
  if [ -n "${NT_SMALL:-}" ]; then
    timeout 120 python3 bench/persistent_probe.py --part nt-small --out "$OUT/nt_small_h200.json" 2>&1 | tail -12 | cut -c 1-200
  fi
  ;;
nt-small)
  timeout 200 python3 bench/persistent_probe.py --part nt-small --out "$OUT/nt_small_h200.json" 2>&1 | tail -30 | \
    cut -c 1-200
  ;;
stores)
  # 3xtf32 from B's halves against the library's one kernel and torch f32 (~60 s)
  timeout 120 python3 bench/split_b_probe.py --out "$OUT/split_b_h200.json" 2>&1 | cut -c 1-300
  # the products with C written by the warps that hold it (no_tma_store) against the TMA store (~150 s);
  # the files are named _h200: rename them by the card that ran them
  timeout 200 python3 bench/persistent_probe.py --part stores --out "$OUT/store_probe_h200.json" 2>&1 | \
    python3 -c "import sys, json
for ln in sys.stdin:
    if ln.startswith('{'):
        r = json.loads(ln); print(r['shape'], r['variant'], round(r.get('ratio', 0), 3), r.get('ok'))
    else:
        print(ln.rstrip()[:300])"
  ;;
caller)
  for round in 1 2; do
    for how in engine caller; do
      flag=""; [ "$how" = caller ] && flag="--backward-on-caller"
      timeout 140 python3 examples/07_training.py --device cuda --no-control $flag \
        --out "$OUT/training_curves_${how}${round}_h200.json" > "$OUT/training_${how}${round}.log" 2>&1
      echo "$how $round: $(grep -o 'tokens/s tileir / torch [0-9.]*' "$OUT/training_${how}${round}.log")"
    done
  done
  (cd "$OUT" && rm -f ./*.png)
  ;;
linear)
  timeout 90 python3 -m pytest -m gpu -q -p no:cacheprovider -p no:benchmark -rfE tests/test_torch_ops_matmul.py 2>&1 | tail -2
  timeout 480 python3 bench/suite.py --out "$OUT/suite_linear_attention_h200.json" --families linear_bf16,attention \
    --budget-s 440 > "$OUT/suite_linear_attention.log" 2>&1
  tail -4 "$OUT/suite_linear_attention.log"
  ;;
unmeasured)
  # what the last session could not run: the whole GPU test suite (the fused backward by rule, the refused key
  # walks, the training forward's tiles), then bench/small_m_probe.py --part nt (whether heuristics.NARROW_ROWS
  # should reach x @ W^T: linear_bf16's minimum, 0.66x at 1 x 4096 x 11008)
  gpu_suite 330
  bash bench/device_plan.sh nt
  ;;
train-attention)
  # bench/training_device.py's attention rows (the library's backward: the rule's kernels) -> merge them
  timeout 220 python3 bench/training_device.py --ops attention --out "$OUT/training_attention_h200.json" \
    > "$OUT/training_attention.log" 2>&1
  grep -E "fwd:|bwd:|wrote" "$OUT/training_attention.log" | tail -20
  (cd "$OUT" && tar -czf train_attention.tgz ./*.log 2>/dev/null && rm -f ./*.log)
  ;;
key-walk)
  # the dK/dV walk's tiles on the GPU without the kernels' refusals (bench/key_walk_check.py), the training
  # attention's GPU tests (both backwards), 07 eager and graphed (the x @ W^T walk in its step)
  timeout 200 python3 bench/key_walk_check.py --out "$OUT/key_walk_h200.json" > "$OUT/key_walk.log" 2>&1
  echo "key walk rows: $(grep -c '^{' "$OUT/key_walk.log")"; grep '"ok": false' "$OUT/key_walk.log" | cut -c 1-260
  grep -v '^{' "$OUT/key_walk.log" | tail -3
  timeout 200 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider -rfE tests/test_backward.py tests/test_torch_ops.py \
    -k "attention" > "$OUT/gpu_tests_fused.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_fused.log"; tail -4 "$OUT/gpu_tests_fused.log"
  timeout 150 python3 examples/07_training.py --device cuda --no-control --out "$OUT/training_curves_h200.json" \
    > "$OUT/training_example.log" 2>&1
  tail -4 "$OUT/training_example.log"
  timeout 120 python3 examples/07_training.py --device cuda --graph --out "$OUT/training_curves_graph_h200.json" \
    > "$OUT/training_example_graph.log" 2>&1
  tail -4 "$OUT/training_example_graph.log"
  (cd "$OUT" && tar -czf key_walk.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
walk-attention)
  # attention's programs (a persistent walk of the blocks of O, the heaviest first): its GPU tests, then the
  # rule's configuration against the walk on the suite's attention shapes (bench/attention_order_probe.py --walk),
  # and the whole suite's new linear_bf16 family (x @ W^T) into a fresh file (merge it)
  timeout 100 python3 -m pytest -m gpu -q -p no:cacheprovider -rfE tests/test_device_kernels.py tests/test_torch_ops_matmul.py \
    -k "attention_walked or walks_on_the_gpu or scaled_mm_on" > "$OUT/gpu_tests_walk_attention.log" 2>&1
  echo "rc=$?" >> "$OUT/gpu_tests_walk_attention.log"; tail -3 "$OUT/gpu_tests_walk_attention.log"
  timeout 240 python3 bench/attention_order_probe.py --walk --out "$OUT/attention_walk_h200.json" > "$OUT/attention_walk.log" 2>&1
  echo "rows: $(grep -c '^{' "$OUT/attention_walk.log")"; grep -v '^{' "$OUT/attention_walk.log" | tail -3
  timeout 150 python3 bench/suite.py --out "$OUT/suite_linear_h200.json" --families linear_bf16 --budget-s 120 \
    > "$OUT/suite_linear.log" 2>&1
  tail -30 "$OUT/suite_linear.log" | grep -E '"(geomean|min|min_shape)"|^ "' | cut -c 1-200
  training_runs --no-control  # 07 with every x @ W^T of the step walking past 1.5 waves (any K)
  (cd "$OUT" && tar -czf walk_attention.tgz ./*.log ./*.png 2>/dev/null && rm -f ./*.log ./*.png)
  ;;
softmax)
  timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/test_device_kernels.py tests/test_torch_ops.py \
    tests/test_any_size.py tests/test_kernels_host.py -k softmax 2>&1 | tail -3
  (cd bench && timeout 90 python3 softmax_math_probe.py --out "$OUT/softmax_math_h200.json" > "$OUT/softmax_probe.log" 2>&1
   timeout 90 python3 softmax_math_probe.py --wide --out "$OUT/softmax_wide_h200.json" >> "$OUT/softmax_probe.log" 2>&1)
  python3 bench/softmax_math_probe.py --summary "$OUT/softmax_math_h200.json" "$OUT/softmax_wide_h200.json"
  timeout 300 python3 bench/suite.py --out "$OUT/suite_softmax_h200.json" --families softmax --budget-s 270 \
    > "$OUT/suite_softmax.log" 2>&1
  tail -30 "$OUT/suite_softmax.log" | grep -E '"(geomean|min|min_shape)"|^ "'
  ;;
*)
  echo "unknown step $STEP" >&2
  exit 2
  ;;
esac
