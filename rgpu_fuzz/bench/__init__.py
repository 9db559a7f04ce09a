"""The benchmarks behind `rgpu-fuzz bench` (the command is `rgpu_fuzz.cli.bench`): the
simulator side by side with a baseline revision (`sim`), campaign throughput (`campaign`),
bucket purity per seeded bug (`buckets`) and code-object build time (`compile`). They
measure a source checkout (`rgpu_fuzz.checkout`): the seeded-bug plugins and the
conformance kernels they use are the test suite's."""
