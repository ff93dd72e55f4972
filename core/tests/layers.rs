//! The crate's layers run one way: data at the bottom, pure decisions next, effects at the edge
//! (ARCHITECTURE.md, "Layers"). This test reads the sources and fails when a module imports
//! from a layer above its own, or when a module has no layer, so the shape stays as it is
//! drawn.
//!
//! What counts as an import: every path of a `use` declaration and every `crate::`, `super::`
//! and `self::` path in the code, resolved to the module that defines the item — through
//! `super`, through child modules, and through re-exports (`pub use`, and the imports a parent
//! module shares with its children), so that `crate::deposit::FundingConfig` is the options
//! layer's, not the facade's. Comments, string literals and test modules (`#[cfg(test)] mod`)
//! are not code: a doc link to a type above is fine, and a test may build what it checks from
//! anywhere.

mod layers_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use layers_support::{Crate, line_of, module_name};

/// A layer: its name, what it is, and its modules. A module is named by its path in the crate
/// (`deposit::store`); an entry covers that module and every module under it, unless it ends
/// in `!` (that module alone). `crate!` is the crate root, `lib.rs`.
type Layer = (&'static str, &'static str, &'static [&'static str]);

/// The layers, bottom first. A module may import from its own layer and the layers below it,
/// never from one above.
const LAYERS: &[Layer] = &[
    (
        "base",
        "tables, checks, errors, transport, the runtime",
        &[
            "error", "describe", "chains", "tokens", "units", "validate", "registry", "http",
            "observe", "runtime",
        ],
    ),
    (
        "clients",
        "the remote services', the chains' and the user lookup's clients; signers",
        &["services", "chain", "users", "signer"],
    ),
    ("machine", "the deposit lifecycle: pure, imports nothing", &["deposit::machine"]),
    (
        "values",
        "data: results, ids, the client's status, history filters, the onramp's messages",
        &["deposit::model", "deposit::status", "deposit::history", "onramp::messages"],
    ),
    (
        "records",
        "the table's records and the pure decisions over data (detection)",
        &["deposit::records", "deposit::watcher", "deposit::finality"],
    ),
    ("events", "the event model: what the client reports", &["deposit::events"]),
    ("options", "the construction options", &["deposit::config"]),
    (
        "notifications",
        "the notification records' pure rules (over events and their options)",
        &["deposit::notifications"],
    ),
    ("store", "persists records and events", &["deposit::store"]),
    ("hub", "the event hub and the delivery pool", &["deposit::hub", "deposit::dispatch"]),
    (
        "protocol",
        "the send protocol (quote, sign, send, follow) and the batched balance poll",
        &["deposit::send", "deposit::poller"],
    ),
    ("port", "what funding and the onramp may ask of the client", &["deposit::port"]),
    ("features", "funding from a wallet and the onramp", &["funding", "onramp"]),
    (
        "engine",
        "executor, timers, polls, the jobs: applies the machine's effects",
        &["deposit::engine", "deposit::sweeper", "deposit::refund", "deposit::recovery"],
    ),
    (
        "facade",
        "DepositClient and the deposit module's public paths",
        &["deposit::client", "deposit!"],
    ),
    ("root", "the crate's public paths", &["crate!"]),
];

/// Modules that must also stay pure: no path of theirs may name these (after comments and
/// strings are taken out).
const PURE: &[(&str, &[&str])] = &[
    ("deposit::machine", &["crate::", "super::", "std::time", "std::sync", "tokio", "std::fs"]),
    ("deposit::records", &["tokio", "std::sync", "std::time"]),
];

/// The layer of `module`: the index in `layers` of its most specific entry.
fn layer_of(layers: &[Layer], module: &[String]) -> Option<usize> {
    let name = module_name(module);
    let mut best: Option<(usize, usize)> = None;
    for (index, (_, _, entries)) in layers.iter().enumerate() {
        for entry in *entries {
            let (entry, exact) = match entry.strip_suffix('!') {
                Some(entry) => (entry, true),
                None => (*entry, false),
            };
            let matches = name == entry || (!exact && name.starts_with(&format!("{entry}::")));
            let specificity = entry.split("::").count();
            if matches && best.is_none_or(|(_, s)| specificity > s) {
                best = Some((index, specificity));
            }
        }
    }
    best.map(|(index, _)| index)
}

/// Every import that runs back up `layers`, every module without a layer, every impurity.
fn violations(krate: &Crate, layers: &[Layer], pure: &[(&str, &[&str])]) -> Vec<String> {
    let tests = krate.test_modules();
    let mut found = Vec::new();
    for (module, source) in &krate.sources {
        if tests.contains(module) {
            continue;
        }
        let Some(here) = layer_of(layers, module) else {
            found.push(format!(
                "{}: module {} has no layer: add it to LAYERS in core/tests/layers.rs and to \
                 ARCHITECTURE.md's \"Layers\"",
                source.file,
                module_name(module)
            ));
            continue;
        };
        for named in source.uses.iter().chain(&source.inline) {
            let Some(path) = krate.absolute(module, &named.path) else { continue };
            let target = krate.definer(&path, 0);
            // The root's own items (VERSION, the defaults) are constants under everything;
            // whatever it re-exports is resolved to its definer above.
            let there = if target.is_empty() {
                0
            } else {
                match layer_of(layers, &target) {
                    Some(there) => there,
                    None => continue, // reported as a module without a layer
                }
            };
            if there > here {
                found.push(format!(
                    "{}:{}: `{}` — {} ({}) imports from {} ({}, above)",
                    source.file,
                    line_of(&source.code, named.offset),
                    named.path.join("::"),
                    module_name(module),
                    layers[here].0,
                    module_name(&target),
                    layers[there].0,
                ));
            }
        }
        for (pure_module, forbidden) in pure {
            if module_name(module) != *pure_module
                && !module_name(module).starts_with(&format!("{pure_module}::"))
            {
                continue;
            }
            for word in *forbidden {
                if let Some(offset) = source.code.find(word) {
                    found.push(format!(
                        "{}:{}: `{word}` in {pure_module}, which must stay pure",
                        source.file,
                        line_of(&source.code, offset)
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let krate = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(krate.sources.len() > 50, "read only {} modules", krate.sources.len());
    let found = violations(&krate, LAYERS, PURE);
    assert!(found.is_empty(), "the layers are broken:\n{}", found.join("\n"));
}

#[test]
fn every_layer_entry_names_a_module() {
    let krate = Crate::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let names: BTreeSet<String> = krate.sources.keys().map(|m| module_name(m)).collect();
    for (layer, _, entries) in LAYERS {
        for entry in *entries {
            let entry = entry.trim_end_matches('!');
            // A module in progress elsewhere may not be in this tree yet; the table's own
            // deposit, funding and onramp modules must be.
            if entry.starts_with("deposit")
                || entry.starts_with("funding")
                || entry.starts_with("onramp")
            {
                assert!(names.contains(entry), "layer {layer}: no module {entry}");
            }
        }
    }
}

/// A small crate of three layers to check the check itself.
const TOY: &[Layer] =
    &[("low", "", &["store"]), ("mid", "", &["engine"]), ("top", "", &["client", "crate!"])];

fn toy(files: &[(&str, &str)]) -> Vec<String> {
    let krate = Crate::from_texts(files.iter().map(|(p, t)| (PathBuf::from(p), (*t).to_owned())));
    violations(&krate, TOY, &[])
}

const TOY_ROOT: &str = "mod store; mod engine; mod client; pub use client::Client;";

#[test]
fn an_import_back_up_is_caught_in_every_spelling() {
    let store = |body: &str| {
        toy(&[
            ("lib.rs", TOY_ROOT),
            ("store.rs", body),
            ("engine.rs", ""),
            ("client.rs", "pub struct Client;"),
        ])
    };
    for back in [
        "use crate::client::Client;",
        "use super::client::Client;",
        "use crate::{client::{self, Client}};",
        "pub(crate) use crate::engine as e;",
        "fn f() -> crate::client::Client { crate::client::Client }",
        "fn f(_: &super::engine::X) {}",
        // Through the root's re-export: the definer counts, not the path.
        "use crate::Client;",
    ] {
        let found = store(back);
        assert!(!found.is_empty(), "{back}: not caught");
        assert!(found.iter().all(|f| f.starts_with("store.rs:1: ")), "{found:?}");
    }
    for fine in [
        "// use crate::client::Client;",
        "/// [`Client`](crate::client::Client)",
        "const S: &str = \"crate::client::Client\";",
        "const C: char = '\"'; const S: &str = \"super::client\";",
        "#[cfg(test)]\nmod tests {\n    use crate::client::Client;\n}",
        "#[cfg(test)]\nmod tests;",
        "use std::sync::Arc; use serde::Deserialize;",
        "pub(in crate::client) struct S;",
    ] {
        assert_eq!(store(fine), Vec::<String>::new(), "{fine}");
    }
    let upward = toy(&[
        ("lib.rs", TOY_ROOT),
        ("store.rs", ""),
        ("engine/mod.rs", "mod run; use crate::client::Client;"),
        ("engine/run.rs", "use super::Client;"),
        ("client.rs", "pub struct Client; use crate::engine::run;"),
    ]);
    assert_eq!(upward.len(), 2, "{upward:?}");
    let unassigned = toy(&[("lib.rs", TOY_ROOT), ("cache.rs", "")]);
    assert!(unassigned[0].contains("module cache has no layer"), "{unassigned:?}");
}
