//! Describing values in messages: quoted and cut short, or by JSON type. Shared by every
//! message depositkit (and devnet) writes, so a huge input can never flood a message or a log.

use serde_json::Value;

/// Longest part of a value shown in a message.
const MAX_QUOTED_CHARS: usize = 80;

/// `text` in quotes, cut to 80 characters with the full length noted.
pub fn quote(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_QUOTED_CHARS {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{head:?}… ({count} characters)")
    }
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
    fn json_kinds() {
        assert_eq!(json_kind(&serde_json::json!([1])), "an array");
        assert_eq!(json_kind(&Value::Null), "null");
    }
}
