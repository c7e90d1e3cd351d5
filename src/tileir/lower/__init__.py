"""Lowering: a recorded TileProg as a typed Kernel of Tile IR instructions."""

from .core import Lowerer, lower, lowering

__all__ = ["Lowerer", "lower", "lowering"]
