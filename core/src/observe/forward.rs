//! Forwarding `tracing` records to a host's logging (the C callback, Python's `logging`): a
//! [`Layer`] over a [`LogSink`] that asks the sink first whether it wants a level and target,
//! so a record nobody wants costs one check and no formatting.

use std::sync::Arc;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::error::{Error, ErrorKind, Result};

/// Where the forwarded records go.
pub trait LogSink: Send + Sync + 'static {
    /// Whether a record of `level` from `target` would be kept: called for every record, so it
    /// must be cheap (an atomic or a cache, never a call into a host).
    fn enabled(&self, level: Level, target: &str) -> bool;
    /// A record that passed [`LogSink::enabled`], on whatever thread logged it.
    fn record(&self, record: &LogRecord<'_>);
}

/// One log record: its level, where it comes from, its message and structured fields (the
/// event's own, then those of its spans, innermost first: the client's `owner`).
#[derive(Debug)]
pub struct LogRecord<'a> {
    pub level: Level,
    /// The `tracing` target (the module path, `depositkit_core::deposit::records`).
    pub target: &'a str,
    pub message: String,
    pub fields: Map<String, Value>,
}

/// The logger a target's records go to: `depositkit.` and the module path after the crate
/// (`depositkit_core::deposit::records` → `depositkit.deposit.records`).
pub fn logger_name(target: &str) -> String {
    let rest = target.strip_prefix("depositkit_core").unwrap_or(target);
    let rest = rest.trim_start_matches("::").replace("::", ".");
    if rest.is_empty() { "depositkit".to_owned() } else { format!("depositkit.{rest}") }
}

/// The layer forwarding to a sink.
pub struct ForwardLayer<K> {
    sink: Arc<K>,
}

impl<K: LogSink> ForwardLayer<K> {
    pub fn new(sink: Arc<K>) -> Self {
        ForwardLayer { sink }
    }
}

/// A span's fields, kept in its extensions.
struct SpanFields(Map<String, Value>);

struct Visitor<'a> {
    fields: &'a mut Map<String, Value>,
    message: Option<&'a mut String>,
}

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // tracing hands over a message (its format_args, whose Debug is the text itself) and a
        // field recorded with `?value` this way: the caller chose that form.
        self.put(field, Value::String(AsRecorded(value).to_string()));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::String(value.to_owned()));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }
}

impl Visitor<'_> {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message"
            && let Some(message) = self.message.as_deref_mut()
        {
            *message = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            return;
        }
        self.fields.insert(field.name().to_owned(), value);
    }
}

impl<S, K> Layer<S> for ForwardLayer<K>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    K: LogSink,
{
    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        self.sink.enabled(*metadata.level(), metadata.target())
    }

    fn register_callsite(
        &self,
        _metadata: &'static Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        // Levels change at run time: ask `enabled` each time.
        tracing::subscriber::Interest::sometimes()
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = Map::new();
        attrs.record(&mut Visitor { fields: &mut fields, message: None });
        span.extensions_mut().insert(SpanFields(fields));
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let mut message = String::new();
        let mut fields = Map::new();
        event.record(&mut Visitor { fields: &mut fields, message: Some(&mut message) });
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                if let Some(own) = span.extensions().get::<SpanFields>() {
                    for (k, v) in &own.0 {
                        fields.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
        self.sink.record(&LogRecord {
            level: *metadata.level(),
            target: metadata.target(),
            message,
            fields,
        });
    }
}

/// Installs `sink` as the process's `tracing` subscriber (a registry with the forwarding
/// layer). Once per process; a process that already has a global subscriber (a Rust host's own)
/// keeps it and gets a [`ErrorKind::Configuration`] error.
pub fn install<K: LogSink>(sink: Arc<K>) -> Result<()> {
    let subscriber = tracing_subscriber::registry().with(ForwardLayer::new(sink));
    tracing::subscriber::set_global_default(subscriber).map_err(|_| {
        Error::new(
            ErrorKind::Configuration,
            "a tracing subscriber is already installed in this process",
        )
    })
}

/// The numeric level of the C API and the Python bridge: 1 error, 2 warn, 3 info, 4 debug,
/// 5 trace (0: off).
pub fn level_number(level: Level) -> u32 {
    match level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// A value tracing recorded in its Debug form, written as text.
struct AsRecorded<'a>(&'a dyn std::fmt::Debug);

impl std::fmt::Display for AsRecorded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loggers_are_named_after_the_module() {
        assert_eq!(logger_name("depositkit_core::deposit::records"), "depositkit.deposit.records");
        assert_eq!(logger_name("depositkit_core"), "depositkit");
        assert_eq!(logger_name("other::x"), "depositkit.other.x");
    }
}
