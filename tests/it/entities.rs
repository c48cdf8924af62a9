//! Black-box: entity operations over raw HTTP against the real server.

use crate::common::*;
use serde_json::json;

async fn setup(table: &str) -> (TestServer, Client) {
    let server = TestServer::start();
    let c = server.client();
    assert_eq!(c.create_table(table).await.status, 201);
    (server, c)
}

#[tokio::test]
async fn insert_get_and_every_edm_type_round_trips() {
    let (_s, c) = setup("types").await;
    let entity = json!({
        "PartitionKey": "p'1 /x", "RowKey": "",
        "Str": "héllo ☃ 𝄞",
        "I32": 2147483647,
        "I64": "-9223372036854775808", "I64@odata.type": "Edm.Int64",
        "Dbl": 1.5, "Whole": 2.0,
        "Nan": "NaN", "Nan@odata.type": "Edm.Double",
        "Inf": "-Infinity", "Inf@odata.type": "Edm.Double",
        "B": true,
        "When": "2013-08-22T00:20:16.3134645Z", "When@odata.type": "Edm.DateTime",
        "Id": "c9da6455-213d-42c9-9a79-3e9149a57833", "Id@odata.type": "Edm.Guid",
        "Bin": "AQID", "Bin@odata.type": "Edm.Binary",
        "Empty": "", "Gone": null
    });
    // '/' is not allowed in keys
    let r = c.insert("types", entity.clone()).await;
    r.assert_refused_with(
        400,
        ErrorCode::InvalidInput,
        "The 'PartitionKey' or 'RowKey' contains an invalid character.",
    );
    let mut entity = entity;
    entity["PartitionKey"] = json!("p'1 x%+");
    let r = c.insert("types", entity).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let etag = r.header("etag").unwrap();
    assert!(etag.starts_with("W/\"datetime'") && etag.contains("%3A"), "{etag}");
    assert!(r.header("location").is_some());

    let r = c.get("types", "p'1 x%+", "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("etag").unwrap(), etag);
    let v = r.json();
    assert_eq!(v["odata.etag"], etag);
    assert_eq!(v["PartitionKey"], "p'1 x%+");
    assert_eq!(v["RowKey"], "");
    assert_eq!(v["Str"], "héllo ☃ 𝄞");
    assert_eq!(v["I32"], 2147483647);
    assert_eq!(v["I64"], "-9223372036854775808");
    assert_eq!(v["I64@odata.type"], "Edm.Int64");
    assert_eq!(v["Dbl"], 1.5);
    assert!(v["Whole"].is_f64(), "integral doubles keep a decimal point: {}", r.body);
    assert_eq!(v["Nan"], "NaN");
    assert_eq!(v["Inf"], "-Infinity");
    assert_eq!(v["B"], true);
    assert_eq!(v["When"], "2013-08-22T00:20:16.3134645Z");
    assert_eq!(v["When@odata.type"], "Edm.DateTime");
    assert_eq!(v["Id"], "c9da6455-213d-42c9-9a79-3e9149a57833");
    assert_eq!(v["Bin"], "AQID");
    assert_eq!(v["Empty"], "");
    assert!(v.get("Gone").is_none(), "null properties are not stored");
    let ts = v["Timestamp"].as_str().unwrap();
    assert_eq!(ts.len(), "2013-08-22T00:20:16.3134645Z".len(), "7 fractional digits: {ts}");

    let r = c.get("types", "nope", "").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), "ResourceNotFound");
}

#[tokio::test]
async fn duplicate_insert_and_missing_table() {
    let (_s, c) = setup("dups").await;
    let e = json!({"PartitionKey": "a", "RowKey": "b"});
    assert_eq!(c.insert("dups", e.clone()).await.status, 201);
    let r = c.insert("dups", e.clone()).await;
    assert_eq!(r.status, 409);
    assert_eq!(r.error_code(), "EntityAlreadyExists");
    let r = c.insert("nosuchtable", e).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), "TableNotFound");
}

#[tokio::test]
async fn update_merge_upsert_delete_with_etags() {
    let (_s, c) = setup("ops").await;
    let path = entity_path("ops", "p", "r");
    let r = c.insert("ops", json!({"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "x"})).await;
    let etag1 = r.header("etag").unwrap();

    // merge with the right etag keeps B, changes A, adds C
    let r =
        c.send("MERGE", &path, &[("If-Match", &etag1)], Some(&json!({"A": 2, "C": true}).to_string())).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let etag2 = r.header("etag").unwrap();
    assert_ne!(etag1, etag2);
    let v = c.get("ops", "p", "r").await.json();
    assert_eq!((v["A"].clone(), v["B"].clone(), v["C"].clone()), (json!(2), json!("x"), json!(true)));

    // stale etag → 412, nothing changes
    let r = c.send("PUT", &path, &[("If-Match", &etag1)], Some(&json!({"Z": 1}).to_string())).await;
    assert_eq!(r.status, 412);
    assert_eq!(r.error_code(), "UpdateConditionNotSatisfied");
    assert_eq!(c.get("ops", "p", "r").await.json()["A"], 2);

    // replace drops properties not sent
    let r = c.send("PUT", &path, &[("If-Match", "*")], Some(&json!({"Z": 1}).to_string())).await;
    assert_eq!(r.status, 204);
    let v = c.get("ops", "p", "r").await.json();
    assert!(v.get("A").is_none() && v["Z"] == 1);

    // PATCH and POST+X-HTTP-Method also merge
    let r = c.send("PATCH", &path, &[("If-Match", "*")], Some(&json!({"P": 1}).to_string())).await;
    assert_eq!(r.status, 204);
    let r = c
        .send(
            "POST",
            &path,
            &[("X-HTTP-Method", "MERGE"), ("If-Match", "*")],
            Some(&json!({"Q": 1}).to_string()),
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
    let v = c.get("ops", "p", "r").await.json();
    assert!(v["P"] == 1 && v["Q"] == 1 && v["Z"] == 1);

    // update of a missing entity with If-Match → 404; without → upsert
    let missing = entity_path("ops", "p", "new");
    let r = c.send("PUT", &missing, &[("If-Match", "*")], Some("{}")).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code(), "ResourceNotFound");
    assert_eq!(c.send("PUT", &missing, &[], Some(&json!({"U": 1}).to_string())).await.status, 204);
    assert_eq!(c.send("MERGE", &missing, &[], Some(&json!({"V": 2}).to_string())).await.status, 204);
    let v = c.get("ops", "p", "new").await.json();
    assert!(v["U"] == 1 && v["V"] == 2);

    // delete: stale etag 412, missing If-Match 400, then success, then 404
    let r = c.send("DELETE", &path, &[("If-Match", &etag1)], None).await;
    assert_eq!(r.status, 412);
    let r = c.send("DELETE", &path, &[], None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), "MissingRequiredHeader");
    let etag = c.get("ops", "p", "r").await.header("etag").unwrap();
    assert_eq!(c.send("DELETE", &path, &[("If-Match", &etag)], None).await.status, 204);
    let r = c.send("DELETE", &path, &[("If-Match", "*")], None).await;
    r.assert_refused(404, ErrorCode::ResourceNotFound);
}

#[tokio::test]
async fn query_pages_in_key_order_with_continuation() {
    let (_s, c) = setup("many").await;
    let mut want = Vec::new();
    for p in 0..3 {
        for r in 0..450 {
            want.push((format!("p{p}"), format!("r{r:04}")));
        }
    }
    let mut handles = Vec::new();
    for chunk in want.chunks(150) {
        let c = c.clone();
        let chunk = chunk.to_vec();
        handles.push(tokio::spawn(async move {
            for (p, r) in chunk {
                let resp = c.insert("many", json!({"PartitionKey": p, "RowKey": r, "N": 1})).await;
                assert_eq!(resp.status, 201);
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let mut got = Vec::new();
    let mut cont: Option<(String, String)> = None;
    let mut pages = 0;
    loop {
        let path = match &cont {
            Some((p, r)) => format!("/many()?NextPartitionKey={p}&NextRowKey={r}"),
            None => "/many()".to_owned(),
        };
        let resp = c.send("GET", &path, &[], None).await;
        assert_eq!(resp.status, 200);
        pages += 1;
        let v = resp.json();
        let items = v["value"].as_array().unwrap();
        assert!(items.len() <= 1000);
        for e in items {
            got.push((
                e["PartitionKey"].as_str().unwrap().to_owned(),
                e["RowKey"].as_str().unwrap().to_owned(),
            ));
        }
        match (resp.header("x-ms-continuation-nextpartitionkey"), resp.header("x-ms-continuation-nextrowkey"))
        {
            (Some(p), Some(r)) => cont = Some((p, r)),
            _ => break,
        }
    }
    assert_eq!(pages, 2);
    assert_eq!(got, want);

    // $top caps the page and $select projects
    let resp = c.send("GET", "/many()?$top=5&$select=RowKey", &[], None).await;
    let v = resp.json();
    let items = v["value"].as_array().unwrap();
    assert_eq!(items.len(), 5);
    assert!(items[0].get("N").is_none());
    assert_eq!(items[0]["RowKey"], "r0000");
    assert!(resp.header("x-ms-continuation-nextpartitionkey").is_some());
}

#[tokio::test]
async fn metadata_levels() {
    let (_s, c) = setup("meta").await;
    c.insert("meta", json!({"PartitionKey": "p", "RowKey": "r", "I64": "5", "I64@odata.type": "Edm.Int64"}))
        .await;
    let path = entity_path("meta", "p", "r");
    let none = c.send("GET", &path, &[("Accept", "application/json;odata=nometadata")], None).await;
    assert!(none.header("content-type").unwrap().contains("odata=nometadata"));
    let v = none.json();
    assert!(v.get("odata.metadata").is_none() && v.get("I64@odata.type").is_none());
    assert_eq!(v["I64"], "5");
    let full = c.send("GET", &format!("{path}?$format=application/json;odata=fullmetadata"), &[], None).await;
    let v = full.json();
    assert_eq!(v["odata.type"], "devstoreaccount1.meta");
    assert!(v["odata.id"].as_str().unwrap().contains("meta(PartitionKey='p',RowKey='r')"));
    assert_eq!(v["Timestamp@odata.type"], "Edm.DateTime");
    let atom = c.send("GET", &path, &[("Accept", "application/atom+xml")], None).await;
    atom.assert_refused(415, ErrorCode::AtomFormatNotSupported);
}

#[tokio::test]
async fn timestamps_strictly_increase_per_entity() {
    let (_s, c) = setup("clock").await;
    let path = entity_path("clock", "p", "r");
    c.insert("clock", json!({"PartitionKey": "p", "RowKey": "r"})).await;
    let mut last = c.get("clock", "p", "r").await.json()["Timestamp"].as_str().unwrap().to_owned();
    for i in 0..20 {
        assert_eq!(c.send("PUT", &path, &[], Some(&json!({"I": i}).to_string())).await.status, 204);
        let ts = c.get("clock", "p", "r").await.json()["Timestamp"].as_str().unwrap().to_owned();
        assert!(ts > last, "{ts} <= {last}");
        last = ts;
    }
}

/// PUT and MERGE write the entity the URL names: keys in the body do not move the write.
#[tokio::test]
async fn url_keys_win_over_body_keys() {
    let (_s, c) = setup("urlKeys").await;
    let body = json!({"PartitionKey": "q", "RowKey": "elsewhere", "V": 1}).to_string();
    let url = entity_path("urlKeys", "p", "r");
    let r = c.send("PUT", &url, &[], Some(&body)).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = c.send("MERGE", &url, &[("If-Match", "*")], Some(&body)).await;
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(c.get("urlKeys", "p", "r").await.json()["V"], 1);
    // the body's keys do not move the write
    c.get("urlKeys", "q", "elsewhere").await.assert_refused(404, ErrorCode::ResourceNotFound);
}

/// A write whose `If-Match` is not a weak ETag (nor `*`), or that sends `If-None-Match`,
/// is 400 `InvalidInput` and changes nothing.
#[tokio::test]
async fn strong_if_match_and_if_none_match_on_writes_are_invalid_input() {
    let (_s, c) = setup("condSingle").await;
    assert_eq!(c.insert("condSingle", json!({"PartitionKey": "p", "RowKey": "r", "V": 0})).await.status, 201);
    let url = entity_path("condSingle", "p", "r");
    let body = json!({"V": 1}).to_string();
    for (method, headers) in [
        ("PUT", vec![("If-Match", "\"not-weak\"")]),
        ("MERGE", vec![("If-Match", "\"not-weak\"")]),
        ("DELETE", vec![("If-Match", "\"not-weak\"")]),
        ("PUT", vec![("If-None-Match", "*")]),
        ("MERGE", vec![("If-Match", "*"), ("If-None-Match", "*")]),
    ] {
        let r = c.send(method, &url, &headers, (method != "DELETE").then_some(body.as_str())).await;
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (400, "InvalidInput"),
            "{method} {headers:?}: {}",
            r.body
        );
    }
    assert_eq!(c.get("condSingle", "p", "r").await.json()["V"], 0);
}

/// `$top` outside 1–1000 is 400 `InvalidInput`, for entities and tables alike.
#[tokio::test]
async fn top_outside_1_to_1000_is_invalid_input() {
    let (_s, c) = setup("topBounds").await;
    for top in ["0", "1001", "-1", "x"] {
        for path in [format!("/topBounds()?$top={top}"), format!("/Tables?$top={top}")] {
            let r = c.send("GET", &path, &[], None).await;
            assert_eq!((r.status, r.error_code().as_str()), (400, "InvalidInput"), "{path}: {}", r.body);
        }
    }
    for top in ["1", "1000"] {
        assert_eq!(c.send("GET", &format!("/topBounds()?$top={top}"), &[], None).await.status, 200);
    }
}

/// A weak ETag's `W/` may come in either case: a current one matches, a stale one is 412
/// `UpdateConditionNotSatisfied` with nothing written.
#[tokio::test]
async fn weak_etags_match_with_either_case_of_the_prefix() {
    let (_s, c) = setup("weakCase").await;
    let r = c.insert("weakCase", json!({"PartitionKey": "p", "RowKey": "r", "V": 0})).await;
    let stale = r.header("etag").unwrap().replacen("W/", "w/", 1);
    let url = entity_path("weakCase", "p", "r");
    let r = c.send("PUT", &url, &[("If-Match", &stale)], Some(r#"{"V":1}"#)).await;
    assert_eq!(r.status, 204, "a lower-case w/ of the current ETag matches: {}", r.body);
    for method in ["PUT", "MERGE", "DELETE"] {
        let body = (method != "DELETE").then_some(r#"{"V":2}"#);
        let r = c.send(method, &url, &[("If-Match", &stale)], body).await;
        assert_eq!(
            (r.status, r.error_code().as_str()),
            (412, "UpdateConditionNotSatisfied"),
            "{method}: {}",
            r.body
        );
    }
    assert_eq!(c.get("weakCase", "p", "r").await.json()["V"], 1);
}

/// A null with a type annotation (`"p": null, "p@odata.type": "Edm.DateTime"`, as the JS
/// SDK sends an invalid Date) is a null like any other: the property is not stored, on
/// insert and replace, and a merge leaves the stored value alone.
#[tokio::test]
async fn typed_nulls_are_not_stored() {
    let (_s, c) = setup("typedNull").await;
    let body = |v: &str| {
        format!(
            r#"{{"PartitionKey":"p","RowKey":"r","v":{v},"When":null,"When@odata.type":"Edm.DateTime",
               "N":null,"N@odata.type":"Edm.Int64","G":null,"G@odata.type":"Edm.Guid"}}"#
        )
    };
    let r = c.send("POST", "/typedNull", &[], Some(&body("1"))).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let e = c.get("typedNull", "p", "r").await.json();
    assert_eq!(e["v"], 1);
    for p in ["When", "N", "G"] {
        assert!(e.get(p).is_none() && e.get(format!("{p}@odata.type")).is_none(), "{p} stored: {e}");
    }
    let url = entity_path("typedNull", "p", "r");
    let when = r#"{"When":"2020-01-01T00:00:00Z","When@odata.type":"Edm.DateTime"}"#;
    assert_eq!(c.send("MERGE", &url, &[("If-Match", "*")], Some(when)).await.status, 204);
    assert_eq!(c.send("MERGE", &url, &[("If-Match", "*")], Some(&body("2"))).await.status, 204);
    let e = c.get("typedNull", "p", "r").await.json();
    assert_eq!((e["v"].clone(), e["When"].clone()), (json!(2), json!("2020-01-01T00:00:00Z")), "{e}");
    assert_eq!(c.send("PUT", &url, &[], Some(&body("3"))).await.status, 204);
    let e = c.get("typedNull", "p", "r").await.json();
    assert!(e.get("When").is_none(), "a replace keeps no null: {e}");
    // the annotation is still checked
    let bad = r#"{"PartitionKey":"p","RowKey":"x","When":null,"When@odata.type":"Edm.Nonsense"}"#;
    let r = c.send("POST", "/typedNull", &[], Some(bad)).await;
    assert_eq!((r.status, r.error_code().as_str()), (400, "InvalidInput"), "{}", r.body);
}

/// Point reads are answered from renderings kept in the entity cache: whatever form was
/// asked for before (metadata level, the table's name as spelled, `$select`), each read
/// answers in its own form with what the last write left, ETag header and body alike.
#[tokio::test]
async fn point_reads_answer_in_their_own_form_after_every_write() {
    let (_s, c) = setup("Forms").await;
    let key = ("p", "r");
    c.insert("Forms", json!({"PartitionKey": key.0, "RowKey": key.1, "V": 0})).await;
    let accepts = ["nometadata", "minimalmetadata", "fullmetadata"];
    for round in 0..6 {
        for accept in accepts {
            for spelling in ["Forms", "FORMS", "forms"] {
                let path = entity_path(spelling, key.0, key.1);
                // twice each: the second read finds what the first kept
                for _ in 0..2 {
                    let accept = format!("application/json;odata={accept}");
                    let r = c.send("GET", &path, &[("Accept", &accept)], None).await;
                    assert_eq!(r.status, 200, "{}", r.body);
                    assert!(r.header("content-type").unwrap().contains(&accept[17..]), "{accept}");
                    let v = r.json();
                    assert_eq!(v["V"], round, "{spelling} {accept}: {}", r.body);
                    let etag = r.header("etag").unwrap();
                    match accept.as_str() {
                        "application/json;odata=nometadata" => assert!(v.get("odata.metadata").is_none()),
                        _ => {
                            assert_eq!(v["odata.etag"], etag);
                            let metadata = v["odata.metadata"].as_str().unwrap();
                            assert!(metadata.ends_with(&format!("#{spelling}/@Element")), "{metadata}");
                        }
                    }
                    if accept.ends_with("fullmetadata") {
                        assert_eq!(v["odata.type"], format!("devstoreaccount1.{spelling}"));
                        assert_eq!(v["odata.editLink"], format!("{spelling}(PartitionKey='p',RowKey='r')"));
                    }
                }
            }
        }
        let r = c.send("GET", &format!("{}?$select=V", entity_path("Forms", key.0, key.1)), &[], None).await;
        assert_eq!((r.json()["V"].clone(), r.json().get("RowKey").is_none()), (json!(round), true));
        // the next value, by each kind of write in turn
        let body = json!({"PartitionKey": key.0, "RowKey": key.1, "V": round + 1}).to_string();
        let path = entity_path("Forms", key.0, key.1);
        let r = match round % 3 {
            0 => c.send("PUT", &path, &[("If-Match", "*")], Some(&body)).await,
            1 => c.send("MERGE", &path, &[("If-Match", "*")], Some(&body)).await,
            _ => c.send("PATCH", &path, &[], Some(&body)).await,
        };
        assert_eq!(r.status, 204, "{}", r.body);
    }
    // a deleted entity is not found in any form
    let path = entity_path("Forms", key.0, key.1);
    assert_eq!(c.send("DELETE", &path, &[("If-Match", "*")], None).await.status, 204);
    for accept in accepts {
        let r = c.send("GET", &path, &[("Accept", &format!("application/json;odata={accept}"))], None).await;
        assert_eq!(r.status, 404, "{accept}: {}", r.body);
    }
}
