//! [`Access`], the access-control operations: Get/Set Table ACL, Get/Set Table Service Properties and Get
//! Table Service Stats, plus the lookups the front end needs to check a SAS (stored access
//! policies) and to answer CORS (the account's rules).
//!
//! ACLs and properties are stored as the XML bodies the Get operations answer with
//! (`settings::acl::write_acl`, `StorageServiceProperties::write`), so a Get is one read.

use super::ServiceError;
use crate::partition::{PartitionError, Partitions};
use aztable_model::error::ApiError;
use aztable_model::AccessPolicy;
use aztable_model::Ticks;
use aztable_store::StoreError;
use aztable_wire::settings::acl::{find_policy, parse_acl, write_acl, SignedIdentifier};
use aztable_wire::settings::service_properties::{
    GeoReplicationStatus, ServicePropertiesUpdate, StorageServiceProperties,
};
use std::sync::Arc;

/// Stored bytes that do not parse are a storage fault, never the client's 400.
fn corrupt(what: &str, e: &ApiError) -> ServiceError {
    ServiceError::Store(StoreError::Corrupt(format!("stored {what}: {}", e.message)))
}

/// Table ACLs, service properties and stats: read and written as stored, neither
/// throttled nor reported to the partition advisor.
#[derive(Debug)]
pub struct Access {
    parts: Arc<Partitions>,
}

impl Access {
    pub(super) fn new(parts: Arc<Partitions>) -> Self {
        Access { parts }
    }

    /// Get Table ACL: the table's stored access policies (404 `ResourceNotFound` when the
    /// table does not exist).
    pub fn get_table_acl(&self, account: &str, table: &str) -> Result<Vec<SignedIdentifier>, ServiceError> {
        if self.parts.catalog().lookup_table(account, table)?.is_none() {
            return Err(ServiceError::ResourceNotFound);
        }
        self.stored_acl(account, table)
    }

    /// Set Table ACL: replaces the whole set (an empty set clears it).
    pub fn set_table_acl(
        &self,
        account: &str,
        table: &str,
        acl: &[SignedIdentifier],
    ) -> Result<(), ServiceError> {
        let bytes = (!acl.is_empty()).then(|| write_acl(acl));
        match self.parts.settings().set_table_acl(account, table, bytes) {
            Err(PartitionError::TableNotFound) => Err(ServiceError::ResourceNotFound),
            other => Ok(other?),
        }
    }

    /// The stored access policy `si` of `table` (what a table SAS with `si` resolves
    /// to); `None` when the table or the policy does not exist.
    pub fn stored_policy(
        &self,
        account: &str,
        table: &str,
        si: &str,
    ) -> Result<Option<AccessPolicy>, ServiceError> {
        Ok(find_policy(&self.stored_acl(account, table)?, si))
    }

    fn stored_acl(&self, account: &str, table: &str) -> Result<Vec<SignedIdentifier>, ServiceError> {
        match self.parts.settings().table_acl(account, table)? {
            Some(bytes) => parse_acl(&bytes).map_err(|e| corrupt("table ACL", &e)),
            None => Ok(Vec::new()),
        }
    }

    /// Get Table Service Properties: the stored settings, or the defaults when never set.
    pub fn get_service_properties(&self, account: &str) -> Result<StorageServiceProperties, ServiceError> {
        match self.parts.settings().service_properties(account)? {
            Some(bytes) => {
                StorageServiceProperties::load(&bytes).map_err(|e| corrupt("service properties", &e))
            }
            None => Ok(StorageServiceProperties::default()),
        }
    }

    /// Set Table Service Properties: the roots sent replace the stored ones, the others are
    /// kept.
    pub fn set_service_properties(
        &self,
        account: &str,
        update: ServicePropertiesUpdate,
    ) -> Result<(), ServiceError> {
        self.parts.settings().update_service_properties(account, |stored| {
            let mut props = match stored {
                Some(bytes) => {
                    StorageServiceProperties::load(&bytes).map_err(|e| corrupt("service properties", &e))?
                }
                None => StorageServiceProperties::default(),
            };
            update.merge_into(&mut props);
            Ok::<_, ServiceError>(props.write())
        })
    }

    /// Get Table Service Stats. The emulator's secondary is the primary itself, so it is
    /// always live and in sync as of now. The service answers it only on the secondary
    /// endpoint; here both answer, because that is where the SDKs send it against an
    /// emulator (Python: the secondary; JS: the primary).
    pub fn get_service_stats(&self) -> (GeoReplicationStatus, Option<Ticks>) {
        (GeoReplicationStatus::Live, Some(aztable_model::time::wall_now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::TableService;
    use aztable_store::mem::MemStore;
    use aztable_wire::settings::service_properties::parse;

    fn svc() -> TableService {
        let s = TableService::new(Arc::new(MemStore::new()));
        s.tables().create_table("acct", "Tbl").unwrap();
        s
    }

    fn code(e: ServiceError) -> aztable_model::error::ErrorCode {
        ApiError::from(e).code
    }

    fn policy(id: &str, permission: &str) -> SignedIdentifier {
        SignedIdentifier {
            id: id.into(),
            start: None,
            expiry: Ticks::parse("2030-01-01T00:00:00Z"),
            permission: Some(permission.into()),
        }
    }

    #[test]
    fn acl_round_trip_and_missing_table() {
        let s = svc();
        assert_eq!(s.access().get_table_acl("acct", "tbl").unwrap(), vec![]);
        let acl = vec![policy("p1", "r"), policy("p2", "raud")];
        s.access().set_table_acl("acct", "TBL", &acl).unwrap();
        assert_eq!(s.access().get_table_acl("acct", "Tbl").unwrap(), acl);
        let p2 = s.access().stored_policy("acct", "tbl", "p2").unwrap().unwrap();
        assert_eq!(p2.permission.as_deref(), Some("raud"));
        assert_eq!(s.access().stored_policy("acct", "tbl", "P2").unwrap(), None);
        assert_eq!(s.access().stored_policy("acct", "nosuch", "p2").unwrap(), None);
        assert_eq!(s.access().stored_policy("other", "tbl", "p2").unwrap(), None);
        s.access().set_table_acl("acct", "tbl", &[]).unwrap();
        assert_eq!(s.access().get_table_acl("acct", "tbl").unwrap(), vec![]);
        assert_eq!(
            code(s.access().get_table_acl("acct", "nosuch").unwrap_err()),
            aztable_model::error::ErrorCode::ResourceNotFound
        );
        assert_eq!(
            code(s.access().set_table_acl("acct", "nosuch", &acl).unwrap_err()),
            aztable_model::error::ErrorCode::ResourceNotFound
        );
    }

    #[test]
    fn delete_table_drops_its_acl() {
        let s = svc();
        s.access().set_table_acl("acct", "tbl", &[policy("p1", "r")]).unwrap();
        s.tables().delete_table("acct", "tbl").unwrap();
        assert_eq!(s.access().stored_policy("acct", "tbl", "p1").unwrap(), None);
        s.tables().create_table("acct", "tbl").unwrap();
        assert_eq!(s.access().get_table_acl("acct", "tbl").unwrap(), vec![]);
    }

    #[test]
    fn properties_default_then_partial_updates_merge() {
        let s = svc();
        assert_eq!(s.access().get_service_properties("acct").unwrap(), StorageServiceProperties::default());
        let cors = b"<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins>\
            <AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>5</MaxAgeInSeconds>\
            <ExposedHeaders></ExposedHeaders><AllowedHeaders></AllowedHeaders></CorsRule></Cors>\
            </StorageServiceProperties>";
        s.access().set_service_properties("acct", parse(cors).unwrap()).unwrap();
        let logging = b"<StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete>\
            <Read>true</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled>\
            </RetentionPolicy></Logging></StorageServiceProperties>";
        s.access().set_service_properties("acct", parse(logging).unwrap()).unwrap();
        let got = s.access().get_service_properties("acct").unwrap();
        assert_eq!(got.cors.len(), 1);
        assert_eq!(got.cors[0].max_age_in_seconds, 5);
        assert!(got.logging.read && !got.logging.write && !got.logging.delete);
        // Per account.
        assert_eq!(s.access().get_service_properties("other").unwrap(), StorageServiceProperties::default());
        // An empty <Cors/> removes every rule.
        s.access()
            .set_service_properties(
                "acct",
                parse(b"<StorageServiceProperties><Cors/></StorageServiceProperties>").unwrap(),
            )
            .unwrap();
        assert!(s.access().get_service_properties("acct").unwrap().cors.is_empty());
    }

    #[test]
    fn stats_are_live_and_in_sync_now() {
        let s = svc();
        let before = aztable_model::time::wall_now();
        let (status, last_sync) = s.access().get_service_stats();
        assert_eq!(status, GeoReplicationStatus::Live);
        assert!(last_sync.is_some_and(|t| t >= before && t <= aztable_model::time::wall_now()));
    }
}
