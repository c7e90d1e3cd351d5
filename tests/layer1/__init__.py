"""Layer-1 goldens: hand-made Kernels whose bytes tileirdisasm prints exactly as render prints them."""
