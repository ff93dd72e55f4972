//! Program-derived addresses and associated token accounts.

use sha2::{Digest, Sha256};

use super::keys::{ASSOCIATED_TOKEN_PROGRAM, Pubkey, SYSTEM_PROGRAM, TOKEN_PROGRAM};

/// The most seeds a program address takes, and the longest seed.
const MAX_SEEDS: usize = 16;
const MAX_SEED_LEN: usize = 32;
const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";

/// `sha256(seeds… ‖ program_id ‖ "ProgramDerivedAddress")` when that is off the curve; `None`
/// when it is on the curve or the seeds break the limits (16 seeds of at most 32 bytes).
pub fn create_program_address(seeds: &[&[u8]], program_id: &Pubkey) -> Option<Pubkey> {
    if seeds.len() > MAX_SEEDS || seeds.iter().any(|s| s.len() > MAX_SEED_LEN) {
        return None;
    }
    let mut hasher = Sha256::new();
    for seed in seeds {
        hasher.update(seed);
    }
    hasher.update(program_id.as_bytes());
    hasher.update(PDA_MARKER);
    let key = Pubkey(hasher.finalize().into());
    (!key.is_on_curve()).then_some(key)
}

/// The program-derived address of `seeds` under `program_id` and its bump seed: the first
/// bump from 255 down whose address is off the curve. `None` in the (astronomically unlikely)
/// case that no bump works, or when the seeds break the limits (at most 15 seeds here, since
/// the bump is one more).
pub fn find_program_address(seeds: &[&[u8]], program_id: &Pubkey) -> Option<(Pubkey, u8)> {
    if seeds.len() >= MAX_SEEDS {
        return None;
    }
    for bump in (0..=u8::MAX).rev() {
        let bump_seed = [bump];
        let with_bump: Vec<&[u8]> =
            seeds.iter().copied().chain(std::iter::once(&bump_seed[..])).collect();
        if let Some(key) = create_program_address(&with_bump, program_id) {
            return Some((key, bump));
        }
    }
    None
}

/// The associated token account of `owner` for `mint` under the SPL Token program.
pub fn associated_token_address(owner: &Pubkey, mint: &Pubkey) -> Pubkey {
    associated_token_address_with_program(owner, mint, &TOKEN_PROGRAM)
}

/// The associated token account of `owner` for `mint` under `token_program`.
pub fn associated_token_address_with_program(
    owner: &Pubkey,
    mint: &Pubkey,
    token_program: &Pubkey,
) -> Pubkey {
    let seeds: [&[u8]; 3] = [owner.as_bytes(), token_program.as_bytes(), mint.as_bytes()];
    // Three 32-byte seeds are within the limits, and a bump that works always exists in
    // practice (each fails with probability 1/2); the fallback keeps this function total.
    find_program_address(&seeds, &ASSOCIATED_TOKEN_PROGRAM).map_or(SYSTEM_PROGRAM, |(key, _)| key)
}
