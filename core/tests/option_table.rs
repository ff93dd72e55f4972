//! The faces of the one option table (`core/src/deposit/config/options.rs`), generated from it:
//!
//! - `docs/options.md`: the reference for every language;
//! - `python/py_src/depositkit/_native.pyi`: `DepositClient.__new__`'s keywords and their docs;
//! - `python/src/deposit/mod.rs`: the `text_signature` Python's `inspect` shows;
//! - `ffi/src/deposit/mod.rs`: the option list of `depositkit_deposit_client_new`'s documentation,
//!   from which `scripts/gen-header.sh` writes `include/depositkit.h`.
//!
//! Each is a region between `BEGIN generated` and `END generated` lines. This test fails when a
//! region differs from what the table makes; `DEPOSITKIT_BLESS=1 cargo test -p depositkit-core
//! --test option_table` rewrites them (then run `scripts/gen-header.sh`).

use std::path::{Path, PathBuf};

use depositkit_core::deposit::{NESTED_OPTION_NAMES, OPTIONS, OptionSpec};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `delay_ms` → `delayMs`, `min_value_usd` → `minValueUSD`.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .enumerate()
        .map(|(i, part)| match (i, part) {
            (0, _) => part.to_owned(),
            (_, "usd") => "USD".to_owned(),
            _ => part[..1].to_ascii_uppercase() + &part[1..],
        })
        .collect()
}

/// The doc with the option names inside backticks in the spec's spelling (for JSON and C):
/// option fields and nested keys, written in snake_case in the table.
fn spec_spelling(doc: &str) -> String {
    let renames: Vec<(String, String)> = OPTIONS
        .iter()
        .map(|spec| (spec.field.to_owned(), spec.name.to_owned()))
        .chain(NESTED_OPTION_NAMES.iter().map(|name| (snake(name), (*name).to_owned())))
        .chain([("render_item".to_owned(), "renderItem".to_owned())])
        .collect();
    let mut out = String::new();
    for (i, part) in doc.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 0 {
            out.push_str(part);
            continue;
        }
        // Inside backticks: rename whole words.
        let mut word = String::new();
        for c in part.chars().chain(std::iter::once('\0')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            match renames.iter().find(|(from, _)| *from == word) {
                Some((_, to)) => out.push_str(to),
                None => out.push_str(&word),
            }
            word.clear();
            if c != '\0' {
                out.push(c);
            }
        }
    }
    out
}

fn snake(camel: &str) -> String {
    let mut out = String::new();
    let mut previous: Option<char> = None;
    for c in camel.chars() {
        if c.is_ascii_uppercase() && previous.is_some_and(|p| p.is_ascii_lowercase()) {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
        previous = Some(c);
    }
    out
}

/// The doc as one paragraph.
fn paragraph(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` wrapped to `width` columns, the first line after `first`, the others after `indent`.
fn wrap(text: &str, first: &str, indent: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_owned();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > width {
            lines.push(line);
            line = indent.to_owned();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

/// The default as a Python literal; lists and objects show `None` (their default is the
/// documented one).
fn python_default(spec: &OptionSpec) -> String {
    match spec.default_value() {
        Value::Bool(true) => "True".to_owned(),
        Value::Number(n) => n.to_string(),
        _ => "None".to_owned(),
    }
}

/// The default as the reference shows it.
fn shown_default(spec: &OptionSpec) -> String {
    match spec.default_value() {
        Value::Null => "unset".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) if items.len() > 8 => format!("all {}", items.len()),
        Value::Object(_) => "see below".to_owned(),
        other => format!("`{other}`"),
    }
}

// --- the renderings ---------------------------------------------------------------------------

fn options_md() -> String {
    let mut out = String::from(
        "# Deposit client options\n\n\
         Every construction option of the deposit client, in every language. This page is\n\
         generated from the one option table, `core/src/deposit/config/options.rs`, by\n\
         `core/tests/option_table.rs` (`DEPOSITKIT_BLESS=1 cargo test -p depositkit-core --test\n\
         option_table`).\n\n\
         | Face | How options are given |\n\
         |---|---|\n\
         | JSON and C | `depositkit_deposit_client_new(config_json, ...)`: an object with the **spec name** as key |\n\
         | Python | `DepositClient(owner_address, destination, **options)`: the **Python keyword** (snake_case); nested dicts take snake_case or camelCase keys |\n\
         | Rust | `DepositClientConfig::new(owner, destination)` then the **builder** method, or the field, or `DepositClientConfig::from_json` |\n\n\
         `ownerAddress` (an EVM address) and `destination` (`{\"chainId\": 8453, \"address\": \"0x…\",\n\
         \"token\": \"USDC\"}`; `address` defaults to the owner, `token` to USDC) are required. In\n\
         Python, `on_deposit_event` takes a callable; in C, subscribe instead. A host signer (a KMS\n\
         callback) is `signer=depositkit.CallbackSigner(...)` in Python and\n\
         `depositkit_deposit_client_new_with_signer` in C (README, \"Production\"). `null`/`None` for an\n\
         option keeps its default. A bad value is a configuration error naming the option (in the\n\
         face's spelling) and the value; a value of the wrong type is one too (in Python a\n\
         `ConfigurationTypeError`, also a `TypeError`).\n\n\
         | Spec name (JSON, C) | Python keyword | Rust builder | Type (JSON) | Default |\n\
         |---|---|---|---|---|\n",
    );
    for spec in OPTIONS {
        out.push_str(&format!(
            "| [`{}`](#{}) | `{}` | `{}` | {} | {} |\n",
            spec.name,
            spec.name.to_ascii_lowercase(),
            spec.field,
            spec.builder,
            spec.kind.json_type(),
            shown_default(spec)
        ));
    }
    for spec in OPTIONS {
        out.push_str(&format!("\n## {}\n\n", spec.name));
        out.push_str(&format!(
            "Python `{}: Optional[{}]` · {}\n\n",
            spec.field,
            spec.kind.python_type(),
            spec.kind.json_type()
        ));
        for line in wrap(&paragraph(&spec_spelling(spec.doc)), "", "", 96) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

const PY_INTRO: &str = r#"    def __new__(
        cls,
        owner_address: str,
        destination: _DestinationLike,
        *,
        on_deposit_event: Optional[Callable[[DepositLifecycleEvent], object]] = None,
        signer: Optional[CallbackSigner] = None,
"#;

const PY_DOC_HEAD: &str = r#"    ) -> DepositClient:
        """A client for ``owner_address`` delivering to ``destination``. Nothing is sent yet:
        ``initialize()`` opens the session. ``None`` for any keyword means its default. Every
        option is listed, for every language, in ``docs/options.md``.

        Args:
            owner_address: the owner of the unified account, an EVM address (spec §4
                ``ownerAddress``).
            destination: where swept deposits go (spec §2 ``DestinationConfig``): a dict
                ``{"chain_id": CHAIN.ARBITRUM, "address": "0x…", "token": "USDC"}`` (keys in
                snake_case or camelCase; ``address`` defaults to the owner address, ``token`` to
                USDC), a ``depositkit.DestinationConfig``, or a bare chain id. The token must be
                deliverable on the chain (``is_supported_destination_token``); X Layer is never a
                destination; a Solana destination needs a Solana ``address`` (kept as given).
            on_deposit_event: called with every ``DepositLifecycleEvent`` (spec §4
                ``onDepositEvent``), on the event thread (see the class).
            signer: the owner's signer on the ``particle`` backend when the host keeps the key
                (a KMS, an HSM): a ``CallbackSigner``. It takes the place of ``particle``'s
                ``signer_key`` and ``signer_seed``.
"#;

const PY_DOC_TAIL: &str = r#"
        Raises:
            ConfigurationError: an option's value is invalid; the message names the option by
                its Python name (not the spec's camelCase one) and the value
                (``polling_interval_ms must be at least 2000 ms (and at most a day), got 500``).
                Cases: an owner that is not an EVM address; an unknown destination chain id
                (``Invalid destination chain ID: 7. ...``); X Layer or another non-destination
                chain; a token not deliverable on the chain (``destination.token USDT cannot be
                delivered on Base (8453); deliverable there: ETH, USDC``); an address invalid for
                the chain's type; an unknown token symbol; an unknown chain in
                ``supported_chains``; empty token or chain lists; a polling interval below the
                minimum; a negative or non-finite ``min_value_usd``; a URL that is not http(s) or
                carries credentials; an unknown key in a nested option dict. Also a
                ``ValueError``.
            ConfigurationTypeError: (a ``ConfigurationError`` that is also a ``TypeError``) an
                option of the wrong type, at the top level or in a nested dict
                (``polling_interval_ms`` given as ``str``, ``auto_sweep`` not a ``bool``, a
                non-callable ``on_deposit_event``, a callable in ``notifications``, ``"yes"`` for
                ``refund.enabled``), named as Python spells it.
            TypeError: an unknown keyword (Python's own call error).
        """
"#;

/// A doc paragraph for a docstring: Markdown backticks as reStructuredText literals, and
/// JSON's `true`/`false` as Python's.
fn rst(doc: &str) -> String {
    paragraph(doc)
        .split(' ')
        .map(|word| {
            let core = word.trim_end_matches([',', '.', ';', ':', ')']);
            match core {
                "true" => word.replacen("true", "True", 1),
                "false" => word.replacen("false", "False", 1),
                _ => word.replace('`', "``"),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn python_new() -> String {
    let mut out = String::from(PY_INTRO);
    for spec in OPTIONS {
        out.push_str(&format!(
            "        {}: Optional[{}] = {},\n",
            spec.field,
            spec.kind.python_type(),
            python_default(spec)
        ));
    }
    out.push_str(PY_DOC_HEAD);
    for spec in OPTIONS {
        let first = format!("            {}: ", spec.field);
        for line in wrap(&rst(spec.doc), &first, "                ", 100) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str(PY_DOC_TAIL);
    out
}

fn text_signature() -> String {
    let options: Vec<String> =
        OPTIONS.iter().map(|spec| format!("{}={}", spec.field, python_default(spec))).collect();
    format!(
        "        text_signature = \"(owner_address, destination, *, on_deposit_event=None, signer=None, {})\"\n",
        options.join(", ")
    )
}

/// The header is ASCII (`ffi/tests/header.rs`).
fn ascii(text: &str) -> String {
    text.replace("§", "section ").replace('–', "-").replace('→', "->").replace('…', "...")
}

fn ffi_doc() -> String {
    let mut out = String::new();
    for spec in OPTIONS {
        let first = format!(
            "/// - `{}` ({}, default {}): ",
            spec.name,
            spec.kind.json_type(),
            shown_default(spec)
        );
        for line in wrap(&ascii(&paragraph(&spec_spelling(spec.doc))), &first, "///   ", 100) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

// --- regions ----------------------------------------------------------------------------------

/// Replaces the lines strictly between the `BEGIN generated` and `END generated` lines whose
/// text contains `tag`.
fn with_region(text: &str, tag: &str, body: &str) -> String {
    let begin = format!("BEGIN generated {tag}");
    let end = format!("END generated {tag}");
    let start = text.find(&begin).unwrap_or_else(|| panic!("no {begin:?} marker"));
    let start = start + text[start..].find('\n').unwrap() + 1;
    let stop = text[start..].find(&end).unwrap_or_else(|| panic!("no {end:?} marker")) + start;
    let stop = text[..stop].rfind('\n').map_or(stop, |i| i + 1);
    format!("{}{}{}", &text[..start], body, &text[stop..])
}

fn check(path: &str, tag: Option<&str>, body: String) -> Option<String> {
    let file = root().join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let want = match tag {
        Some(tag) => with_region(&text, tag, &body),
        None => body,
    };
    if want == text {
        return None;
    }
    if std::env::var_os("DEPOSITKIT_BLESS").is_some() {
        std::fs::write(&file, want).unwrap();
        return None;
    }
    Some(path.to_owned())
}

#[test]
fn generated_faces_match_the_option_table() {
    let stale: Vec<String> = [
        check("docs/options.md", None, options_md()),
        check("python/py_src/depositkit/_native.pyi", Some("DepositClient.__new__"), python_new()),
        check("python/src/deposit/mod.rs", Some("text_signature"), text_signature()),
        check("ffi/src/deposit/mod.rs", Some("options"), ffi_doc()),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(
        stale.is_empty(),
        "stale generated option docs in {stale:?}: run `DEPOSITKIT_BLESS=1 cargo test -p \
         depositkit-core --test option_table`, then `scripts/gen-header.sh`"
    );
}

#[test]
fn spec_spelling_renames_only_option_names() {
    assert_eq!(
        spec_spelling("at least `min_polling_interval_ms`, `<store_path>-lock`, `below_threshold`"),
        "at least `minPollingIntervalMs`, `<storePath>-lock`, `below_threshold`"
    );
    assert_eq!(camel("min_value_usd"), "minValueUSD");
}
