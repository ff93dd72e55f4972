//! [`WeakRegistry`]: objects the clients of a process share by key — an HTTP agent per
//! setting, a balance poller per service, a JWKS cache per URL, a SQLite store per file.
//!
//! Entries are held weakly: an object lives as long as a client holds it and goes with the last
//! one (a process that makes clients of ever new services does not keep an agent, a poller or
//! an open file per service it ever used). The map is keyed by process id too: in a forked
//! child the parent's objects (held by inherited clients, which a child never uses) are not
//! handed out again — the child makes its own.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, Weak};

/// The entries of one process: its id and the map.
type Entries<K, V> = Option<(u32, HashMap<K, Weak<V>>)>;

/// A process-wide map from `K` to shared, weakly held `V`s.
pub(crate) struct WeakRegistry<K, V> {
    entries: Mutex<Entries<K, V>>,
}

impl<K: Eq + Hash, V> WeakRegistry<K, V> {
    /// An empty registry (for a `static`).
    pub const fn new() -> Self {
        WeakRegistry { entries: Mutex::new(None) }
    }

    /// The live object of `key`, or a new one from `make` (run under the registry's lock, so
    /// two callers never make two objects of one key). A failed `make` registers nothing.
    pub fn get_or_try_insert<E>(
        &self,
        key: K,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<Arc<V>, E> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        if entries.as_ref().is_none_or(|(owner, _)| *owner != pid) {
            *entries = Some((pid, HashMap::new()));
        }
        let Some((_, map)) = entries.as_mut() else { unreachable!("just set") };
        // Objects no client holds any more leave the map, so it does not only grow.
        map.retain(|_, entry| entry.strong_count() > 0);
        if let Some(live) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(live);
        }
        let made = Arc::new(make()?);
        map.insert(key, Arc::downgrade(&made));
        Ok(made)
    }

    /// [`get_or_try_insert`](WeakRegistry::get_or_try_insert) with a `make` that cannot fail.
    pub fn get_or_insert(&self, key: K, make: impl FnOnce() -> V) -> Arc<V> {
        match self.get_or_try_insert(key, || Ok::<V, std::convert::Infallible>(make())) {
            Ok(value) => value,
            Err(never) => match never {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_live_objects_and_forgets_dropped_ones() {
        static REGISTRY: WeakRegistry<&str, String> = WeakRegistry::new();
        let a = REGISTRY.get_or_insert("a", || "first".to_owned());
        let again = REGISTRY.get_or_insert("a", || "second".to_owned());
        assert!(Arc::ptr_eq(&a, &again), "one object per key while it is held");
        drop((a, again));
        assert_eq!(*REGISTRY.get_or_insert("a", || "third".to_owned()), "third");
        let failed: Result<_, &str> = REGISTRY.get_or_try_insert("b", || Err("no"));
        assert_eq!(failed.err(), Some("no"));
        assert_eq!(*REGISTRY.get_or_insert("b", || "made".to_owned()), "made");
    }
}
