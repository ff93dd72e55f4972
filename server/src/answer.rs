//! What a method call answers — a User record or a boolean — and its JSON, written straight to
//! the response bytes. The bytes are the ones the server wrote when it turned the answer into a
//! `serde_json::Value` first (and still does for batches): the User record's keys in sorted
//! order, as `serde_json`'s map keeps them, absent profile fields as `null`. Skipping the
//! `Value` saves a map of 28 entries per `getUserInfo` (issue 19, `docs/benchmarks.md`).

use std::sync::LazyLock;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::records::{Profile, User};

/// The `result` of a successful call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `getUserInfo`, `getUserInfoByIdentity`.
    User(Box<User>),
    /// `isProjectUser`.
    Member(bool),
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Answer::User(user) => SortedUser(user).serialize(serializer),
            Answer::Member(member) => serializer.serialize_bool(*member),
        }
    }
}

/// A field of the User record.
#[derive(Clone, Copy)]
enum Field {
    Uuid,
    /// The profile field at this index of [`Profile::FIELDS`].
    Profile(usize),
    CreatedAt,
    UpdatedAt,
    Wallets,
}

/// The User record's JSON names and fields, sorted by name (built once).
static SORTED_FIELDS: LazyLock<Vec<(&'static str, Field)>> = LazyLock::new(|| {
    let mut fields = vec![
        ("uuid", Field::Uuid),
        ("createdAt", Field::CreatedAt),
        ("updatedAt", Field::UpdatedAt),
        ("wallets", Field::Wallets),
    ];
    fields.extend(Profile::FIELDS.iter().enumerate().map(|(i, name)| (*name, Field::Profile(i))));
    fields.sort_unstable_by_key(|(name, _)| *name);
    fields
});

/// A User record serialized with its keys sorted.
struct SortedUser<'a>(&'a User);

impl Serialize for SortedUser<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let user = self.0;
        let profile = user.profile.values();
        let mut map = serializer.serialize_map(Some(SORTED_FIELDS.len()))?;
        for (name, field) in SORTED_FIELDS.iter() {
            match field {
                Field::Uuid => map.serialize_entry(name, &user.uuid)?,
                Field::Profile(i) => map.serialize_entry(name, &profile[*i])?,
                Field::CreatedAt => map.serialize_entry(name, &user.created_at)?,
                Field::UpdatedAt => map.serialize_entry(name, &user.updated_at)?,
                Field::Wallets => map.serialize_entry(name, &user.wallets)?,
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Wallet;

    /// The bytes are those of the record turned into a `serde_json::Value` first.
    #[test]
    fn a_user_is_written_as_its_value_would_be() {
        let bare = User {
            uuid: "0b0c1a9e-8f7d-4e3a-9b2c-1d0e9f8a7b6c".into(),
            profile: Profile::with_email("a@example.com"),
            created_at: "2022-06-08T07:47:54.000Z".into(),
            updated_at: "2022-06-09T07:47:54.123Z".into(),
            wallets: Vec::new(),
        };
        let full = User {
            profile: Profile::from_values(std::array::from_fn(|i| {
                Some(format!("v{i} \"quoted\" \u{e9} \\ \u{1f600}"))
            })),
            wallets: vec![
                Wallet {
                    chain: "solana".into(),
                    public_address: "11111111111111111111111111111111".into(),
                },
                Wallet { chain: "evm_chain".into(), public_address: "0xabc".into() },
            ],
            ..bare.clone()
        };
        for user in [bare, full] {
            let answer = Answer::User(Box::new(user.clone()));
            let value = serde_json::to_value(&user).unwrap();
            assert_eq!(serde_json::to_string(&answer).unwrap(), value.to_string());
            assert_eq!(serde_json::to_value(&answer).unwrap(), value);
        }
        assert_eq!(serde_json::to_string(&Answer::Member(true)).unwrap(), "true");
    }
}
