//! depositkit benchmarks live in `benches/`.
