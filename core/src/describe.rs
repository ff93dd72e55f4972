//! Describing values in messages: quoted and cut short, or by JSON type. Shared by every
//! message depositkit (and devnet) writes, so a huge input can never flood a message or a log.

use serde_json::Value;

/// Longest part of a value shown in a message.
const MAX_QUOTED_CHARS: usize = 80;

/// `text` in quotes, cut to 80 characters with the full length noted.
pub fn quote(text: &str) -> String {
    quote_within(text, MAX_QUOTED_CHARS)
}

/// `text` in quotes, cut to `max` characters with the full length noted.
fn quote_within(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(max).collect();
        format!("{head:?}… ({count} characters)")
    }
}

/// `text` cut to `max` characters with an ellipsis (no quotes: for text that is already a
/// value's own rendering, such as a Python `repr` or a service's error code).
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}…")
}

/// Longest quoted part a message keeps whole: room for a long file path, which must be shown
/// whole to be of use, while a value echoed from input is cut at 80 by [`quote`].
const MAX_QUOTED_SPAN_CHARS: usize = 300;

/// A file path in quotes, whole up to 300 characters.
pub fn quote_path(path: &std::path::Path) -> String {
    quote_within(&path.display().to_string(), MAX_QUOTED_SPAN_CHARS)
}

/// Longest message an error carries; past it the message is cut in the middle.
pub const MAX_MESSAGE_CHARS: usize = 1000;

/// `message` with every quoted part (between backticks, as serde quotes names, or between
/// double quotes) cut to 300 characters, and the whole cut to [`MAX_MESSAGE_CHARS`]. Every
/// [`Error`](crate::Error) passes its message through here, so a parser that echoes its input
/// (serde's "unknown field `…`", a service's error text) cannot make a message of any size.
pub fn bound_message(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len().min(4 * MAX_MESSAGE_CHARS));
    let mut i = 0;
    while i < chars.len() {
        let open = chars[i];
        out.push(open);
        i += 1;
        if open != '`' && open != '"' {
            continue;
        }
        // The quoted part runs to the matching close (a `\"` inside double quotes is escaped).
        let start = i;
        while i < chars.len() && chars[i] != open {
            i += if open == '"' && chars[i] == '\\' { 2 } else { 1 };
        }
        let end = i.min(chars.len());
        let inner = &chars[start..end];
        if inner.len() > MAX_QUOTED_SPAN_CHARS {
            out.extend(&inner[..MAX_QUOTED_SPAN_CHARS]);
            out.push('…');
            if i < chars.len() {
                out.push(open);
            }
            out.push_str(&format!(" ({} characters)", inner.len()));
        } else {
            out.extend(inner);
            if i < chars.len() {
                out.push(open);
            }
        }
        i += 1;
    }
    let count = out.chars().count();
    if count <= MAX_MESSAGE_CHARS {
        return out;
    }
    let keep = MAX_MESSAGE_CHARS / 2 - 20;
    let head: String = out.chars().take(keep).collect();
    let tail: String = out.chars().skip(count - keep).collect();
    format!("{head} … ({count} characters) … {tail}")
}

/// A duration as people write it: "250 ms", "2 s", "1.5 s" (never Rust's `Debug` form).
pub fn duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        format!("{} µs", d.as_micros())
    } else if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

/// One character in quotes, control characters escaped: `'x'`, `'\n'`.
pub fn quote_char(c: char) -> String {
    let escaped: String = c.escape_debug().collect();
    format!("'{escaped}'")
}

/// The JSON type of `value` with an article: "a number", "an array", "null".
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_input_is_quoted_short() {
        assert_eq!(quote("ab"), "\"ab\"");
        let q = quote(&"x".repeat(10_000));
        assert!(q.len() < 120, "{q}");
        assert!(q.ends_with("(10000 characters)"));
    }

    #[test]
    fn quoted_parts_of_messages_are_cut() {
        let name = "k".repeat(1500);
        let path = format!("/{}", "d".repeat(250));
        assert_eq!(bound_message(&quote_path(std::path::Path::new(&path))), format!("{path:?}"));
        let serde = format!("unknown field `{name}`, expected one of `a`, `b` at line 1");
        let bounded = bound_message(&serde);
        assert!(bounded.chars().count() < 400, "{bounded}");
        assert!(bounded.starts_with("unknown field `kkkk"), "{bounded}");
        assert!(bounded.contains("…` (1500 characters), expected one of `a`, `b`"), "{bounded}");
        let quoted = format!("bad value \"{}\\\"{}\" here", "q".repeat(300), "r");
        let bounded = bound_message(&quoted);
        assert!(bounded.ends_with("(303 characters) here"), "{bounded}");
        assert_eq!(bound_message("plain `a` and \"b\""), "plain `a` and \"b\"");
        assert_eq!(bound_message("unclosed `abc"), "unclosed `abc");
        let long = "word ".repeat(1000);
        let bounded = bound_message(&long);
        assert!(bounded.chars().count() <= MAX_MESSAGE_CHARS, "{}", bounded.len());
        assert!(bounded.contains("(5000 characters)"));
    }

    #[test]
    fn durations_and_characters() {
        use std::time::Duration;
        assert_eq!(duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(duration(Duration::from_secs(2)), "2 s");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(duration(Duration::from_micros(20)), "20 µs");
        assert_eq!(quote_char('x'), "'x'");
        assert_eq!(quote_char('\n'), "'\\n'");
    }

    #[test]
    fn json_kinds() {
        assert_eq!(json_kind(&serde_json::json!([1])), "an array");
        assert_eq!(json_kind(&Value::Null), "null");
    }
}
