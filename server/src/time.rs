//! Timestamps: stored as milliseconds since the Unix epoch, shown as ISO 8601 UTC with
//! milliseconds (`2022-06-08T07:47:54.000Z`, spec §2).

use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::{Error, Result};

/// Milliseconds since the epoch of `t` (0 for times before it).
pub fn system_time_ms(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_ms(ms: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(ms) {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
        // Out of chrono's range: only reachable with a hand-edited database.
        None => format!("invalid timestamp {ms}"),
    }
}

/// Parses an RFC 3339 timestamp (any offset) into milliseconds since the epoch; `field`
/// names the value in the error.
pub fn parse_ms(field: &str, text: &str) -> Result<i64> {
    DateTime::parse_from_rfc3339(text).map(|t| t.timestamp_millis()).map_err(|e| {
        Error::invalid(
            field,
            format!(
                "{} is not an RFC 3339 timestamp like 2022-06-08T07:47:54.000Z ({e})",
                depositkit_core::describe::quote(text)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_milliseconds_and_z() {
        assert_eq!(format_ms(1_654_674_474_000), "2022-06-08T07:47:54.000Z");
        assert_eq!(format_ms(1_654_674_474_123), "2022-06-08T07:47:54.123Z");
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn parses_any_offset_and_round_trips() {
        assert_eq!(parse_ms("t", "2022-06-08T07:47:54.000Z").unwrap(), 1_654_674_474_000);
        assert_eq!(parse_ms("t", "2022-06-08T09:47:54.5+02:00").unwrap(), 1_654_674_474_500);
        let err = parse_ms("createdAt", "yesterday").unwrap_err().to_string();
        assert!(err.contains("createdAt") && err.contains("yesterday"), "{err}");
    }
}
