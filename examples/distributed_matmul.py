"""Tensor-parallel matmul over several GPUs: each rank multiplies its slice of K with tileir on its
own GPU, and NCCL sums the partial products.

    torchrun --nproc-per-node 2 examples/distributed_matmul.py      # one process per GPU

X [M, K] is on every rank; W [K, N] is cut along K, rank r holding rows r*K/P .. (r+1)*K/P.
Rank r computes X[:, its rows] @ W[its rows] (a column slice of X: a leading-dimension stride
tileir reads in place), and all_reduce adds the P partial products. The answer is checked on
every rank against the whole product in f32.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist

import tileir.ops as tops


def main(m: int = 4096, n: int = 4096, k: int = 8192) -> None:
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    g = torch.Generator(device="cuda").manual_seed(0)  # the same X and W on every rank
    x = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=g) / k ** 0.5
    w = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=g)
    rows = slice(rank * k // world, (rank + 1) * k // world)
    part = tops.matmul(x[:, rows], w[rows])  # asynchronous, on this GPU's current stream
    dist.all_reduce(part)  # NCCL waits for the kernel on the same stream
    want = (x.float() @ w.float()).half()
    err = (part.float() - want.float()).abs().max().item()
    print(f"rank {rank}/{world} on {torch.cuda.current_device()}: max error {err:.4f}")
    assert err < 0.1, err
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
