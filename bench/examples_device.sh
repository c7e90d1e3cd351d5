#!/usr/bin/env bash
# Every example on the GPU, its output into one file: the figures the tutorials (docs/tutorials/)
# quote for the GPU. On the GPU machine, the toolchain unpacked (README, "Developers"):
#
#   tar -C /tmp -xJf .tc/tc.tar.xz && export PATH=/tmp/tc/bin:$PATH && unset CUDA_HOME
#   bash bench/examples_device.sh                 # -> bench/results/examples_h200.txt
#   bash bench/examples_device.sh OUT.txt         # elsewhere
#
# The tutorials (01-06) run with --device; 07_training.py with its own defaults on CUDA (its
# curves printed, and written beside OUT.txt as training_curves_h200.json and .png); distributed_matmul.py under
# torchrun on two GPUs when there are two. A script that fails is recorded with its exit status and the rest still
# run; the exit status is 1 if any failed.

set -u
cd "$(dirname "$0")/.."
out=${1:-bench/results/examples_h200.txt}
export PYTHONPATH=src${PYTHONPATH:+:$PYTHONPATH}
unset TILEIR_INTERPRET
PY=${PYTHON:-python3}
limit=${EXAMPLE_TIMEOUT_S:-1200}  # seconds a script may take (07's full run is the longest)
status=0
mkdir -p "$(dirname "$out")"

run() {  # run TITLE COMMAND...: the command's output, or its exit status, under a heading
    echo "## $1"
    shift
    local t0=$SECONDS
    timeout "$limit" "$@" 2>&1
    local rc=$?
    echo "(exit $rc, $((SECONDS - t0)) s)"
    echo
    [ "$rc" -eq 0 ] || status=1
}

gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)

all_examples() {
    echo "# examples/ on the GPU: $(echo "$gpus" | head -1) x $(echo "$gpus" | grep -c .)," \
         "$(date -u +%Y-%m-%dT%H:%MZ), commit $(git describe --always --dirty 2>/dev/null)," \
         "torch $($PY -c 'import torch; print(torch.__version__)' 2>/dev/null)," \
         "tileiras $($PY -c 'from tileir.assemble import tileiras_version; print(tileiras_version())' 2>/dev/null)"
    echo
    for script in examples/0[1-6]_*.py; do
        run "$script --device" "$PY" "$script" --device
    done
    if [ -f examples/07_training.py ]; then
        run "examples/07_training.py --device cuda --out $(dirname "$out")/training_curves_h200.json" \
            "$PY" examples/07_training.py --device cuda --out "$(dirname "$out")/training_curves_h200.json"
    fi
    for script in examples/*.py; do  # the rest: scripts with no GPU mode of their own (backward_softmax.py)
        case "$script" in examples/0[1-7]_*.py|examples/distributed_matmul.py) continue ;; esac
        echo "## $script: not run (it has no --device: its checks run on CPU tensors)"
    done
    if [ "$(echo "$gpus" | grep -c .)" -ge 2 ]; then
        run "torchrun --nproc-per-node 2 examples/distributed_matmul.py" \
            "$PY" -m torch.distributed.run --nproc-per-node 2 examples/distributed_matmul.py
    else
        echo "## examples/distributed_matmul.py: not run (it needs two GPUs)"
    fi
    return $status
}

all_examples | tee "$out"
rc=${PIPESTATUS[0]}
echo "wrote $out"
exit "$rc"
