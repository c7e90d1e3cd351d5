"""Training with tileir: a small GPT-style model whose attention, rms norms and matrix products are
``tileir.ops`` (their backward kernels included), trained on a synthetic next-token task beside the
same model in pure torch -- the same initial weights, the same batches, the same optimizer -- with
both loss curves logged step by step and the tokens per second of each.

    # on the GPU machine (torch with CUDA), the toolchain on PATH:
    tar -C /tmp -xJf .tc/tc.tar.xz && export PATH=/tmp/tc/bin:$PATH && unset CUDA_HOME
    PYTHONPATH=src python3 examples/07_training.py --out bench/results/training_curves_h200.json
    #   -> bench/results/training_curves_h200.json and bench/results/training_curves_h200.png

    # anywhere, on the host reference (CPU tensors run tileir's programs on the host; ~10 s):
    PYTHONPATH=src python3 examples/07_training.py --cpu-smoke

The model: token and learned position embeddings (plain torch), ``--layers`` pre-norm blocks
``x + attn(rms_norm(x))`` and ``x + mlp(rms_norm(x))``, a final rms norm and an output projection.
Attention is causal over ``--heads`` heads of ``--head-dim`` (a power of two: a head is one tile
of the attention kernels); the MLP is SwiGLU, ``silu(x W_gate) * (x W_up)`` then ``W_down``. In
the tileir model every matrix product (q/k/v, the attention's output, the MLP's three, the output
projection) is ``tileir.ops.matmul``, attention is ``tileir.ops.attention``, the norms are
``tileir.ops.rms_norm`` and the gate is ``tileir.ops.swiglu`` (silu and the product in one pass
over the one W_gate | W_up product, its backward in one more); the torch model calls ``@``,
``F.scaled_dot_product_attention``, ``F.rms_norm`` and ``F.silu(gate) * up`` in the same places.
Embedding lookup, the residual adds, the loss and AdamW are plain torch in both. Weights are kept
in f32 and cast to the compute format (``--dtype``: bf16 on the GPU) where they are used, so each
model's gradients reach f32 master weights through the cast.

The task: sequences drawn from a fixed random Markov chain over the vocabulary, in which each token
is followed by one of ``BRANCHES`` successors drawn for it once (with replacement, so a few tokens
have fewer distinct ones), each draw as likely; the model is scored (cross-entropy) on every next
token, so the loss falls smoothly from about log(vocab) towards log(BRANCHES) (a little under it
where successors repeat). A smooth task on purpose: a copying task (a sequence, a separator, the
sequence again) was tried first, and on the GPU configuration its loss sat on a plateau for 165
steps and then fell within 30, at a step that rounding decides -- torch, the control and tileir
fell 5-15 steps apart, so no step-by-step tolerance could hold across the fall
(bench/results/examples_h200_copy_task.txt; the first 130 steps agreed to 1.2e-4).
The optimizer: AdamW (betas 0.9, 0.95), the gradients' norm clipped to 1, the learning rate
warmed up over the first 5% of the steps and then down a cosine to a tenth.

Agreement: at every step |loss_tileir - loss_torch| <= atol + rtol * |loss_torch| (the tolerance
of the compute format, TOL below; written to the JSON with the largest difference seen). The
two runs differ only in the rounding of their kernels (accumulation order, where a product is
rounded to the format), which the optimizer carries forward, so the tolerance is looser than one
op's. A disagreement exits with status 1 after the JSON is written. A third run, the control
(ControlOps: torch with its products and attention in f32, rounded once to the format; leave it
out with ``--no-control``), shows how far two correct runs drift apart from rounding alone: where
the training is unstable (too high a learning rate: loss spikes at steps that rounding decides)
torch and the control disagree as much as tileir and torch do, and the tolerance means nothing.
Tokens per second: the steps after ``--warmup`` (the first ones assemble tileir's kernels and warm
torch's), ``batch * seq`` tokens a step, timed between two device synchronisations. At the GPU
configuration both models are host-bound in eager mode (each op's Python and launch cost more than
its kernel), so ``--graph`` also runs each model as torch's whole-network capture does: the steps
after the warm-up replay one CUDA graph of the forward, backward, clipping and AdamW, which is
what the kernels alone give. ``--backward-on-caller`` runs each eager backward on the calling thread
(``torch.autograd.set_multithreading_enabled(False)``, both models): tileir's backward formulas are
Python, and on the engine's device thread each ran 1.5-2x slower than on the main thread, the
hand-off to a cold core included (bench/results/autograd_thread_profile_h200.txt).

The first batch's gradients of each model are also compared with the same model's in f32 torch
(``grad_rel_err_vs_f32``: the largest relative error over the parameters), before training.

``--cpu-smoke``: d_model 64, 2 heads of 64, seq 16, batch 2, 3 steps, one block, on the CPU (the
host reference for tileir's side), bf16 as on the GPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812

import tileir.ops as tops

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16}
# step-by-step loss agreement (atol, rtol) by compute format
TOL = {"bf16": (0.05, 0.02), "f16": (0.02, 0.01)}
SMOKE = {"d_model": 64, "heads": 2, "head_dim": 64, "layers": 1, "seq": 16, "batch": 2, "steps": 3, "vocab": 16,
         "lr": 1e-2, "warmup": 1, "log_every": 1}
GPU = {"d_model": 512, "heads": 8, "head_dim": 64, "layers": 2, "seq": 256, "batch": 32, "steps": 300, "vocab": 256,
       "lr": 1e-3, "warmup": 10, "log_every": 10}
EPS = 1e-5
BRANCHES = 4  # successor draws a token has in the task's chain: the loss's floor is about log(BRANCHES)
CLIP = 1.0  # the gradients' norm is clipped to this


# ---- the two backends ----------------------------------------------------------------------------

# --8<-- [start:ops]
class TileirOps:
    """The model's four kinds of op through tileir (CUDA tensors on the GPU, CPU ones on the host
    reference)."""

    name = "tileir"

    @staticmethod
    def matmul(a, b):
        return tops.matmul(a, b)

    @staticmethod
    def attention(q, k, v):
        return tops.attention(q, k, v, causal=True)

    @staticmethod
    def rms_norm(x, w):
        return tops.rms_norm(x, [x.shape[-1]], w, EPS)

    @staticmethod
    def swiglu(gate_up):
        return tops.swiglu(gate_up)


class TorchOps:
    """The same four through torch."""

    name = "torch"

    @staticmethod
    def matmul(a, b):
        return a @ b

    @staticmethod
    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    @staticmethod
    def rms_norm(x, w):
        return F.rms_norm(x, [x.shape[-1]], w, EPS)

    @staticmethod
    def swiglu(gate_up):
        gate, up = gate_up.chunk(2, -1)
        return F.silu(gate) * up
# --8<-- [end:ops]


class ControlOps(TorchOps):
    """torch again with other roundings, the control: the products and attention in f32, rounded
    once to the format. Its curve beside torch's shows how far two correct runs in the format
    drift apart from rounding alone."""

    name = "control"

    @staticmethod
    def matmul(a, b):
        return (a.float() @ b.float()).to(a.dtype)

    @staticmethod
    def attention(q, k, v):
        return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True).to(q.dtype)


# ---- the model -----------------------------------------------------------------------------------


# --8<-- [start:block]
class Block(torch.nn.Module):
    def __init__(self, d, heads, head_dim, hidden):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.norm1 = torch.nn.Parameter(torch.ones(d))
        self.w_qkv = torch.nn.Parameter(torch.empty(d, 3 * heads * head_dim))
        self.w_o = torch.nn.Parameter(torch.empty(heads * head_dim, d))
        self.norm2 = torch.nn.Parameter(torch.ones(d))
        self.w_gate_up = torch.nn.Parameter(torch.empty(d, 2 * hidden))  # W_gate | W_up, one product
        self.w_down = torch.nn.Parameter(torch.empty(hidden, d))

    def forward(self, x, ops, dt):
        b, s, _ = x.shape
        hd = self.heads * self.head_dim
        qkv = ops.matmul(ops.rms_norm(x, self.norm1.to(dt)), self.w_qkv.to(dt))
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in qkv.split(hd, -1))
        att = ops.attention(q, k, v).transpose(1, 2).reshape(b, s, hd)
        x = x + ops.matmul(att, self.w_o.to(dt))
        gate_up = ops.matmul(ops.rms_norm(x, self.norm2.to(dt)), self.w_gate_up.to(dt))
        return x + ops.matmul(ops.swiglu(gate_up), self.w_down.to(dt))
# --8<-- [end:block]


class TinyGPT(torch.nn.Module):
    def __init__(self, vocab, seq, d, heads, head_dim, layers, hidden=None):
        super().__init__()
        self.init_args = (vocab, seq, d, heads, head_dim, layers, hidden)
        hidden = hidden or 64 * math.ceil(8 * d / 3 / 64)  # SwiGLU's 2/3 of 4d, rounded up to 64
        self.tok = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(seq, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads, head_dim, hidden) for _ in range(layers))
        self.norm = torch.nn.Parameter(torch.ones(d))
        self.head = torch.nn.Parameter(torch.empty(d, vocab))
        for name, p in self.named_parameters():
            if p.dim() == 2:  # GPT-2's initialisation: the projections into the residual scaled down
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("w_o", "w_down")) else 0.02
                torch.nn.init.normal_(p, std=std)

    def forward(self, idx, ops, dt):
        x = (self.tok(idx) + self.pos.weight[: idx.shape[1]]).to(dt)
        for blk in self.blocks:
            x = blk(x, ops, dt)
        return ops.matmul(ops.rms_norm(x, self.norm.to(dt)), self.head.to(dt))


# ---- the task ------------------------------------------------------------------------------------


def markov_batches(steps, batch, seq, vocab, seed):
    """[steps, batch, seq + 1] sequences of the chain: a random first token, then each token one of
    the ``BRANCHES`` successors of the one before (the successor table drawn once from ``seed``);
    and the first input position that is scored (every one: position p predicts data[p + 1])."""
    g = torch.Generator().manual_seed(seed)
    successors = torch.randint(0, vocab, (vocab, BRANCHES), generator=g)
    choice = torch.randint(0, BRANCHES, (steps, batch, seq), generator=g)
    data = torch.empty(steps, batch, seq + 1, dtype=torch.long)
    data[..., 0] = torch.randint(0, vocab, (steps, batch), generator=g)
    for p in range(seq):
        data[..., p + 1] = successors[data[..., p], choice[..., p]]
    return data, 0


def loss_of(model, ops, dt, seqs, scored_from):
    """Cross-entropy of the next token at the input positions from ``scored_from`` on of ``seqs``
    [batch, seq + 1] (a slice, not a mask: a mask on the GPU would wait for the device)."""
    logits = model(seqs[:, :-1], ops, dt)
    return F.cross_entropy(logits[:, scored_from:].float().flatten(0, 1), seqs[:, scored_from + 1:].flatten())


def lr_at(step: int, steps: int, lr: float) -> float:
    """The learning rate of ``step``: a linear warm-up over the first 5% of the steps, then a
    cosine down to lr / 10."""
    ramp = max(1, steps // 20)
    if step < ramp:
        return lr * (step + 1) / ramp
    t = (step - ramp) / max(1, steps - ramp)
    return lr * (0.1 + 0.45 * (1 + math.cos(math.pi * t)))


def train(model, ops, data, scored_from, dt, lr, warmup, device, clip=CLIP, graph=False):
    """AdamW on ``model`` over the batches of ``data`` (lr_at's schedule, gradients clipped to a
    norm of ``clip``): (the per-step losses, seconds of the steps after ``warmup``, seconds of the
    first step). ``graph``: the steps from ``warmup`` on replay one CUDA graph of a whole step
    (``train_graphed``)."""
    if graph:
        return train_graphed(model, ops, data, scored_from, dt, lr, warmup, device, clip)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    losses, t_first, t0 = [], 0.0, None
    sync()
    start = time.perf_counter()
    for step in range(data.shape[0]):
        if step == warmup:
            sync()
            t0 = time.perf_counter()
        seqs = data[step].to(device, non_blocking=True)
        loss = loss_of(model, ops, dt, seqs, scored_from)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, data.shape[0], lr)
        opt.step()
        losses.append(loss.detach())
        if step == 0:
            sync()
            t_first = time.perf_counter() - start
    sync()
    timed = time.perf_counter() - t0 if t0 is not None else float("nan")
    return [float(v) for v in torch.stack(losses).cpu()], timed, t_first


def train_graphed(model, ops, data, scored_from, dt, lr, warmup, device, clip=CLIP):
    """``train`` with the steps from ``warmup`` on replaying one CUDA graph of a whole step: the
    forward, the backward, the clipping and AdamW (``capturable``, its learning rate a tensor the
    host sets before each replay), the batch copied into the graph's input first. The first
    ``warmup`` steps run eagerly, on a side stream as torch's whole-network capture asks (they make
    AdamW's state and assemble tileir's kernels); capturing runs nothing, so every step trains once.
    Both backends take this path alike: it takes the host's per-op cost out of the step, so the
    tokens per second compare the kernels."""
    if device.type != "cuda":
        raise SystemExit("--graph: CUDA graphs need the GPU")
    steps = data.shape[0]
    lr_now = torch.tensor(lr_at(0, steps, lr), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr_now, betas=(0.9, 0.95), weight_decay=0.0, capturable=True,
                            foreach=True)
    seqs = torch.empty(data.shape[1:], dtype=data.dtype, device=device)  # the graph's input
    losses, t_first = [], 0.0

    def step_body():
        loss = loss_of(model, ops, dt, seqs, scored_from)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss

    torch.cuda.synchronize()
    start = time.perf_counter()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for step in range(max(1, warmup)):
            seqs.copy_(data[step], non_blocking=True)
            lr_now.fill_(lr_at(step, steps, lr))
            opt.zero_grad(set_to_none=True)
            losses.append(step_body().detach().clone())
            if step == 0:
                torch.cuda.synchronize()
                t_first = time.perf_counter() - start
    torch.cuda.current_stream().wait_stream(side)
    opt.zero_grad(set_to_none=True)  # the captured backward makes the gradients afresh each replay
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        loss = step_body()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for step in range(max(1, warmup), steps):
        seqs.copy_(data[step], non_blocking=True)
        lr_now.fill_(lr_at(step, steps, lr))
        g.replay()
        losses.append(loss.detach().clone())
    torch.cuda.synchronize()
    timed = time.perf_counter() - t0
    return [float(v) for v in torch.stack(losses).cpu()], timed, t_first


def grad_check(models, ref, data, scored_from, dt, device):
    """Each model's gradients on the first batch against the same model's in f32 torch: per
    backend, the largest over the parameters of |g - g_f32| / |g_f32| (Frobenius norms)."""
    f32 = TinyGPT(*ref.init_args).to(device)
    f32.load_state_dict(ref.state_dict())
    grads, seqs = {}, data[0].to(device)
    for name, (m, ops, fmt) in {"f32": (f32, TorchOps, torch.float32),
                                **{n: (m, o, dt) for n, (m, o) in models.items()}}.items():
        loss_of(m, ops, fmt, seqs, scored_from).backward()
        grads[name] = {n: p.grad.float() for n, p in m.named_parameters()}
        m.zero_grad(set_to_none=True)
    return {name: max(float((g[n] - grads["f32"][n]).norm() / grads["f32"][n].norm()) for n in g)
            for name, g in grads.items() if name != "f32"}


# ---- the run -------------------------------------------------------------------------------------


def plot(record, path):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not importable: no PNG")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = record["config"]
    fig, (ax, dx) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, height_ratios=[2, 1])
    steps = range(1, len(record["loss_tileir"]) + 1)
    for name, style, color in (("tileir", "-", "C0"), ("torch", "--", "C1"), ("control", ":", "C2")):
        if f"loss_{name}" in record:
            extra = "torch, products in f32" if name == "control" else f"{record['tokens_per_s'][name]:,.0f} tokens/s"
            ax.plot(steps, record[f"loss_{name}"], style, color=color, lw=1.2, label=f"{name} ({extra})")
            if name != "torch":
                dx.plot(steps, [abs(a - b) + 1e-9 for a, b in zip(record[f"loss_{name}"], record["loss_torch"])],
                        style, color=color, lw=1.0, label=f"|{name} - torch|")
    losses = record["loss_tileir"] + record["loss_torch"]
    if max(losses) > 20 * min(losses):
        ax.set_yscale("log")
    ax.set_ylabel("cross-entropy of the next token")
    ax.set_title(f"{record['device']}: d_model {c['d_model']}, {c['heads']}x{c['head_dim']} heads, "
                 f"{count(c['layers'], 'layer')}, seq {c['seq']}, batch {c['batch']}, {c['dtype']}"
                 + (", a CUDA graph a step" if c.get("graph") else ", eager"), fontsize=9)
    ax.legend()
    ax.grid(alpha=0.3)
    dx.plot(steps, [c["atol"] + c["rtol"] * abs(b) for b in record["loss_torch"]], "k-", lw=0.6, label="tolerance")
    dx.set_yscale("log")
    dx.set_xlabel("step")
    dx.set_ylabel("|difference|")
    dx.legend(fontsize=8)
    dx.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return str(path)


def count(n: int, what: str) -> str:
    return f"{n} {what}" + "s" * (n != 1)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cpu-smoke", action="store_true", help="the tiny configuration on the CPU (host reference)")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16", help="the compute format")
    for name in ("d_model", "heads", "head_dim", "layers", "seq", "batch", "steps", "vocab", "warmup", "log_every"):
        p.add_argument("--" + name.replace("_", "-"), type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-control", action="store_true", help="leave out the control run (ControlOps)")
    p.add_argument("--graph", action="store_true",
                   help="replay each step after the warm-up as one CUDA graph (both backends): the kernels' speed "
                        "without the host's per-op cost")
    p.add_argument("--backward-on-caller", action="store_true",
                   help="run each backward on the calling thread (torch.autograd.set_multithreading_enabled(False)), "
                        "both backends, eager steps only: no hand-off to the engine's device thread")
    p.add_argument("--out", default=None, help="the JSON record (the PNG beside it, .png)")
    args = p.parse_args(argv)
    if args.backward_on_caller and args.graph:
        p.error("--backward-on-caller is for the eager steps; --graph replays the captured backward")
    on_gpu = torch.cuda.is_available() and not args.cpu_smoke and args.device != "cpu"
    base = dict(SMOKE if args.cpu_smoke or not on_gpu else GPU)
    for k in base:
        if getattr(args, k) is not None:
            base[k] = getattr(args, k)
    args.cfg = base
    args.device = torch.device(args.device or ("cuda" if on_gpu else "cpu"))
    return args


def main(argv=None) -> int:
    args = parse(argv)
    c, device, dt = args.cfg, args.device, DTYPES[args.dtype]
    if c["head_dim"] & (c["head_dim"] - 1):
        raise SystemExit(f"--head-dim {c['head_dim']}: a power of two (a head is one tile)")
    atol, rtol = TOL[args.dtype]
    torch.manual_seed(args.seed)
    ref = TinyGPT(c["vocab"], c["seq"], c["d_model"], c["heads"], c["head_dim"], c["layers"])
    models = {}
    for ops in (TileirOps, TorchOps) + (() if args.no_control else (ControlOps,)):  # the same initial weights
        m = TinyGPT(c["vocab"], c["seq"], c["d_model"], c["heads"], c["head_dim"], c["layers"])
        m.load_state_dict(ref.state_dict())
        models[ops.name] = (m.to(device), ops)
    data, scored_from = markov_batches(c["steps"], c["batch"], c["seq"], c["vocab"], args.seed + 1)
    if device.type == "cuda":
        data = data.pin_memory()
    tokens = c["batch"] * c["seq"]
    grad_err = grad_check(models, ref, data, scored_from, dt, device)
    n_params = sum(p.numel() for p in ref.parameters())
    print(f"{device} {args.dtype}: d_model {c['d_model']}, {c['heads']} heads of {c['head_dim']}, "
          f"{count(c['layers'], 'layer')}, seq {c['seq']}, batch {c['batch']}, vocab {c['vocab']}, {c['steps']} steps, "
          f"{n_params:,} parameters", flush=True)
    print("first-batch gradients against f32 torch, the largest relative error over the parameters: "
          + ", ".join(f"{k} {v:.2e}" for k, v in grad_err.items()), flush=True)
    curves, rate, first = {}, {}, {}
    for name, (m, ops) in models.items():
        with torch.autograd.set_multithreading_enabled(not args.backward_on_caller):
            losses, timed, t_first = train(m, ops, data, scored_from, dt, c["lr"], c["warmup"], device,
                                           graph=args.graph)
        curves[name], first[name] = losses, t_first
        rate[name] = (c["steps"] - c["warmup"]) * tokens / timed if c["steps"] > c["warmup"] else float("nan")
        print(f"{name}: {rate[name]:,.0f} tokens/s after {count(c['warmup'], 'warm-up step')} "
              f"(first step {t_first:.2f} s)", flush=True)
    tl, tr, ctl = curves["tileir"], curves["torch"], curves.get("control")
    diffs = [abs(a - b) for a, b in zip(tl, tr)]
    bad = [i for i, (a, b) in enumerate(zip(tl, tr)) if abs(a - b) > atol + rtol * abs(b)]
    print(f"{'step':>5} {'tileir':>9} {'torch':>9} {'|diff|':>9}" + (f" {'control':>9}" if ctl else ""))
    for i, (a, b) in enumerate(zip(tl, tr)):
        if i % c["log_every"] == 0 or i == len(diffs) - 1 or i in bad:
            print(f"{i + 1:5d} {a:9.4f} {b:9.4f} {diffs[i]:9.2e}" + (f" {ctl[i]:9.4f}" if ctl else "")
                  + ("  OUTSIDE" if i in bad else ""))
    record = {
        "what": "examples/07_training.py: the same model trained with tileir.ops and with pure torch",
        "command": " ".join(["python3", "examples/07_training.py", *(sys.argv[1:] if argv is None else argv)]),
        "date": datetime.date.today().isoformat(),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu (host reference)",
        "torch": torch.__version__,
        "config": dict(c, dtype=args.dtype, seed=args.seed, graph=args.graph,
                       backward_on_caller=args.backward_on_caller,
                       task=f"markov, {BRANCHES} successors a token",
                       params=n_params, tokens_per_step=tokens,
                       optimizer=f"AdamW(betas 0.9, 0.95; no weight decay), gradient norm clipped to {CLIP}, "
                       "learning rate: linear warm-up over 5% of the steps, cosine down to lr / 10",
                       atol=atol, rtol=rtol),
        "loss_tileir": tl,
        "loss_torch": tr,
        "abs_diff": diffs,
        "max_abs_diff": max(diffs),
        "max_rel_diff": max(d / max(abs(b), 1e-12) for d, b in zip(diffs, tr)),
        "tolerance": f"|loss_tileir - loss_torch| <= {atol} + {rtol} * |loss_torch| at every step",
        "steps_outside_tolerance": [i + 1 for i in bad],
        "agree": not bad,
        "tokens_per_s": rate,
        "tileir_over_torch_tokens_per_s": rate["tileir"] / rate["torch"],
        "first_step_s": first,
        "grad_rel_err_vs_f32": grad_err,
        "grad_check": "first batch, before training: per backend the largest over the parameters of "
                      "|g - g_f32| / |g_f32|, g_f32 from the same model in f32 torch",
    }
    if ctl:
        cdiffs = [abs(a - b) for a, b in zip(ctl, tr)]
        record.update({
            "control": "pure torch with the products and attention in f32, rounded once to the format: how far "
                       "two correct runs drift apart from rounding alone",
            "loss_control": ctl,
            "control_max_abs_diff": max(cdiffs),
            "control_steps_outside_tolerance": [i + 1 for i, (a, b) in enumerate(zip(ctl, tr))
                                                if abs(a - b) > atol + rtol * abs(b)],
        })
    print(f"max |tileir - torch| {record['max_abs_diff']:.3e} (tolerance {atol} + {rtol} * loss)"
          + (f"; max |control - torch| {record['control_max_abs_diff']:.3e}" if ctl else "")
          + f"; tokens/s tileir / torch {record['tileir_over_torch_tokens_per_s']:.3f}")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        record["png"] = plot(record, out.with_suffix(".png"))
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {out}" + (f" and {record['png']}" if record["png"] else ""))
    if bad:
        print(f"the loss curves disagree at steps {record['steps_outside_tolerance']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
