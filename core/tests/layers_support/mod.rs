//! The reading of the crate's sources for `layers.rs`: code without comments, literals and
//! test modules; the paths each module names (its `use` trees and its `crate::`, `super::`,
//! `self::` paths); and where each path leads, to the module that defines the item (through
//! `super`, child modules and re-exports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub type Module = Vec<String>;

pub fn module_name(module: &[String]) -> String {
    if module.is_empty() { "crate".to_owned() } else { module.join("::") }
}

/// The module a source file is, from its path under `src`.
fn module_of(relative: &Path) -> Module {
    let mut parts: Vec<String> =
        relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with comments, string and character literals blanked (newlines kept, so that
/// positions keep their line numbers).
fn blank_non_code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && raw_string_at(&chars, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            out.push('"');
            i = j + 1;
            while i < chars.len() {
                if chars[i] == '"' && (0..hashes).all(|h| chars.get(i + 1 + h) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push('"');
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // A character literal with an escape: '\n', '\'', '\u{..}'.
            out.push(' ');
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push_str("  ");
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            // A one-character literal ('"', '{'); a lifetime ('a) has no closing quote there.
            out.push_str("   ");
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether a raw string literal (`r"…"`, `r#"…"#`) starts at `i` (and not an identifier
/// ending in `r`).
fn raw_string_at(chars: &[char], i: usize) -> bool {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    chars.get(j) == Some(&'"')
}

/// The code of a file: comments and literals blanked, inline test modules
/// (`#[cfg(test)] mod name { … }`) blanked; and the names of its out-of-line test modules
/// (`#[cfg(test)] mod name;`).
fn code_of(text: &str) -> (String, Vec<String>) {
    let mut code: Vec<char> = blank_non_code(text).chars().collect();
    let mut test_children = Vec::new();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + marker.len() <= code.len() {
        if code[i..i + marker.len()] != marker[..] {
            i += 1;
            continue;
        }
        let mut j = i + marker.len();
        while j < code.len() && code[j].is_whitespace() {
            j += 1;
        }
        let rest: String = code[j..code.len().min(j + 200)].iter().collect();
        let item = rest.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        let Some(after_mod) = item.strip_prefix("mod ") else {
            i += 1;
            continue;
        };
        let name: String =
            after_mod.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let after_name = after_mod[name.len()..].trim_start();
        if after_name.starts_with(';') {
            test_children.push(name);
            i += 1;
            continue;
        }
        // An inline test module: blank it to its closing brace.
        let Some(open) = code[j..].iter().position(|c| *c == '{').map(|p| p + j) else { break };
        let mut depth = 0;
        let mut end = open;
        for (k, c) in code.iter().enumerate().skip(open) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        for c in &mut code[i..=end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = end + 1;
    }
    (code.into_iter().collect(), test_children)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Path,
    Open,
    Close,
    Comma,
    Star,
    Semi,
    Other,
}

/// The tokens of `code` with the byte offset of each.
fn tokens(code: &str) -> Vec<(usize, Token)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((start, Token::Ident(code[start..i].to_owned())));
            continue;
        }
        let token = match c {
            b':' if bytes.get(i + 1) == Some(&b':') => {
                out.push((i, Token::Path));
                i += 2;
                continue;
            }
            b'{' => Token::Open,
            b'}' => Token::Close,
            b',' => Token::Comma,
            b'*' => Token::Star,
            b';' => Token::Semi,
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => Token::Other,
        };
        out.push((i, token));
        i += 1;
    }
    out
}

/// One path a file names: the path as written, the name it binds (for `use`), and where.
#[derive(Debug, Clone)]
pub struct Named {
    pub path: Vec<String>,
    binds: Option<String>,
    pub offset: usize,
}

/// Expands a `use` tree starting at `tokens[*at]` under `prefix`.
fn expand_tree(tokens: &[(usize, Token)], at: &mut usize, prefix: &[String], out: &mut Vec<Named>) {
    let mut path = prefix.to_vec();
    let offset = tokens.get(*at).map_or(0, |t| t.0);
    loop {
        match tokens.get(*at).map(|t| &t.1) {
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                *at += 1;
                if tokens.get(*at).map(|t| &t.1) == Some(&Token::Path) {
                    *at += 1;
                    continue;
                }
                let mut binds = path.last().cloned();
                if tokens.get(*at).map(|t| &t.1) == Some(&Token::Ident("as".to_owned())) {
                    binds = match tokens.get(*at + 1).map(|t| &t.1) {
                        Some(Token::Ident(alias)) => Some(alias.clone()),
                        _ => None,
                    };
                    *at += 2;
                }
                if path.last().is_some_and(|p| p == "self") {
                    path.pop();
                    binds = path.last().cloned();
                }
                out.push(Named { path, binds, offset });
                return;
            }
            Some(Token::Star) => {
                *at += 1;
                out.push(Named { path, binds: None, offset });
                return;
            }
            Some(Token::Open) => {
                *at += 1;
                loop {
                    match tokens.get(*at).map(|t| &t.1) {
                        Some(Token::Close) => {
                            *at += 1;
                            return;
                        }
                        Some(Token::Comma) => *at += 1,
                        None | Some(Token::Semi) => return,
                        _ => expand_tree(tokens, at, &path, out),
                    }
                }
            }
            _ => return,
        }
    }
}

/// The `use` paths of `code` and the other `crate::`/`super::`/`self::` paths in it.
fn named_paths(code: &str) -> (Vec<Named>, Vec<Named>) {
    let tokens = tokens(code);
    let mut uses = Vec::new();
    let mut inline = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].1 {
            Token::Ident(word) if word == "use" => {
                i += 1;
                if tokens.get(i).map(|t| &t.1) == Some(&Token::Path) {
                    i += 1; // `use ::std::…`
                }
                expand_tree(&tokens, &mut i, &[], &mut uses);
            }
            // A visibility (`pub(in crate::deposit)`) is no import.
            Token::Ident(word) if word == "in" => i += 2,
            Token::Ident(word)
                if (word == "crate" || word == "super" || word == "self")
                    && tokens.get(i + 1).map(|t| &t.1) == Some(&Token::Path) =>
            {
                let offset = tokens[i].0;
                let mut path = vec![word.clone()];
                i += 1;
                while tokens.get(i).map(|t| &t.1) == Some(&Token::Path) {
                    match tokens.get(i + 1).map(|t| &t.1) {
                        Some(Token::Ident(name)) => {
                            path.push(name.clone());
                            i += 2;
                        }
                        _ => break,
                    }
                }
                inline.push(Named { path, binds: None, offset });
            }
            _ => i += 1,
        }
    }
    (uses, inline)
}

/// A source file as the check sees it.
pub struct Source {
    pub file: String,
    pub code: String,
    test_children: Vec<String>,
    pub uses: Vec<Named>,
    pub inline: Vec<Named>,
}

/// The crate as the check sees it: every module's source.
pub struct Crate {
    pub sources: BTreeMap<Module, Source>,
}

impl Crate {
    pub fn read(src: &Path) -> Crate {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        let texts = files.into_iter().map(|path| {
            let relative = path.strip_prefix(src).unwrap().to_path_buf();
            (relative, std::fs::read_to_string(&path).unwrap())
        });
        Crate::from_texts(texts)
    }

    pub fn from_texts(texts: impl IntoIterator<Item = (PathBuf, String)>) -> Crate {
        let mut sources = BTreeMap::new();
        for (relative, text) in texts {
            let (code, test_children) = code_of(&text);
            let (uses, inline) = named_paths(&code);
            let file = relative.to_string_lossy().into_owned();
            sources
                .insert(module_of(&relative), Source { file, code, test_children, uses, inline });
        }
        Crate { sources }
    }

    /// Modules that only tests compile (and everything under them).
    pub fn test_modules(&self) -> BTreeSet<Module> {
        let mut out = BTreeSet::new();
        for (module, source) in &self.sources {
            for child in &source.test_children {
                let mut path = module.clone();
                path.push(child.clone());
                out.insert(path);
            }
        }
        let roots: Vec<Module> = out.iter().cloned().collect();
        for module in self.sources.keys() {
            if roots.iter().any(|root| module.starts_with(root)) {
                out.insert(module.clone());
            }
        }
        out
    }

    /// The absolute path of `path` as written in module `here`; `None` for another crate's.
    pub fn absolute(&self, here: &[String], path: &[String]) -> Option<Vec<String>> {
        let mut base: Vec<String> = here.to_vec();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &path[1..];
            }
            Some("self") => rest = &path[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // 2018 paths: a child module of `here`, else another crate.
                let mut child = here.to_vec();
                child.push(first.to_owned());
                if !self.sources.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that defines what `path` (absolute) names: the deepest module on the path,
    /// or, when the path goes on past it, the module the name there was imported from.
    pub fn definer(&self, path: &[String], depth: usize) -> Module {
        let mut module: Module = Vec::new();
        for (i, _) in path.iter().enumerate() {
            if self.sources.contains_key(&path[..=i]) {
                module = path[..=i].to_vec();
            } else {
                break;
            }
        }
        let rest = &path[module.len()..];
        let (Some(name), Some(source)) = (rest.first(), self.sources.get(&module)) else {
            return module;
        };
        if depth > 8 {
            return module;
        }
        for named in &source.uses {
            if named.binds.as_ref() == Some(name)
                && let Some(target) = self.absolute(&module, &named.path)
            {
                let mut target = target;
                target.extend(rest[1..].iter().cloned());
                return self.definer(&target, depth + 1);
            }
        }
        module
    }
}

pub fn line_of(code: &str, offset: usize) -> usize {
    code[..offset.min(code.len())].matches('\n').count() + 1
}
