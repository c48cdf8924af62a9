//! The read-only data browser at /_aztable/browse: the table list, a table's entities
//! 50 a page with a working next link, the `$filter` box, escaping of hostile values,
//! and the advisor's access rule beyond loopback.

use crate::common::{TestServer, KEY};
use serde_json::json;

async fn get(s: &TestServer, path: &str) -> (u16, String, String) {
    let r = reqwest::get(format!("http://127.0.0.1:{}{path}", s.port)).await.expect("browse");
    let ct = r.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (r.status().as_u16(), ct, r.text().await.expect("body"))
}

fn rows(html: &str) -> usize {
    html.matches("<tr><td>").count()
}

/// The href of the "next page" link, unescaped.
fn next_link(html: &str) -> Option<String> {
    let at = html.find("rel=\"next\" href=\"")? + "rel=\"next\" href=\"".len();
    let end = html[at..].find('"')?;
    Some(html[at..at + end].replace("&amp;", "&"))
}

#[tokio::test]
async fn tables_entities_paging_filter_and_escaping() {
    let s = TestServer::start_with(&["--inMemoryPersistence"], &[]);
    let c = s.client();
    assert_eq!(c.create_table("people").await.status, 201);
    for i in 0..120 {
        let r = c
            .insert(
                "people",
                json!({"PartitionKey": format!("p{}", i % 2), "RowKey": format!("{i:04}"), "N": i}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let hostile = "<script>alert('x')</script>";
    let r = c
        .insert(
            "people",
            json!({"PartitionKey": "z", "RowKey": "evil", "Html": hostile, "Big@odata.type": "Edm.Int64", "Big": "12"}),
        )
        .await;
    assert_eq!(r.status, 201);

    let (status, ct, html) = get(&s, "/_aztable/browse").await;
    assert_eq!((status, ct.as_str()), (200, "text/html; charset=utf-8"));
    assert!(
        html.contains("devstoreaccount1")
            && html.contains("href=\"/_aztable/browse/devstoreaccount1/people\"")
    );

    // paging: 50, 50, 21, each next link followed as a browser would
    let (status, _, first) = get(&s, "/_aztable/browse/devstoreaccount1/people").await;
    assert_eq!(status, 200);
    assert_eq!(rows(&first), 50);
    let second_link = next_link(&first).expect("a next link");
    let (status, _, second) = get(&s, &second_link).await;
    assert_eq!((status, rows(&second)), (200, 50));
    assert_ne!(first, second);
    let (_, _, third) = get(&s, &next_link(&second).expect("another")).await;
    assert_eq!(rows(&third), 21);
    assert!(next_link(&third).is_none());

    // typed values and escaping
    assert!(third.contains("Edm.Int64") && third.contains("Edm.Int32"), "types shown");
    assert!(!third.contains(hostile) && !third.contains("<script"), "escaped");
    assert!(third.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(!first.contains("<script"));

    // the filter box: the normal $filter syntax, kept on the next link
    let f =
        "/_aztable/browse/devstoreaccount1/people?filter=PartitionKey%20eq%20%27p1%27%20and%20N%20ge%2010";
    let (status, _, page) = get(&s, f).await;
    assert_eq!((status, rows(&page)), (200, 50));
    let link = next_link(&page).expect("more matches");
    assert!(link.contains("filter="), "{link}");
    let (_, _, rest) = get(&s, &link).await;
    assert_eq!(rows(&rest), 5, "p1 holds 60 rows, 55 with N >= 10");
    let (status, _, bad) =
        get(&s, "/_aztable/browse/devstoreaccount1/people?filter=N%20eq%20%3Cscript%3E").await;
    assert_eq!(status, 400);
    assert!(!bad.contains("<script"), "the refused filter is escaped too");

    assert_eq!(get(&s, "/_aztable/browse/devstoreaccount1/nosuch").await.0, 404);
    assert_eq!(get(&s, "/_aztable/browse/nobody/people").await.0, 404);
    let (_, _, advisor) = get(&s, "/_aztable/insight").await;
    assert!(advisor.contains("href=\"browse\""), "linked from the advisor page");
}

#[tokio::test]
async fn beyond_loopback_the_browser_needs_an_account_key() {
    let s = TestServer::start_raw(&["--tableHost", "0.0.0.0", "--tablePort", "0", "--inMemoryPersistence"]);
    assert_eq!(get(&s, "/_aztable/browse").await.0, 403);
    assert_eq!(get(&s, "/_aztable/browse?key=d3Jvbmc=").await.0, 403);
    let key: String = form_urlencoded::byte_serialize(KEY.as_bytes()).collect();
    let (status, _, html) = get(&s, &format!("/_aztable/browse?key={key}")).await;
    assert_eq!(status, 200);
    assert!(html.contains("devstoreaccount1"));
    // with --insight off the admin pages are gone
    let off = TestServer::start_with(&["--inMemoryPersistence", "--insight", "off"], &[]);
    assert_eq!(get(&off, "/_aztable/browse").await.0, 404);
}
