//! The storage accounts the emulator serves: the well-known development account and any
//! accounts configured through `AZURITE_ACCOUNTS` (`name1:key1[:key2];name2:key1`).

use super::sign::AccountKey;
use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use std::collections::BTreeMap;

/// The well-known development account name (Azurite / legacy Storage Emulator).
pub const DEV_ACCOUNT: &str = "devstoreaccount1";

/// The well-known development account key (base64).
pub const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Standard-alphabet base64 that accepts keys with or without `=` padding.
const KEY_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One storage account and its decoded shared keys (key1, then optionally key2).
#[derive(Debug, Clone)]
pub struct Account {
    pub name: String,
    pub keys: Vec<AccountKey>,
}

/// The set of accounts, by name.
///
/// Semantics follow Azurite's `AccountDataStore`: the development account is the default,
/// and it is **replaced** (not kept) once custom accounts are configured through
/// `AZURITE_ACCOUNTS`; to keep it, list it in the variable too
/// (`devstoreaccount1:Eby8...==;myaccount:...`). Azurite silently falls back to the default
/// account when the variable cannot be parsed; [`Accounts::add_from_env`] instead returns an
/// error and leaves the set unchanged, so the caller can refuse to start (or log and carry on
/// with the default account, which is then Azurite's behaviour).
#[derive(Debug, Clone)]
pub struct Accounts {
    by_name: BTreeMap<String, Account>,
    /// True while the set is still just the implicit default development account.
    only_default: bool,
}

impl Accounts {
    /// The default set: just `devstoreaccount1` with the well-known key.
    pub fn with_dev_account() -> Accounts {
        let mut by_name = BTreeMap::new();
        // DEV_KEY is a constant known to be valid base64; an empty key list cannot happen in
        // practice, but is not a panic either.
        let keys = KEY_BASE64.decode(DEV_KEY).map(|k| vec![k.into()]).unwrap_or_default();
        by_name.insert(DEV_ACCOUNT.to_string(), Account { name: DEV_ACCOUNT.to_string(), keys });
        Accounts { by_name, only_default: true }
    }

    /// Adds the accounts of an `AZURITE_ACCOUNTS` value: `name:key1[:key2]` entries separated
    /// by `;` (a trailing `;`, empty entries and surrounding whitespace are allowed; keys are
    /// base64). A later entry for the same name replaces an earlier one.
    ///
    /// Like Azurite, the first non-empty value replaces the implicit default development
    /// account: afterwards `devstoreaccount1` exists only if the value lists it. A value with
    /// no entries at all (empty or only `;`/whitespace) changes nothing.
    ///
    /// On error (an entry without a key, with more than two keys, an empty name, an empty or
    /// non-base64 key) the returned message names the offending entry (without its keys) and
    /// the set is left unchanged.
    pub fn add_from_env(&mut self, value: &str) -> Result<(), String> {
        let mut parsed: Vec<Account> = Vec::new();
        for (index, entry) in value.split(';').enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            parsed.push(parse_entry(entry, index + 1)?);
        }
        if parsed.is_empty() {
            return Ok(());
        }
        if self.only_default {
            self.by_name.clear();
            self.only_default = false;
        }
        for account in parsed {
            self.by_name.insert(account.name.clone(), account);
        }
        Ok(())
    }

    /// The account with this exact (case-sensitive) name.
    pub fn get(&self, name: &str) -> Option<&Account> {
        self.by_name.get(name)
    }

    /// All account names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }
}

impl Default for Accounts {
    fn default() -> Self {
        Accounts::with_dev_account()
    }
}

/// Parses one `name:key1[:key2]` entry (`index` is 1-based, for messages).
fn parse_entry(entry: &str, index: usize) -> Result<Account, String> {
    let parts: Vec<&str> = entry.split(':').map(str::trim).collect();
    let name = parts.first().copied().unwrap_or_default();
    let label = if name.is_empty() {
        format!("AZURITE_ACCOUNTS entry #{index}")
    } else {
        format!("AZURITE_ACCOUNTS entry #{index} (account '{name}')")
    };
    if name.is_empty() {
        return Err(format!("{label}: empty account name"));
    }
    if parts.len() < 2 || parts.len() > 3 {
        return Err(format!(
            "{label}: expected 'name:key1' or 'name:key1:key2', found {} key(s)",
            parts.len() - 1
        ));
    }
    let mut keys = Vec::with_capacity(2);
    for (i, key) in parts[1..].iter().enumerate() {
        if key.is_empty() {
            // Azurite ignores an empty key2 ("name:key1:"); key1 is required.
            if i == 0 {
                return Err(format!("{label}: empty key1"));
            }
            continue;
        }
        match KEY_BASE64.decode(key) {
            Ok(bytes) if !bytes.is_empty() => keys.push(bytes.into()),
            _ => return Err(format!("{label}: key{} is not valid base64", i + 1)),
        }
    }
    Ok(Account { name: name.to_string(), keys })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_account_is_the_default() {
        let accounts = Accounts::with_dev_account();
        assert_eq!(accounts.names(), vec![DEV_ACCOUNT.to_string()]);
        let dev = accounts.get(DEV_ACCOUNT).expect("dev account");
        assert_eq!(dev.keys.len(), 1);
        assert_eq!(dev.keys[0].len(), 64);
        assert!(accounts.get("other").is_none());
    }

    #[test]
    fn env_replaces_default_account() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env("acct1:a2V5MQ==").expect("valid");
        assert_eq!(accounts.names(), vec!["acct1".to_string()]);
        assert_eq!(accounts.get("acct1").expect("acct1").keys, vec![b"key1".to_vec()]);
        assert!(accounts.get(DEV_ACCOUNT).is_none());
    }

    #[test]
    fn env_two_accounts_two_keys_trailing_semicolon() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env("acct1:a2V5MQ==:a2V5Mg==;acct2:a2V5Mw==;").expect("valid");
        assert_eq!(accounts.names(), vec!["acct1".to_string(), "acct2".to_string()]);
        let a1 = accounts.get("acct1").expect("acct1");
        assert_eq!(a1.keys, vec![b"key1".to_vec(), b"key2".to_vec()]);
        assert_eq!(accounts.get("acct2").expect("acct2").keys, vec![b"key3".to_vec()]);
    }

    #[test]
    fn env_can_keep_dev_account_by_listing_it() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env(&format!("{DEV_ACCOUNT}:{DEV_KEY};acct1:a2V5MQ")).expect("valid");
        assert_eq!(accounts.names(), vec!["acct1".to_string(), DEV_ACCOUNT.to_string()]);
        // Unpadded base64 is accepted too.
        assert_eq!(accounts.get("acct1").expect("acct1").keys, vec![b"key1".to_vec()]);
    }

    #[test]
    fn env_second_call_adds_without_removing() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env("acct1:a2V5MQ==").expect("valid");
        accounts.add_from_env(" acct2 : a2V5Mg== ").expect("valid");
        assert_eq!(accounts.names(), vec!["acct1".to_string(), "acct2".to_string()]);
    }

    #[test]
    fn env_empty_value_changes_nothing() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env("").expect("empty is fine");
        accounts.add_from_env(" ; ;").expect("only separators is fine");
        assert_eq!(accounts.names(), vec![DEV_ACCOUNT.to_string()]);
    }

    #[test]
    fn env_empty_key2_is_ignored() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env("acct1:a2V5MQ==:").expect("valid");
        assert_eq!(accounts.get("acct1").expect("acct1").keys.len(), 1);
    }

    #[test]
    fn env_later_duplicate_wins() {
        let mut accounts = Accounts::with_dev_account();
        accounts.add_from_env("acct1:a2V5MQ==;acct1:a2V5Mg==").expect("valid");
        assert_eq!(accounts.get("acct1").expect("acct1").keys, vec![b"key2".to_vec()]);
    }

    #[test]
    fn env_errors_name_the_entry_and_leave_set_unchanged() {
        let cases = [
            ("good:a2V5MQ==;bad", "'bad'"),
            ("good:a2V5MQ==;bad:a:b:c", "'bad'"),
            ("bad:not base64!", "'bad'"),
            ("bad:", "'bad'"),
            (":a2V5MQ==", "entry #1"),
            ("good:a2V5MQ==;;bad:a2V5MQ==:%%%", "'bad'"),
        ];
        for (value, needle) in cases {
            let mut accounts = Accounts::with_dev_account();
            let err = accounts.add_from_env(value).expect_err(value);
            assert!(err.contains(needle), "{value:?}: {err}");
            assert!(!err.contains("a2V5MQ"), "keys must not leak into messages: {err}");
            assert_eq!(accounts.names(), vec![DEV_ACCOUNT.to_string()], "{value:?}");
        }
    }
}
