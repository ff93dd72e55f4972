//! Checks of the committed header and of the sources it is generated from that need no
//! cbindgen: the version macros equal the package version, every export is declared, every
//! export runs inside the boundary, and the header is plain ASCII. (`scripts/gen-header.sh
//! --check` compares the whole header with a fresh cbindgen run.)

use std::fs;
use std::path::Path;

fn header() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/depositkit.h");
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `(file name, text)` of every source file of the crate.
fn sources() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// `(name, body)` of every `extern "C" fn` in `text`; the body runs to the first line that is
/// exactly `}` (rustfmt style).
fn exports(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("extern \"C\" fn ") {
        let after = &rest[at + "extern \"C\" fn ".len()..];
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let end = after.find("\n}\n").map_or(after.len(), |e| e + 3);
        found.push((name, after[..end].to_owned()));
        rest = &after[end..];
    }
    found
}

#[test]
fn version_macros_equal_the_package_version() {
    let header = header();
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split(['.', '-', '+']);
    for part in ["MAJOR", "MINOR", "PATCH"] {
        let want = format!("#define DEPOSITKIT_VERSION_{part} {}\n", parts.next().unwrap());
        assert!(
            header.contains(&want),
            "include/depositkit.h lacks {want:?}: update after_includes in ffi/cbindgen.toml \
             to version {version}, then run scripts/gen-header.sh"
        );
    }
}

#[test]
fn every_export_is_declared_in_the_header() {
    let header = header();
    let mut count = 0;
    for (file, text) in sources() {
        for (name, _) in exports(&text) {
            assert!(name.starts_with("depositkit_"), "{file}: {name} lacks the prefix");
            assert!(
                header.contains(&format!(" {name}(")) || header.contains(&format!("*{name}(")),
                "{file}: {name} is not in include/depositkit.h; run scripts/gen-header.sh"
            );
            count += 1;
        }
    }
    assert!(count >= 19, "found only {count} exports");
}

#[test]
fn every_export_goes_through_the_boundary() {
    for (file, text) in sources() {
        for (name, body) in exports(&text) {
            assert!(
                body.contains("boundary::status(") || body.contains("boundary::value("),
                "{file}: {name} does not run inside boundary::status or boundary::value"
            );
            let before = &text[..text.find(&format!("fn {name}(")).unwrap()];
            let attrs = &before[before.rfind("\n\n").unwrap_or(0)..];
            assert!(
                attrs.contains("#[unsafe(no_mangle)]"),
                "{file}: {name} lacks #[unsafe(no_mangle)]"
            );
            if body[..body.find(')').unwrap()].contains('*') {
                assert!(
                    attrs.contains("pub unsafe extern \"C\"") && attrs.contains("/// # Safety"),
                    "{file}: {name} takes a pointer, so it must be `pub unsafe extern \"C\" fn` \
                     with a # Safety section"
                );
            }
        }
    }
}

#[test]
fn the_header_is_ascii() {
    let header = header();
    if let Some((line, text)) = header.lines().enumerate().find(|(_, l)| !l.is_ascii()) {
        panic!("include/depositkit.h line {} is not ASCII: {text}", line + 1);
    }
}
