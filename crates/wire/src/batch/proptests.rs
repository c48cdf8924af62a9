//! Property tests: `parse` never panics (arbitrary bytes, mutated valid bodies), a
//! randomly built valid batch parses back to the operations it was built from, and a
//! header is looked up as in a list whose names were all lowercased.

use std::borrow::Cow;

use super::*;
use proptest::prelude::*;
use proptest::sample::Index;

const BATCH: &str = "batch_8c1f0b3e-4c41-4f0a-9d3e-2b7f6a1c9e55";
const CHANGESET: &str = "changeset_0f6e2d8a-7b1c-4e9f-a3d2-5c4b3a291807";

/// One generated operation and how to write it.
#[derive(Debug, Clone)]
struct GenOp {
    /// Effective verb.
    method: &'static str,
    /// Send as POST + X-HTTP-Method.
    tunnel: bool,
    keys: (String, String),
    absolute: bool,
    query: Option<String>,
    /// Extra headers (mixed-case names).
    headers: Vec<(String, String)>,
    content_id: Option<String>,
    /// Put the Content-ID in the MIME part headers instead of the request headers.
    cid_in_mime: bool,
    body: Vec<u8>,
}

#[derive(Debug, Clone)]
struct GenBatch {
    table: String,
    path_style: bool,
    lf: bool,
    quoted: bool,
    js_preamble: bool,
    ops: Vec<GenOp>,
}

/// An OData string literal for a key, percent-encoded the way SDKs do it (UTF-8 bytes
/// of non-ASCII characters, `%`, quotes and spaces as `%XX`).
fn literal(key: &str) -> String {
    let quoted = format!("'{}'", key.replace('\'', "''"));
    percent_encoding::utf8_percent_encode(&quoted, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl GenOp {
    fn url_path(&self, b: &GenBatch) -> String {
        let prefix = if b.path_style { "/devstoreaccount1" } else { "" };
        match self.method {
            "POST" => format!("{prefix}/{}", b.table),
            _ => format!(
                "{prefix}/{}(PartitionKey={},RowKey={})",
                b.table,
                literal(&self.keys.0),
                literal(&self.keys.1)
            ),
        }
    }

    /// The request headers as `parse` should report them: names as written.
    fn expected_headers(&self) -> Vec<(&str, Cow<'_, str>)> {
        let mut out = Vec::new();
        if self.tunnel {
            out.push(("X-HTTP-Method", Cow::Borrowed(self.method)));
        }
        if let (Some(id), false) = (&self.content_id, self.cid_in_mime) {
            out.push(("Content-ID", Cow::Borrowed(id.as_str())));
        }
        out.extend(self.headers.iter().map(|(n, v)| (n.as_str(), Cow::Borrowed(v.as_str()))));
        out
    }

    fn expected(&self, index: usize, b: &GenBatch) -> BatchOp<'_> {
        BatchOp {
            index,
            content_id: self.content_id.as_deref().map(Cow::Borrowed),
            method: self.method,
            url_path: Cow::Owned(self.url_path(b)),
            query: self.query.as_deref(),
            headers: self.expected_headers(),
            body: &self.body,
            endpoint: self.expected_endpoint(b),
        }
    }

    /// The operation the URL and verb name, built from what was generated.
    fn expected_endpoint(&self, b: &GenBatch) -> crate::endpoint::Endpoint {
        use crate::endpoint::Endpoint as E;
        let (table, (pk, rk)) = (b.table.clone(), self.keys.clone());
        match self.method {
            "POST" => E::InsertEntity { table },
            "PUT" => E::UpdateEntity { table, pk, rk },
            "DELETE" => E::DeleteEntity { table, pk, rk },
            _ => E::MergeEntity { table, pk, rk },
        }
    }
}

impl GenBatch {
    fn content_type(&self) -> String {
        if self.quoted {
            format!("multipart/mixed; boundary=\"{BATCH}\"")
        } else {
            format!("multipart/mixed; boundary={BATCH}")
        }
    }

    fn body(&self) -> Vec<u8> {
        let eol = if self.lf { "\n" } else { "\r\n" };
        let mut out = Vec::new();
        let line = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(s.as_bytes());
            out.extend_from_slice(eol.as_bytes());
        };
        line(&mut out, &format!("--{BATCH}"));
        let cs = if self.quoted { format!("\"{CHANGESET}\"") } else { CHANGESET.to_owned() };
        line(&mut out, &format!("Content-Type: multipart/mixed; boundary={cs}"));
        line(&mut out, "");
        if self.js_preamble {
            line(&mut out, "");
        }
        for op in &self.ops {
            line(&mut out, &format!("--{CHANGESET}"));
            line(&mut out, "Content-Type: application/http");
            line(&mut out, "Content-Transfer-Encoding: binary");
            if let (Some(id), true) = (&op.content_id, op.cid_in_mime) {
                line(&mut out, &format!("Content-ID: {id}"));
            }
            line(&mut out, "");
            let host = if op.absolute { "http://127.0.0.1:10002" } else { "" };
            let verb = if op.tunnel { "POST" } else { op.method };
            let query = op.query.as_ref().map(|q| format!("?{q}")).unwrap_or_default();
            line(&mut out, &format!("{verb} {host}{}{query} HTTP/1.1", op.url_path(self)));
            if op.tunnel {
                line(&mut out, &format!("X-HTTP-Method: {}", op.method));
            }
            if let (Some(id), false) = (&op.content_id, op.cid_in_mime) {
                line(&mut out, &format!("Content-ID: {id}"));
            }
            for (n, v) in &op.headers {
                line(&mut out, &format!("{n}: {v}"));
            }
            line(&mut out, "");
            out.extend_from_slice(&op.body);
            out.extend_from_slice(eol.as_bytes());
        }
        line(&mut out, &format!("--{CHANGESET}--"));
        line(&mut out, &format!("--{BATCH}--"));
        out
    }
}

fn gen_op(lf: bool) -> impl Strategy<Value = GenOp> {
    let method = prop::sample::select(vec!["POST", "PUT", "MERGE", "PATCH", "DELETE"]);
    // non-ASCII keys too: two-byte, four-byte, and private-use characters, whose UTF-16
    // and code-point orders differ
    let key = "[a-zA-Z0-9 '%\u{e9}\u{1f600}\u{e000}\u{10000}]{0,8}";
    let header = ("X-[a-zA-Z]{1,8}", "[!-~]([ -~]{0,16}[!-~])?");
    (
        (method, any::<bool>(), (key, key), any::<bool>()),
        prop::option::of("\\$select=[a-z]{1,5}(&timeout=[0-9]{1,2})?"),
        prop::collection::vec(header, 0..4),
        (prop::option::of("[0-9]{1,3}"), any::<bool>()),
        prop::collection::vec(any::<u8>(), 0..120),
    )
        .prop_map(
            move |((method, tunnel, keys, absolute), query, headers, (content_id, cid_in_mime), mut body)| {
                // With bare LF line ends a trailing CR would read as part of the delimiter.
                while lf && body.last() == Some(&b'\r') {
                    body.pop();
                }
                GenOp {
                    method,
                    tunnel: tunnel && method != "POST",
                    keys,
                    absolute,
                    query,
                    headers,
                    content_id,
                    cid_in_mime,
                    body,
                }
            },
        )
}

fn gen_batch() -> impl Strategy<Value = GenBatch> {
    (any::<bool>(), "tb[a-zA-Z0-9]{1,10}", any::<bool>(), any::<bool>(), any::<bool>()).prop_flat_map(
        |(lf, table, path_style, quoted, js_preamble)| {
            prop::collection::vec(gen_op(lf), 1..12).prop_map(move |ops| GenBatch {
                table: table.clone(),
                path_style,
                lf,
                quoted,
                js_preamble,
                ops,
            })
        },
    )
}

fn content_types() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(format!("multipart/mixed; boundary={BATCH}")),
        Just("multipart/mixed; boundary=b".to_owned()),
        "[ -~]{0,60}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip(batch in gen_batch()) {
        let body = batch.body();
        let req = parse(&batch.content_type(), &body, &Limits::default());
        let expected: Vec<BatchOp<'_>> = batch.ops.iter().enumerate().map(|(i, op)| op.expected(i, &batch)).collect();
        prop_assert_eq!(req, Ok(BatchRequest { kind: BatchKind::ChangeSet, ops: expected }));
    }

    /// Names looked up without regard to ASCII case answer what the lowercased list
    /// answers: the first header whose lowercased name is the name asked for. Names
    /// differ only in case (ASCII and not: `Ä` is no `ä` here) so that several match.
    #[test]
    fn header_lookup_is_lookup_in_lowercased_names(
        sent in prop::collection::vec(("[aAbBÄä-]{1,3}", "[a-z0-9]{0,3}"), 0..12),
        asked in prop::collection::vec("[abä-]{1,3}", 1..8),
    ) {
        let block: String = sent.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
        let headers = super::multipart::parse_headers(block.as_bytes()).map_err(TestCaseError::fail)?;
        let lowered: Vec<(String, &str)> = headers.iter().map(|(n, v)| (n.to_ascii_lowercase(), &**v)).collect();
        let op = |headers| BatchOp {
            index: 0,
            content_id: None,
            method: "POST",
            url_path: Cow::Borrowed("/t"),
            query: None,
            headers,
            body: b"",
            endpoint: crate::endpoint::Endpoint::InsertEntity { table: "t".to_owned() },
        };
        let op = op(headers.clone());
        for name in asked.iter().chain(sent.iter().map(|(n, _)| n).filter(|n| !n.contains(['A', 'B']))) {
            let model = lowered.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
            prop_assert_eq!(super::multipart::header(&headers, name), model, "{}", name);
            prop_assert_eq!(op.header(name), model, "{}", name);
        }
    }

    #[test]
    fn never_panics_on_bytes(ct in content_types(), body in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = parse(&ct, &body, &Limits::default());
    }

    #[test]
    fn never_panics_on_boundary_soup(
        pieces in prop::collection::vec(prop_oneof![
            Just(format!("--{BATCH}")), Just(format!("--{CHANGESET}")), Just("--".to_owned()),
            Just("\r\n".to_owned()), Just("\n".to_owned()), Just("\r".to_owned()),
            Just(format!("Content-Type: multipart/mixed; boundary={CHANGESET}")),
            Just("Content-Type: application/http".to_owned()), Just("Content-ID: 1".to_owned()),
            Just("POST /t HTTP/1.1".to_owned()), Just("GET /t(PartitionKey='a',RowKey='b')".to_owned()),
            Just("X-HTTP-Method: MERGE".to_owned()), Just(":".to_owned()), Just(" ".to_owned()),
            Just("\u{e9}\u{1f600}".to_owned()), "[ -~]{0,8}",
        ], 0..60)
    ) {
        let body = pieces.concat();
        let _ = parse(&format!("multipart/mixed; boundary={BATCH}"), body.as_bytes(), &Limits::default());
    }

    #[test]
    fn never_panics_on_mutated_bodies(
        batch in gen_batch(),
        edits in prop::collection::vec((any::<Index>(), any::<u8>(), 0..3u8), 1..8),
        limit in prop::option::of(0usize..4000),
    ) {
        let mut body = batch.body();
        for (at, byte, kind) in edits {
            let i = at.index(body.len() + 1);
            match kind {
                0 if i < body.len() => body[i] = byte,
                1 => body.insert(i, byte),
                _ if i < body.len() => { body.remove(i); }
                _ => {}
            }
        }
        let limits = Limits { max_ops: 5, max_body: limit.unwrap_or(usize::MAX) };
        if let Err(e) = parse(&batch.content_type(), &body, &limits) {
            let _ = (e.message(), e.placement(), e.to_string(), aztable_model::error::ApiError::from(e));
        }
    }
}
