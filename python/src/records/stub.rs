//! The record classes' entries in `depositkit/_native.pyi`, rendered from their declarations
//! ([`py_record!`](super::py_record)).
//!
//! The file holds one marked region per group of [`super::STUBS`]:
//!
//! ```text
//! # BEGIN generated records: deposits (python/src/records/deposits.rs; scripts/gen-stubs.sh)
//! ...
//! # END generated records: deposits
//! ```
//!
//! Everything between the markers is generated; the rest of the file (the module's functions,
//! `DepositClient`, the `TypedDict`s and `Literal` aliases the records' types name) is written by
//! hand. `scripts/gen-stubs.sh` rewrites the regions (the test below with
//! `DEPOSITKIT_WRITE_STUBS=1`); `scripts/gen-stubs.sh --check`, `scripts/typecheck.sh` and
//! `cargo test` fail while the file is stale.

use std::fmt::Write as _;

/// A record class's entry in the stub file.
pub(crate) struct RecordStub {
    /// The class's Python name.
    pub(crate) name: &'static str,
    /// The class docstring, one `#[doc]` line each (a `///` line keeps its leading space).
    pub(crate) doc: &'static [&'static str],
    /// Whether the class is hashable (`__hash__`; every record has `__eq__`).
    pub(crate) hash: bool,
    /// The attributes (read-only properties), in declaration order.
    pub(crate) properties: &'static [MemberStub],
    /// The methods taking no argument but `self`, in declaration order.
    pub(crate) methods: &'static [MemberStub],
}

/// An attribute or method of a [`RecordStub`].
pub(crate) struct MemberStub {
    /// The Rust name: the Python name, raw (`r#type`) where it is a Rust keyword.
    pub(crate) name: &'static str,
    /// The Python type, as the stub writes it.
    pub(crate) ty: &'static str,
    /// The docstring, one `#[doc]` line each; none: `...` in the stub.
    pub(crate) doc: &'static [&'static str],
}

impl MemberStub {
    fn python_name(&self) -> &'static str {
        self.name.strip_prefix("r#").unwrap_or(self.name)
    }
}

impl RecordStub {
    /// The class as the stub file writes it, ending in a newline.
    pub(crate) fn render(&self) -> String {
        let mut out = format!("@final\nclass {}:\n", self.name);
        docstring(&mut out, self.doc, "    ");
        out.push('\n');
        for property in self.properties {
            out.push_str("    @property\n");
            member(&mut out, property);
        }
        for method in self.methods {
            member(&mut out, method);
        }
        out.push_str("    def __eq__(self, other: object, /) -> bool: ...\n");
        if self.hash {
            out.push_str("    def __hash__(self) -> int: ...\n");
        }
        out
    }
}

fn member(out: &mut String, member: &MemberStub) {
    let _ = write!(out, "    def {}(self) -> {}:", member.python_name(), member.ty);
    if member.doc.is_empty() {
        out.push_str(" ...\n");
    } else {
        out.push('\n');
        docstring(out, member.doc, "        ");
    }
}

/// `lines` (of `#[doc]` attributes: one leading space dropped, as pyo3 does) as a docstring at
/// `indent`: on one line when it is one; else the closing quotes end the last line, or stand on a
/// line of their own when the text has several paragraphs.
fn docstring(out: &mut String, lines: &[&str], indent: &str) {
    let lines: Vec<&str> =
        lines.iter().map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end()).collect();
    let paragraphs = lines.iter().any(|line| line.is_empty());
    for (i, line) in lines.iter().enumerate() {
        let open = if i == 0 { "\"\"\"" } else { "" };
        let close = if i + 1 == lines.len() && !paragraphs { "\"\"\"" } else { "" };
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{indent}{open}{line}{close}");
        }
    }
    if paragraphs {
        let _ = writeln!(out, "{indent}\"\"\"");
    }
}

/// The marker lines of `group`'s region.
fn markers(group: &str) -> (String, String) {
    let source = format!("python/src/records/{group}.rs; scripts/gen-stubs.sh");
    (
        format!("# BEGIN generated records: {group} ({source})"),
        format!("# END generated records: {group}"),
    )
}

/// `text` (the stub file) with each group's region holding its classes of `stubs`, in order.
/// An error names a group whose markers are missing, repeated or out of order.
pub(crate) fn update(text: &str, stubs: &[(&str, &RecordStub)]) -> Result<String, String> {
    let mut groups: Vec<&str> = Vec::new();
    for (group, _) in stubs {
        if !groups.contains(group) {
            groups.push(group);
        }
    }
    let mut text = text.to_owned();
    for group in groups {
        let (begin, end) = markers(group);
        let begin_prefix = format!("# BEGIN generated records: {group} ");
        let end_line = format!("{end}\n");
        let starts: Vec<usize> = line_starts(&text)
            .filter(|&i| text[i..].starts_with(&begin_prefix) || text[i..].starts_with(&end_line))
            .collect();
        let [start, stop] = starts[..] else {
            return Err(format!(
                "_native.pyi needs one line starting \"{begin_prefix}\" and then one line \"{end}\""
            ));
        };
        if !text[start..].starts_with(&begin_prefix) {
            return Err(format!("_native.pyi: \"{end}\" comes before the BEGIN line of {group}"));
        }
        let classes: Vec<String> =
            stubs.iter().filter(|(g, _)| *g == group).map(|(_, stub)| stub.render()).collect();
        let region = format!("{begin}\n{}{end_line}", classes.join("\n"));
        text.replace_range(start..stop + end_line.len(), &region);
    }
    Ok(text)
}

/// The byte offsets at which the lines of `text` start.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/py_src/depositkit/_native.pyi");

    /// `_native.pyi` holds what the declarations render. With `DEPOSITKIT_WRITE_STUBS=1`
    /// (`scripts/gen-stubs.sh`) it writes the regions instead of failing.
    #[test]
    fn native_pyi_matches_the_record_declarations() {
        let text = std::fs::read_to_string(PYI).expect("read _native.pyi");
        let updated = update(&text, crate::records::STUBS).unwrap_or_else(|e| panic!("{e}"));
        if updated == text {
            return;
        }
        if std::env::var_os("DEPOSITKIT_WRITE_STUBS").is_some_and(|v| v == "1") {
            std::fs::write(PYI, &updated).expect("write _native.pyi");
            println!("wrote the record classes of {PYI}");
            return;
        }
        let line = text.lines().zip(updated.lines()).position(|(a, b)| a != b).unwrap_or(0) + 1;
        panic!(
            "{PYI} is stale from line {line} on: the record classes' stubs differ from their \
             py_record! declarations (python/src/records/); run scripts/gen-stubs.sh"
        );
    }

    const SAMPLE: RecordStub = RecordStub {
        name: "Sample",
        doc: &[" One line", " and another.", "", " ``repr()`` is ``<Sample>``."],
        hash: true,
        properties: &[
            MemberStub { name: "r#type", ty: "Literal[\"sample\"]", doc: &[" The type."] },
            MemberStub { name: "size", ty: "int", doc: &[" How big,", " in bytes."] },
        ],
        methods: &[
            MemberStub { name: "to_dict", ty: "dict[str, Any]", doc: &[" A dict.", "", " More."] },
            MemberStub { name: "__len__", ty: "int", doc: &[] },
        ],
    };

    #[test]
    fn a_class_renders_as_the_stub_file_writes_it() {
        assert_eq!(
            SAMPLE.render(),
            r#"@final
class Sample:
    """One line
    and another.

    ``repr()`` is ``<Sample>``.
    """

    @property
    def type(self) -> Literal["sample"]:
        """The type."""
    @property
    def size(self) -> int:
        """How big,
        in bytes."""
    def to_dict(self) -> dict[str, Any]:
        """A dict.

        More.
        """
    def __len__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
"#
        );
    }

    #[test]
    fn regions_are_replaced_and_the_rest_kept() {
        let (begin, end) = markers("g");
        let text = format!("head\n{begin}\nold\n{end}\ntail\n");
        let updated = update(&text, &[("g", &SAMPLE), ("g", &SAMPLE)]).unwrap();
        let sample = SAMPLE.render();
        assert_eq!(updated, format!("head\n{begin}\n{sample}\n{sample}{end}\ntail\n"));
        assert_eq!(update(&updated, &[("g", &SAMPLE), ("g", &SAMPLE)]).unwrap(), updated);

        assert!(update("head\n", &[("g", &SAMPLE)]).unwrap_err().contains("needs one line"));
        let swapped = format!("{end}\n{begin}\n");
        assert!(update(&swapped, &[("g", &SAMPLE)]).unwrap_err().contains("comes before"));
        let twice = format!("{begin}\n{end}\n{begin}\n{end}\n");
        assert!(update(&twice, &[("g", &SAMPLE)]).is_err());
    }
}
