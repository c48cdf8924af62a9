//! [`read_change_set`]: each operation read into a typed write with what its part
//! needs, and the checks run in the order a change set is answered in: operation by
//! operation, and within one its account, table name, write, then SAS permission.

use super::*;
use crate::auth::sas::{SasGrant, SasScope};
use crate::odata::{Format, Metadata, Prefer};
use aztable_model::error::ErrorCode;
use aztable_model::{Condition, EntityWrite, KeyRange};

const CT: &str = "multipart/mixed; boundary=batch_1";

/// A change set batch body with the given operation texts (request line onwards).
fn changeset(ops: &[&str]) -> String {
    let mut s = String::from("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n");
    for op in ops {
        s.push_str("--changeset_1\r\nContent-Type: application/http\r\n\r\n");
        s.push_str(op);
        s.push_str("\r\n");
    }
    s.push_str("--changeset_1--\r\n--batch_1--\r\n");
    s
}

const INSERT: &str = "POST /devstoreaccount1/people HTTP/1.1\r\nContent-Type: application/json\r\n\
    Prefer: return-no-content\r\nContent-ID: 7\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"1\",\"n\":2}";
const MERGE: &str =
    "MERGE /people(PartitionKey='p',RowKey='2') HTTP/1.1\r\nContent-Type: application/json\r\n\
    Accept: application/json;odata=fullmetadata\r\nIf-Match: *\r\n\r\n{\"m\":true}";
const DELETE: &str =
    "DELETE /devstoreaccount1/people(PartitionKey='p',RowKey='3') HTTP/1.1\r\nIf-Match: *\r\n\r\n";

fn read(ops: &[&str], sas: Option<&SasGrant>) -> Result<ChangeSet, OpFailure> {
    let body = changeset(ops);
    let request = parse(CT, body.as_bytes(), &Limits::default()).expect("a change set");
    read_change_set(request, &BatchCaller { account: "devstoreaccount1", sas, atom_allowed: false })
}

fn grant(table: &str, permissions: &str) -> SasGrant {
    SasGrant {
        scope: SasScope::Table { table: table.into() },
        permissions: permissions.into(),
        version: "2019-02-02".into(),
        key_range: KeyRange::unbounded(),
    }
}

#[test]
fn operations_become_typed_writes_with_their_replies() {
    let cs = read(&[INSERT, MERGE, DELETE], None).unwrap();
    assert_eq!(cs.table, "people");
    let writes: Vec<_> = cs.ops.iter().map(|op| (op.write.keys(), op.write.may_insert())).collect();
    assert_eq!(writes, [(("p", "1"), true), (("p", "2"), false), (("p", "3"), false)]);
    assert!(
        matches!(&cs.ops[1].write, EntityWrite::MergeEntity(e, Condition::Exists) if e.properties.len() == 1)
    );
    assert!(matches!(&cs.ops[2].write, EntityWrite::DeleteEntity { cond: Condition::Exists, .. }));
    let (ins, merge) = (&cs.ops[0].reply, &cs.ops[1].reply);
    assert_eq!((ins.index, ins.content_id.as_deref(), ins.insert), (0, Some("7"), true));
    assert_eq!(ins.prefer, Some(Prefer::ReturnNoContent));
    assert_eq!((merge.index, merge.insert, merge.prefer), (1, false, None));
    assert_eq!(merge.format, Format::Json(Metadata::Full));
    assert_eq!(ins.format, Format::Json(Metadata::Minimal), "no Accept: the version's default");
    assert!(cs.ops.iter().all(|op| !op.reply.xml_errors));
}

#[test]
fn the_first_failing_operation_is_the_answer_with_its_reply() {
    let bad_body = "POST /people HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-content\r\n\r\n{\"PartitionKey\":\"p\"}";
    let f = read(&[INSERT, bad_body, "DELETE /people(PartitionKey='p',RowKey='x') HTTP/1.1\r\n\r\n"], None)
        .unwrap_err();
    assert_eq!((f.reply.index, f.reply.insert, f.reply.prefer), (1, true, Some(Prefer::ReturnContent)));
    assert_eq!(f.error.code, ErrorCode::PropertiesNeedValue);
    // a later operation's failure (the delete's missing If-Match) is not reached first
    let f = read(&[INSERT, "DELETE /people(PartitionKey='p',RowKey='x') HTTP/1.1\r\n\r\n", bad_body], None)
        .unwrap_err();
    assert_eq!((f.reply.index, f.error.code), (1, ErrorCode::MissingRequiredHeader));
}

#[test]
fn within_an_operation_account_then_table_name_then_write_then_sas() {
    let other = "POST /otheraccount/people HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}";
    let f = read(&[other], Some(&grant("nosuch", ""))).unwrap_err();
    assert_eq!(f.error.code, ErrorCode::InvalidInput);
    assert_eq!(&*f.error.message, "The operation addresses account 'otheraccount', not 'devstoreaccount1'.");
    // the -secondary spelling of the request's account is the account
    let secondary = INSERT.replace("/devstoreaccount1/", "/devstoreaccount1-secondary/");
    assert!(read(&[&secondary], None).is_ok());
    let bad_name = "POST /a_b HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}";
    let f = read(&[bad_name], Some(&grant("nosuch", ""))).unwrap_err();
    assert_eq!(f.error.code, ErrorCode::InvalidResourceName);
    // a body the write cannot read is refused before the SAS is asked
    let no_keys = "POST /people HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}";
    let f = read(&[no_keys], Some(&grant("people", "r"))).unwrap_err();
    assert_eq!(f.error.code, ErrorCode::PropertiesNeedValue);
    let f = read(&[INSERT], Some(&grant("people", "r"))).unwrap_err();
    assert_eq!(f.error.code, ErrorCode::AuthorizationPermissionMismatch);
    let f = read(&[INSERT], Some(&grant("others", "a"))).unwrap_err();
    assert_eq!(f.error.code, ErrorCode::AuthorizationFailure);
    // If-Match makes an update need only `u`; without it (an upsert) `a` too
    let merge_no_if_match = MERGE.replace("If-Match: *\r\n", "");
    assert!(read(&[MERGE], Some(&grant("people", "u"))).is_ok());
    let f = read(&[&merge_no_if_match], Some(&grant("people", "u"))).unwrap_err();
    assert_eq!(f.error.code, ErrorCode::AuthorizationPermissionMismatch);
    assert!(read(&[INSERT, MERGE, DELETE], Some(&grant("People", "aud"))).is_ok());
}
