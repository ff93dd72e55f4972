//! The crate's layers run one way: data at the bottom, pure decisions next, effects at the edge
//! (ARCHITECTURE.md, "Layers"). This test reads the sources and fails when a module imports
//! from a layer above its own, so the shape stays as it is drawn.

use std::path::{Path, PathBuf};

/// A rule: the files under `path` (a file or a folder) must not refer to any of `forbidden`
/// (paths as the code writes them: `crate::deposit`, `super::client`).
struct Rule {
    path: &'static str,
    why: &'static str,
    forbidden: &'static [&'static str],
}

const ABOVE_THE_BASE: &[&str] =
    &["crate::deposit", "crate::funding", "crate::onramp", "crate::services", "crate::chain::"];

const RULES: &[Rule] = &[
    Rule {
        path: "chains.rs",
        why: "the base: chains, tokens, units, validation, errors",
        forbidden: ABOVE_THE_BASE,
    },
    Rule { path: "tokens.rs", why: "the base", forbidden: ABOVE_THE_BASE },
    Rule { path: "units.rs", why: "the base", forbidden: ABOVE_THE_BASE },
    Rule { path: "validate.rs", why: "the base", forbidden: ABOVE_THE_BASE },
    Rule { path: "describe.rs", why: "the base", forbidden: ABOVE_THE_BASE },
    Rule { path: "error.rs", why: "the base", forbidden: ABOVE_THE_BASE },
    Rule { path: "registry.rs", why: "the base", forbidden: ABOVE_THE_BASE },
    Rule { path: "http.rs", why: "transport, under every service", forbidden: ABOVE_THE_BASE },
    Rule {
        path: "services",
        why: "the remote services' clients serve the deposit engine, never the reverse",
        forbidden: &["crate::deposit", "crate::funding", "crate::onramp"],
    },
    Rule {
        path: "chain",
        why: "the chains' JSON-RPC clients serve funding, never the reverse",
        forbidden: &["crate::deposit", "crate::funding", "crate::onramp"],
    },
    Rule {
        path: "deposit/machine.rs",
        why: "the deposit machine is pure: no I/O, no locks, no clock, no other module",
        forbidden: &["crate::", "super::", "std::time", "std::sync", "tokio", "std::fs"],
    },
    Rule {
        path: "deposit/records.rs",
        why: "records are data: they know the machine, never the engine",
        forbidden: &[
            "super::client",
            "super::sweeper",
            "super::refund",
            "super::recovery",
            "super::store",
            "super::events",
            "tokio",
        ],
    },
    Rule {
        path: "deposit/store",
        why: "the store persists records; it imports no client or sweeper types",
        forbidden: &["super::client", "super::sweeper", "super::refund", "super::recovery"],
    },
];

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
        let entry = entry.unwrap().path();
        if entry.is_dir() {
            files.extend(rust_files(&entry));
        } else if entry.extension().is_some_and(|e| e == "rs") {
            files.push(entry);
        }
    }
    files
}

/// The code of `text` that imports: comments and test modules left out (a doc link to a type
/// above is fine; a test may build what it checks from anywhere).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines().enumerate().filter(|(_, line)| !line.trim_start().starts_with("//"))
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for rule in RULES {
        let files = rust_files(&src.join(rule.path));
        assert!(!files.is_empty(), "{} has no sources", rule.path);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in code_lines(&text) {
                for forbidden in rule.forbidden {
                    if line.contains(forbidden) {
                        found.push(format!(
                            "{}:{}: {} ({}: {})",
                            file.strip_prefix(&src).unwrap_or(&file).display(),
                            n + 1,
                            line.trim(),
                            forbidden,
                            rule.why
                        ));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "imports that run back up the layers:\n{}", found.join("\n"));
}

#[test]
fn the_rules_catch_an_import_back_up() {
    let bad = "use crate::deposit::DepositClient;\n// use crate::deposit::Fine;\n";
    let hits: Vec<_> = code_lines(bad).filter(|(_, l)| l.contains("crate::deposit")).collect();
    assert_eq!(hits.len(), 1, "a use line is caught, a comment is not: {hits:?}");
}
