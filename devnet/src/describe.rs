//! Describing values in error messages: quoted and cut short, or by JSON type.

use serde_json::Value;

/// Longest part of a value shown in a message.
const MAX_QUOTED_CHARS: usize = 80;

/// `text` in quotes, cut to 80 characters so a huge input cannot flood a message or a log.
pub(crate) fn quote(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_QUOTED_CHARS {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{head:?}… ({count} characters)")
    }
}

/// The JSON type of `value` with an article: "a number", "an array", "null".
pub(crate) fn json_kind(value: &Value) -> &'static str {
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
    fn long_text_is_cut() {
        assert_eq!(quote("ab"), "\"ab\"");
        let long = "x".repeat(200);
        let quoted = quote(&long);
        assert!(quoted.len() < 110 && quoted.ends_with("(200 characters)"), "{quoted}");
        assert_eq!(json_kind(&serde_json::json!([])), "an array");
    }
}
