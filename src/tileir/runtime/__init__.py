"""The device side: load a cubin, pass the arguments, launch on GPU 0 through cuda-bindings."""

from .driver import Module, available
from .launch import launch

__all__ = ["Module", "available", "launch"]
