"""What every tutorial script shares: its command line (``--device`` for the GPU, else the host
reference). Not a tutorial itself."""

from __future__ import annotations

import argparse
import os


def tutorial_args(argv, doc: str, device_help: str = "run on the GPU (default: the host reference)",
                  extra=None):
    """The parsed command line, or None where ``--device`` was asked for and torch sees no GPU
    (after saying so). ``extra(parser)`` adds a script's own options."""
    import torch

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--device", action="store_true", help=device_help)
    if extra is not None:
        extra(parser)
    args = parser.parse_args(argv)
    if args.device:
        os.environ.pop("TILEIR_INTERPRET", None)  # plain calls on the GPU
        if not torch.cuda.is_available():
            print("--device: torch sees no CUDA GPU here; run without --device for the host reference")
            return None
    return args
