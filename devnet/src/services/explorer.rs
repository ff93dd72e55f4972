//! Block-explorer links of transactions (the reference SDK's bases, `<base><hash>`).

/// The transaction-page base of `chain_id`'s explorer; `None` for chains without one
/// (HyperEVM, Monad, Plasma) and unknown chains.
pub fn tx_base(chain_id: u64) -> Option<&'static str> {
    Some(match chain_id {
        1 => "https://etherscan.io/tx/",
        10 => "https://optimistic.etherscan.io/tx/",
        56 => "https://bscscan.com/tx/",
        137 => "https://polygonscan.com/tx/",
        8453 => "https://basescan.org/tx/",
        42161 => "https://arbiscan.io/tx/",
        43114 => "https://snowscan.xyz/tx/",
        59144 => "https://lineascan.build/tx/",
        5000 => "https://mantlescan.xyz/tx/",
        4200 => "https://scan.merlinchain.io/tx/",
        196 => "https://www.okx.com/web3/explorer/xlayer/tx/",
        146 => "https://sonicscan.org/tx/",
        80094 => "https://berascan.com/tx/",
        101 => "https://solscan.io/tx/",
        _ => return None,
    })
}

/// The explorer link of transaction `hash` on `chain_id`, if the chain has an explorer.
pub fn tx_url(chain_id: u64, hash: &str) -> Option<String> {
    tx_base(chain_id).map(|base| format!("{base}{hash}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases() {
        assert_eq!(tx_url(42161, "0xab").as_deref(), Some("https://arbiscan.io/tx/0xab"));
        assert_eq!(tx_url(101, "x").as_deref(), Some("https://solscan.io/tx/x"));
        for none in [999, 143, 9745, 7] {
            assert_eq!(tx_base(none), None, "{none}");
        }
        let with_explorer =
            depositkit_core::Chain::ALL.iter().filter(|c| tx_base(c.id()).is_some()).count();
        assert_eq!(with_explorer, 14);
    }
}
