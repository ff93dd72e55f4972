//! The checks that several options share: text, USD amounts, delays, URLs.

use crate::describe::quote;
use crate::error::{Error, Result};

use super::MAX_DELAY_MS;

pub(crate) fn check_text(option: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::configuration(format!("{option} is empty")));
    }
    if value.chars().any(char::is_control) {
        return Err(Error::configuration(format!(
            "{option} contains control characters: {}",
            quote(value)
        )));
    }
    Ok(())
}

pub(crate) fn check_usd(option: &str, value: f64) -> Result<()> {
    if !value.is_finite() || value < 0.0 {
        return Err(Error::configuration(format!(
            "{option} must be a finite number of at least 0, got {value}"
        )));
    }
    Ok(())
}

pub(crate) fn check_delay(option: &str, value: u64) -> Result<()> {
    if value > MAX_DELAY_MS {
        return Err(Error::configuration(format!("{option} must be at most a day, got {value}")));
    }
    Ok(())
}

/// Checks an `http://` or `https://` URL without credentials; the value is echoed only when it
/// carries none.
pub(crate) fn check_url(option: &str, url: &str) -> Result<()> {
    let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
        return Err(Error::configuration(format!(
            "{option} must be an http:// or https:// URL, got {}",
            quote(url)
        )));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Err(Error::configuration(format!(
            "{option} must not carry credentials in the URL"
        )));
    }
    if authority.is_empty() || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::configuration(format!("{option} is not a valid URL: {}", quote(url))));
    }
    Ok(())
}
