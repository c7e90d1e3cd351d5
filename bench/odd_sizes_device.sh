#!/usr/bin/env bash
# Every tuned library kernel at odd sizes on the GPU, each with the configuration the library picks
# (the sm_90 table): PYTHONPATH=src bench/odd_sizes_device.sh > bench/results/odd_sizes_h200.txt
set -u
run() { timeout 60 python3 -m tileir run "$@" --device 2>&1 | tail -1; }
run matmul_f16 --size 1x7x65; run matmul_f16 --size 257x129x300; run matmul_bf16 --size 64x1000x33
run matmul_tf32 --size 1000x999x1001; run matmul_tf32 --size 3x5x7; run matmul_i8 --size 129x257x65
run softmax --size 3x20000; run softmax --size 7x8193; run softmax --size 5x1
run layernorm_f16 --size 9x12345; run layernorm_f32 --size 4x8192; run rmsnorm_f16 --size 11x9000; run rmsnorm_f32 --size 2x3
run attention_f16 --size 1x3x200x128; run attention_f16_causal --size 1x2x129x128; run attention_bf16_causal --size 1x1x4096x128
run attention_f16 --size 2x1x300x64; run attention_f16_causal --size 1x4x77x40; run vadd --size 1; run vadd --size 1000001
run softmax_f16 --size 3x20000; run softmax_bf16 --size 5x1; run layernorm_bf16 --size 7x777; run rmsnorm_bf16 --size 1x4097
run bmm_f16 --size 3x129x65x33; run transpose_f16 --size 257x3; run conv1d --size 1001x40; run histogram --size 4097x3
# the grouped matmul's shorter last group (10, 11 and 9 block rows of 128 in groups of 8)
run matmul_f16 --size 1200x300x200; run matmul_bf16 --size 1300x520x64; run matmul_tf32 --size 1100x260x96
run matmul_f16 --size 8192x256x64
