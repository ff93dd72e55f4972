//! The password of a fleet's database URL: found in each of the URL's forms, replaced by `***`
//! where the URL is shown, and scrubbed from every message.

/// The passwords of a database URL, scrubbed from everything shown.
#[derive(Debug, Clone, Default)]
pub(super) struct Secrets(Vec<String>);

/// Where the passwords of `url` are (byte ranges): its user info's
/// (`postgres://user:PASSWORD@host`) and every `password=` parameter (URL query or libpq's
/// `key=value` form, quoted or not).
fn password_spans(url: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    if let Some(scheme_end) = url.find("://").map(|at| at + 3) {
        let rest = &url[scheme_end..];
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        if let Some((user_info, _)) = authority.rsplit_once('@')
            && let Some(colon) = user_info.find(':')
        {
            spans.push(scheme_end + colon + 1..scheme_end + user_info.len());
        }
    }
    let key = "password=";
    let mut from = 0;
    while let Some(at) = url[from..].find(key).map(|at| from + at + key.len()) {
        let value = &url[at..];
        let (start, len) = match value.strip_prefix('\'') {
            Some(quoted) => (at + 1, quoted.find('\'').unwrap_or(quoted.len())),
            None => (at, value.find(['&', ' ']).unwrap_or(value.len())),
        };
        spans.push(start..start + len);
        from = start + len;
    }
    spans.retain(|span| !span.is_empty());
    spans
}

/// `url` with each password replaced by `***`.
pub(super) fn redacted(url: &str) -> String {
    let mut shown = url.to_owned();
    let mut spans = password_spans(url);
    spans.sort_by_key(|span| std::cmp::Reverse(span.start));
    for span in spans {
        shown.replace_range(span, "***");
    }
    shown
}

impl Secrets {
    pub(super) fn of(url: &str) -> Secrets {
        let mut found: Vec<String> =
            password_spans(url).into_iter().map(|span| url[span].to_owned()).collect();
        // Longest first, so that a password containing another is replaced whole.
        found.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        Secrets(found)
    }

    /// `text` with every password replaced by `***`.
    pub(super) fn scrub(&self, text: &str) -> String {
        self.0.iter().fold(text.to_owned(), |text, secret| text.replace(secret.as_str(), "***"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_found_in_every_form_and_redacted() {
        let url = "postgres://app:s3cret@db.internal:5432/deposits?sslmode=require";
        assert_eq!(redacted(url), "postgres://app:***@db.internal:5432/deposits?sslmode=require");
        assert_eq!(Secrets::of(url).scrub("at s3cret: no"), "at ***: no");
        let query = "postgresql://app@db/deposits?password=hunter2&sslmode=disable";
        assert_eq!(redacted(query), "postgresql://app@db/deposits?password=***&sslmode=disable");
        let keywords = "host=db user=app password='pa ss' dbname=x";
        assert_eq!(redacted(keywords), "host=db user=app password='***' dbname=x");
        // A one-letter password is replaced where it is, not wherever the letter occurs.
        assert_eq!(redacted("postgres://app:p@db/p"), "postgres://app:***@db/p");
        let plain = "postgres://app@db/deposits";
        assert_eq!(redacted(plain), plain);
        assert_eq!(Secrets::of(plain).scrub(plain), plain);
    }
}
