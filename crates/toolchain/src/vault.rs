//! API keys in the OS credential store: macOS Keychain, Windows Credential
//! Manager, the Secret Service on Linux (the `keyring` crate's pure-Rust
//! D-Bus backend). Service `cocode`, one entry per provider id.
//!
//! There is no fallback: when the store is missing or locked the vault says
//! so (`CREDENTIAL_VAULT_UNAVAILABLE` / `CREDENTIAL_VAULT_LOCKED`) and
//! nothing is written anywhere else — not to a file, the workspace or the
//! environment. [`SessionVault`] keeps a key in memory for this run only,
//! for a person who chooses that (the UI labels it "session-only, not
//! saved").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cocode_core::ids::ProviderId;
use cocode_core::services::{CredentialVault, Secret, VaultError};

/// The service name entries are stored under.
pub const SERVICE: &str = "cocode";

fn map_error(e: keyring::Error) -> VaultError {
    match e {
        keyring::Error::NoDefaultStore => VaultError::CredentialVaultUnavailable(
            "no OS credential store is reachable (on Linux: no Secret Service on the session bus)"
                .into(),
        ),
        keyring::Error::NoStorageAccess(inner) => VaultError::Locked(inner.to_string()),
        keyring::Error::PlatformFailure(inner) => {
            VaultError::CredentialVaultUnavailable(inner.to_string())
        }
        other => VaultError::Refused(other.to_string()),
    }
}

/// The OS credential store.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyringVault;

impl KeyringVault {
    fn entry(provider: &ProviderId) -> Result<keyring::Entry, VaultError> {
        keyring::Entry::new(SERVICE, provider.as_str()).map_err(map_error)
    }

    /// Whether the store can be reached (for `cocode doctor`).
    pub fn status() -> Result<(), VaultError> {
        match keyring::Entry::store_status() {
            Ok(()) => Ok(()),
            Err(keyring::Error::NoDefaultStore) => Err(VaultError::CredentialVaultUnavailable(
                "no OS credential store".into(),
            )),
            Err(other) => Err(VaultError::CredentialVaultUnavailable(other.to_string())),
        }
    }
}

impl CredentialVault for KeyringVault {
    fn get(&self, provider: &ProviderId) -> Result<Option<Secret>, VaultError> {
        match Self::entry(provider)?.get_password() {
            Ok(value) => Ok(Some(Secret::new(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_error(e)),
        }
    }

    fn set(&self, provider: &ProviderId, secret: &Secret) -> Result<(), VaultError> {
        Self::entry(provider)?
            .set_password(secret.expose())
            .map_err(map_error)
    }

    fn delete(&self, provider: &ProviderId) -> Result<(), VaultError> {
        match Self::entry(provider)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_error(e)),
        }
    }
}

/// Keys held in memory for this run only, never saved.
#[derive(Default)]
pub struct SessionVault {
    keys: Mutex<HashMap<ProviderId, Secret>>,
}

impl std::fmt::Debug for SessionVault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionVault").finish_non_exhaustive()
    }
}

impl SessionVault {
    /// How the UI names keys kept here.
    pub const LABEL: &'static str = "session-only, not saved";
}

impl CredentialVault for SessionVault {
    fn get(&self, provider: &ProviderId) -> Result<Option<Secret>, VaultError> {
        Ok(self
            .keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(provider)
            .cloned())
    }

    fn set(&self, provider: &ProviderId, secret: &Secret) -> Result<(), VaultError> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(provider.clone(), secret.clone());
        Ok(())
    }

    fn delete(&self, provider: &ProviderId) -> Result<(), VaultError> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(provider);
        Ok(())
    }
}

/// Values given for one run first (e.g. `--pass-env`), then a lasting
/// store; changes go to the lasting store.
pub struct LayeredVault {
    pub run: Arc<SessionVault>,
    pub store: Arc<dyn CredentialVault>,
}

impl std::fmt::Debug for LayeredVault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayeredVault").finish_non_exhaustive()
    }
}

impl CredentialVault for LayeredVault {
    fn get(&self, provider: &ProviderId) -> Result<Option<Secret>, VaultError> {
        match self.run.get(provider)? {
            Some(secret) => Ok(Some(secret)),
            None => self.store.get(provider),
        }
    }

    fn set(&self, provider: &ProviderId, secret: &Secret) -> Result<(), VaultError> {
        self.store.set(provider, secret)
    }

    fn delete(&self, provider: &ProviderId) -> Result<(), VaultError> {
        self.store.delete(provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_session_vault_round_trips_in_memory() {
        let vault = SessionVault::default();
        let p = ProviderId::new("anthropic").unwrap();
        assert_eq!(vault.get(&p).unwrap().map(|s| s.expose().to_owned()), None);
        vault.set(&p, &Secret::new("sk-1")).unwrap();
        assert_eq!(
            vault.get(&p).unwrap().map(|s| s.expose().to_owned()),
            Some("sk-1".to_owned())
        );
        vault.delete(&p).unwrap();
        assert_eq!(vault.get(&p).unwrap().map(|s| s.expose().to_owned()), None);
        assert_eq!(format!("{vault:?}"), "SessionVault { .. }");
        // A run's value wins over the lasting store; changes go to the store.
        let store = Arc::new(SessionVault::default());
        store.set(&p, &Secret::new("stored")).unwrap();
        let run = Arc::new(SessionVault::default());
        let layered = LayeredVault {
            run: Arc::clone(&run),
            store: Arc::clone(&store) as Arc<dyn CredentialVault>,
        };
        assert_eq!(
            layered.get(&p).unwrap().map(|s| s.expose().to_owned()),
            Some("stored".to_owned())
        );
        run.set(&p, &Secret::new("passed")).unwrap();
        assert_eq!(
            layered.get(&p).unwrap().map(|s| s.expose().to_owned()),
            Some("passed".to_owned())
        );
        layered.delete(&p).unwrap();
        assert_eq!(store.get(&p).unwrap(), None);
    }
}
