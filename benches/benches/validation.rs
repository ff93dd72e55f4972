//! Address validation and unit conversion: the calls a deposit flow makes on every balance it sees.
//!
//! Run: `cargo bench -p depositkit-benches --bench validation`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use depositkit_core::{
    U256, format_units, is_valid_evm_address, is_valid_solana_address, parse_units,
    validate_address_for_chain,
};

const CHECKSUMMED: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const LOWER: &str = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed";
const SOLANA: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

fn addresses(c: &mut Criterion) {
    let mut g = c.benchmark_group("address");
    g.bench_function("evm_checksummed", |b| {
        b.iter(|| is_valid_evm_address(black_box(CHECKSUMMED)))
    });
    g.bench_function("evm_lowercase", |b| b.iter(|| is_valid_evm_address(black_box(LOWER))));
    g.bench_function("solana", |b| b.iter(|| is_valid_solana_address(black_box(SOLANA))));
    g.bench_function("validate_for_chain_base", |b| {
        b.iter(|| validate_address_for_chain(black_box(CHECKSUMMED), black_box(8453)))
    });
    g.finish();
}

fn units(c: &mut Criterion) {
    let mut g = c.benchmark_group("units");
    let usdc = U256::from(1_234_567_890u64);
    let max = U256::MAX;
    g.bench_function("format_usdc_6", |b| b.iter(|| format_units(black_box(usdc), black_box(6))));
    g.bench_function("format_u256_max_18", |b| {
        b.iter(|| format_units(black_box(max), black_box(18)))
    });
    g.bench_function("parse_usdc_6", |b| {
        b.iter(|| parse_units(black_box("1234.56789"), black_box(6)))
    });
    g.bench_function("parse_eth_18", |b| {
        b.iter(|| parse_units(black_box("0.000400000000000001"), black_box(18)))
    });
    g.finish();
}

criterion_group!(benches, addresses, units);
criterion_main!(benches);
