//! Identifier newtypes.
//!
//! Identifiers name directories and files under `.cocode/` (for example
//! `history/tasks/<task_id>/`), so every textual id is validated on
//! construction *and* on deserialization: 1–64 characters from
//! `[A-Za-z0-9_-]`. A persisted record can therefore never smuggle a path
//! separator or `..` into a storage path.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest accepted textual identifier.
pub const MAX_ID_LEN: usize = 64;

/// Why a textual identifier was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("identifier is empty")]
    Empty,
    #[error("identifier is longer than {MAX_ID_LEN} characters")]
    TooLong,
    #[error("identifier contains {0:?}; only ASCII letters, digits, '_' and '-' are allowed")]
    InvalidChar(char),
}

fn validate_id(value: &str) -> Result<(), IdError> {
    if value.is_empty() {
        return Err(IdError::Empty);
    }
    if value.len() > MAX_ID_LEN {
        return Err(IdError::TooLong);
    }
    match value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        Some(c) => Err(IdError::InvalidChar(c)),
        None => Ok(()),
    }
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates and wraps an identifier.
            pub fn new(value: impl Into<String>) -> Result<Self, IdError> {
                let value = value.into();
                validate_id(&value)?;
                Ok(Self(value))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::new(value)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }
    };
}

string_id!(
    /// A delegated task.
    TaskId
);
string_id!(
    /// One stored `EditSnapshot`.
    SnapshotId
);
string_id!(
    /// One agent session (built-in run or ACP session) of a task.
    SessionId
);
string_id!(
    /// One gate or rollback operation (journal file name).
    OpId
);
string_id!(
    /// A model provider entry (`anthropic`, `openai`, `openrouter`, `local`, …).
    ProviderId
);
string_id!(
    /// An external ACP agent entry in the agent registry.
    AcpAgentId
);
string_id!(
    /// A host request raised by an agent session (file read/edit, command, permission).
    RequestId
);

/// Per-task snapshot sequence number, monotonic across attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seq(pub u64);

impl Seq {
    #[must_use]
    pub fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

/// Attempt number of a task: 0 for the first attempt, +1 on every retry.
/// The same clock as `EditSnapshot::attempt_no` and `VerificationRecord::attempt_no`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AttemptNo(pub u32);

impl AttemptNo {
    pub const FIRST: Self = Self(0);

    /// The number a person reads: the first attempt is attempt 1.
    pub const fn ordinal(self) -> u32 {
        self.0.saturating_add(1)
    }

    #[must_use]
    pub fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

impl fmt::Display for AttemptNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Milliseconds since the Unix epoch (UTC). Core's rules never read a
/// clock: callers pass the time in (read from a [`crate::clock::Clock`]),
/// which keeps every domain rule deterministic under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    pub fn as_millis(self) -> i64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ids_accept_the_safe_alphabet_only() {
        assert_eq!(
            TaskId::new("task-01_AB").map(String::from),
            Ok("task-01_AB".to_owned())
        );
        assert_eq!(TaskId::new(""), Err(IdError::Empty));
        assert_eq!(TaskId::new("../x"), Err(IdError::InvalidChar('.')));
        assert_eq!(TaskId::new("a/b"), Err(IdError::InvalidChar('/')));
        assert_eq!(TaskId::new("a\0b"), Err(IdError::InvalidChar('\0')));
        assert_eq!(TaskId::new("x".repeat(65)), Err(IdError::TooLong));
        assert!(TaskId::new("x".repeat(64)).is_ok());
    }

    #[test]
    fn ids_are_validated_when_deserialized() {
        let ok: TaskId = serde_json::from_str("\"t1\"").unwrap();
        assert_eq!(ok.as_str(), "t1");
        assert_eq!(serde_json::to_string(&ok).unwrap(), "\"t1\"");
        let err = serde_json::from_str::<TaskId>("\"../../etc\"").unwrap_err();
        assert!(err.to_string().contains("only ASCII letters"), "{err}");
    }
}
