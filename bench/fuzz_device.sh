#!/usr/bin/env bash
# The device fuzzer's next H200 session (issue 15; docs/fuzz.md, "The first campaign" and "Next on
# the device"). One step per device call, each sized to finish inside an 8-minute call on the
# 16-core H200 machine (campaign 1: 2000 programs compiled and run in 26 s, 78 a second):
#
#   bench/fuzz_device.sh campaign   # 10,000 programs from seed 1 (its first 2000 are campaign 1's): ~5 min
#   bench/fuzz_device.sh mutants    # the mutant check, 33 mutants x 200 drawn programs: ~3-4 min
#   bench/fuzz_device.sh repro      # the saved reproducers again, then campaign 1's 5 unknowns shrunk: ~5 min
#   bench/fuzz_device.sh unexplained2  # campaign 2's reproducers again, then its 12 unexplained failures
#                                   # shrunk (docs/fuzz.md, "Next on the device", step 2): ~6 min
#   bench/fuzz_device.sh focus      # focused campaigns: view stores (the open tail cause), while loops,
#                                   # allocas in while loops, strided loads; and the layer-2 ftof family
#                                   # with the new modes: ~7 min
#   bench/fuzz_device.sh after2     # campaign 2's triage checked on the device (docs/fuzz.md, "Next on the
#                                   # device", step 1): the first-exit loops written once, the judge's new
#                                   # rules, the 2 device errors left shrunk, assert-dropped: ~8 min
#
# Run from the repository root, e.g. with the device tool: command "bench/fuzz_device.sh campaign",
# carry [".tc"] (the toolchain, git-ignored: ../shared/device/toolchain.sh makes .tc/tc.tar.xz;
# unpacked to /tmp/tc here unless it is there already).
# Results go to $OUT (the device tool's folder that comes back; bench/results without it); the
# reproducers of a step are packed into one .tgz there (a call brings back at most 8 files).
set -u
STEP=${1:?usage: bench/fuzz_device.sh campaign|mutants|repro|unexplained2|focus|after2}
OUT=${OUT:-bench/results}
WORK=$(mktemp -d)
mkdir -p "$OUT"
if [ ! -x /tmp/tc/bin/tileiras ] && [ -f .tc/tc.tar.xz ]; then tar -C /tmp -xJf .tc/tc.tar.xz; fi
[ -d /tmp/tc/bin ] && export PATH=/tmp/tc/bin:$PATH
unset CUDA_HOME CUDA_PATH CUDA_ROOT
export PYTHONPATH=src
pack() { [ -d "$WORK/$1" ] && tar -C "$WORK" -czf "$OUT/$1.tgz" "$1"; }

case "$STEP" in
campaign)
  # compile and run: ~130 s at 78 programs/s; --time-limit stops drawing at 300 s whatever the rate;
  # shrinking: known causes (diff/fuzzknown.py) are not shrunk, at most 8 others (2 of a class),
  # 30 s each, 120 s in all
  # (generator 3; campaign 2's report is bench/results/fuzz_h200.json: this one gets a name of its own)
  timeout 470 python3 -m tileir.diff fuzz --programs 10000 --seed 1 --time-limit 300 \
    --max-shrink 8 --max-shrink-per-class 2 --shrink-s 30 --shrink-total-s 120 \
    --out "$OUT/fuzz_campaign3_h200.json" --repro-dir "$WORK/fuzz_repro"
  pack fuzz_repro
  ;;
mutants)
  # each mutant: 200 programs drawn toward its operations, up to 24 whose bytes it changes run plain
  # and mutated; no mutant starts after 400 s
  timeout 470 python3 -m tileir.diff fuzz --mutants --mutant-programs 200 --seed 1 --time-limit "${MUTANT_TIME_S:-400}" \
    --out "$OUT/fuzz_mutants_h200.json"
  ;;
repro)
  # every saved reproducer at the default level and -O0, classified again (~1 min) ...
  timeout 150 python3 -m tileir.diff fuzz-repro bench/results/fuzz_repro/*.json \
    --out "$OUT/fuzz_repro_rerun_h200.json" > /dev/null
  # ... then campaign 1's five unknowns (two while loops answering their initial carries, two whose
  # stores after the loop never happened, one strided load past the edge) shrunk, 60 s each
  timeout 320 python3 -m tileir.diff fuzz --seeds 6,85,217,1316,663 --gen-version 1 --max-shrink 5 \
    --max-shrink-per-class 5 \
    --shrink-s 55 --shrink-total-s 280 --out "$OUT/fuzz_unknowns_h200.json" --repro-dir "$WORK/unknown_repro"
  pack unknown_repro
  ;;
unexplained2)
  timeout 100 python3 -m tileir.diff fuzz-repro bench/results/fuzz_repro_campaign2/*.json \
    --out "$OUT/fuzz_repro2_rerun_h200.json" > /dev/null
  timeout 380 python3 -m tileir.diff fuzz --seeds 9767,4223,9212,5682,3403,8979,5630,6991,8236,3439,3904,2926 \
    --gen-version 2 --max-shrink 12 --max-shrink-per-class 3 --shrink-s 30 --shrink-total-s 300 \
    --out "$OUT/fuzz_unexplained2_h200.json" --repro-dir "$WORK/unexplained2_repro"
  pack unexplained2_repro
  ;;
focus)
  # view stores with what the shrinker kept around them (an if, an atomic, a pack, a transcendental):
  # how often the tail is written and what the failures share (4 of them shrunk although known)
  timeout 150 python3 -m tileir.diff fuzz --programs 3000 --seed 100000 --ops vstore,if,atomic,pack,un --focus vstore \
    --time-limit 100 --max-shrink 4 --max-shrink-per-class 4 --shrink-s 10 --shrink-total-s 40 --shrink-known \
    --out "$OUT/fuzz_vstore_h200.json" --repro-dir "$WORK/vstore_repro"
  pack vstore_repro
  # while loops (trips 0-4, carries, data exits) and strided view loads, each shrunk where unexplained
  timeout 130 python3 -m tileir.diff fuzz --programs 2000 --seed 200000 --ops while,un,bin --focus while \
    --time-limit 70 --max-shrink 3 --shrink-s 15 --shrink-total-s 45 \
    --out "$OUT/fuzz_while_h200.json" --repro-dir "$WORK/while_repro"
  pack while_repro
  # allocas in while loops (2926's misaligned address: what decides, warps 8 or the loop)
  timeout 70 python3 -m tileir.diff fuzz --programs 1000 --seed 400000 --ops alloca,while,shape --focus alloca,while \
    --time-limit 35 --max-shrink 2 --shrink-s 12 --shrink-total-s 24 \
    --out "$OUT/fuzz_alloca_while_h200.json" --repro-dir "$WORK/alloca_repro"
  pack alloca_repro
  timeout 100 python3 -m tileir.diff fuzz --programs 2000 --seed 300000 --ops vload,cas,shape \
    --time-limit 60 --max-shrink 2 --shrink-s 15 --shrink-total-s 30 \
    --out "$OUT/fuzz_strided_h200.json" --repro-dir "$WORK/strided_repro"
  pack strided_repro
  # the layer-2 ftof family: its corpus holds the modes tileiras assembles that the recording took
  # on the host rule before any device measured them (families/convert.py UNMEASURED_FTOF)
  timeout 60 python3 -m tileir.diff run --families ftof --out "$OUT/diff_ftof_h200.json"
  ;;
after2)
  # the 14 failures of campaign 2 whose while loop stops on its first iteration (3 tileiras failures, 9
  # regions unwritten, 2 hangs): the lowering writes those loops as their body once now; all equal is
  # the workaround confirmed, any failure is shrunk (the cause no longer matches a run with it)
  timeout 150 python3 -m tileir.diff fuzz --seeds 3439,3904,9767,4223,9212,6,1316,2319,2512,4846,6668,8133,8853,9309 \
    --gen-version 2 --max-shrink 3 --max-shrink-per-class 3 --shrink-s 30 --shrink-total-s 90 \
    --out "$OUT/fuzz_while_once_h200.json" --repro-dir "$WORK/while_once_repro"
  pack while_once_repro
  # the judge's new rules on the device's answers: the wide f8 products (bound in 2^-14 units), the
  # constant asserts (both stopped), the softmax row (the envelope's draw: still a difference, known)
  timeout 60 python3 -m tileir.diff fuzz --seeds 3403,8979,5630,6991,8236 --gen-version 2 --max-shrink 0 \
    --out "$OUT/fuzz_judge2_h200.json"
  # the two device errors no workaround touches: 5682 hangs at both levels, its if's condition a
  # take-the-accumulator reduction (unordered: warps may disagree and part of them wait at a barrier
  # in a branch the others skip?) -- generator 3 draws the same program with a min there; 2926
  # (misaligned address: two allocas in a while loop, warps 8) likewise with a max for its take_elem
  timeout 60 python3 -m tileir.diff fuzz --seeds 5682,2926 --gen-version 3 --hang-s 5 --max-shrink 0 \
    --out "$OUT/fuzz_errors2_v3_h200.json"
  # ... and as campaign 2 drew them, shrunk with a short hang limit
  timeout 180 python3 -m tileir.diff fuzz --seeds 5682,2926 --gen-version 2 --hang-s 5 --max-shrink 2 \
    --max-shrink-per-class 2 --shrink-s 80 --shrink-total-s 160 \
    --out "$OUT/fuzz_errors2_h200.json" --repro-dir "$WORK/errors2_repro"
  pack errors2_repro
  # assert-dropped with generator 3's data-dependent asserts (half of them drawn to fire)
  timeout 60 python3 -m tileir.diff fuzz --mutants --only assert-dropped --mutant-programs 200 --seed 1 \
    --out "$OUT/fuzz_mutant_assert_h200.json"
  # the 9 while-stale-carries failures at -O0 (docs/fuzz.md, "Next on the device", step 2): all right
  # there makes -O0 a candidate workaround for a while loop that runs a second iteration
  timeout 45 python3 -m tileir.diff fuzz --seeds 85,217,2374,4138,6651,7290,7529,8215,9254 \
    --gen-version 2 --opt-level 0 --max-shrink 0 --out "$OUT/fuzz_while_O0_h200.json"
  ;;
*)
  echo "unknown step $STEP: campaign | mutants | repro | unexplained2 | focus | after2" >&2
  exit 2
  ;;
esac
