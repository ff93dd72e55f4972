//! Describing values in error messages: quoted and cut short, or by JSON type.

pub(crate) use depositkit_core::describe::{json_kind, quote};

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
