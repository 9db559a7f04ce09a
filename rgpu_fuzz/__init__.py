"""rgpu-fuzz: differential fuzzing of a Rust-on-AMD-GPU compiler stack."""

__version__ = "0.1.0"
