//! `--ceiling-server PORT`: a minimal hyper server (HTTP/1.1, as aztable's) on 127.0.0.1 that does no work
//! but answers every request the load tool sends with a valid answer of the right shape,
//! so that a scenario run against it measures the floor of this machine's HTTP stack and
//! load tool for that kind of request. Stops by itself after `serve_for`.
//!
//! | request | answer |
//! | --- | --- |
//! | `POST /acct/Tables` (create) | 204, or 201 echoing the body without `Prefer: return-no-content` |
//! | `POST /acct/t` (insert) | the same |
//! | `DELETE`, `PUT`, `PATCH`, `MERGE` | 204 |
//! | `POST /acct/$batch` | 202, a change set response with one 204 (or 201) part per operation |
//! | `GET /acct/t(PartitionKey=…,RowKey=…)` | 200, one fixed 1 KB entity |
//! | any other `GET` (queries) | 200, `{"value":[entity]}`: one page, no continuation |
//!
//! Only the single-operation scenarios (`point-read`, `insert-many-partitions`,
//! `insert-one-partition`, `batch-insert`) are meaningful against it: a range query or a
//! scan gets one entity back, which the load tool counts as an error. Every request
//! body is read in full, as a server must, and nothing is parsed or checked except
//! what picks the shape of the answer (the method, the path's last segment, and for a
//! `$batch` the number of operations).
//!
//! With `--ceiling-work`, every answer first spends that long on the CPU (a busy loop):
//! a stand-in for a real server's own work per request, which shows what the machine
//! charges for CPU per request beyond the work itself (with the client on the same
//! cores, a server that takes longer per request leaves its workers idle and waking
//! more often).

use crate::entity::{entity_json, Rng};
use aztable_wire::batch::{write_query, write_success, OpResult};
use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::rt::TokioIo;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// The JSON content type of entity and query answers.
const JSON: &str = "application/json;odata=nometadata;streaming=true;charset=utf-8";

/// Change sets of up to this many operations (the service maximum) have their 204
/// answer prepared at start; larger ones are built per request.
const PREPARED_OPS: usize = 100;

/// Largest request body read (a 100-operation batch of 1 KB entities is ~140 KB).
const MAX_BODY: usize = 8 << 20;

type Response = http::Response<Full<Bytes>>;

/// Serves on `127.0.0.1:port` until `serve_for` has passed or Ctrl-C, spending `work`
/// on the CPU before each answer.
pub(crate) async fn serve(port: u16, serve_for: Duration, work: Duration) -> Result<(), String> {
    let answers = Arc::new(Answers::new(work));
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("bind {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!(
        "ceiling server on http://{local}/devstoreaccount1 for {}s, {} ns of work per request",
        serve_for.as_secs(),
        work.as_nanos()
    );
    let stop = tokio::time::sleep(serve_for);
    tokio::pin!(stop);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => continue,
            },
            _ = &mut stop => return Ok(()),
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let answers = Arc::clone(&answers);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let answers = Arc::clone(&answers);
                async move { Ok::<_, std::convert::Infallible>(answer(&answers, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// An answer of `status` with a content type (when given) and a body.
fn respond(status: StatusCode, content_type: Option<HeaderValue>, body: Bytes) -> Response {
    let mut resp = http::Response::new(Full::new(body));
    *resp.status_mut() = status;
    if let Some(content_type) = content_type {
        resp.headers_mut().insert(CONTENT_TYPE, content_type);
    }
    resp
}

/// The fixed answers, built once.
struct Answers {
    entity: Bytes,
    /// `{"value":[entity]}`.
    page: Bytes,
    /// `no_content[n]`: content type and body of a change set response with `n` 204 parts.
    no_content: Vec<(HeaderValue, Bytes)>,
    /// `--ceiling-work`: CPU time spent before each answer.
    work: Duration,
}

/// What a request gets, by its method and path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Table create or entity insert: 204 or 201.
    Create,
    NoContent,
    Batch,
    Entity,
    Query,
}

impl Answers {
    fn new(work: Duration) -> Answers {
        let entity = entity_json("p0000000", "r000000000", 0, "hay", &mut Rng::new(1));
        let mut page = b"{\"value\":[".to_vec();
        page.extend_from_slice(&entity);
        page.extend_from_slice(b"]}");
        let no_content = (0..=PREPARED_OPS).map(|n| as_parts(change_set(n, false, &entity))).collect();
        Answers { entity: Bytes::from(entity), page: Bytes::from(page), no_content, work }
    }

    /// The answer to a `$batch` body: a change set response with one part per
    /// operation, or for a batch without a change set (a query batch, one GET) a query
    /// response with the entity.
    fn batch(&self, body: &[u8]) -> Response {
        let (content_type, body) = match count_operations(body) {
            Some((ops, true)) if ops <= PREPARED_OPS => self.no_content[ops].clone(),
            Some((ops, no_content)) => as_parts(change_set(ops, no_content, &self.entity)),
            None => as_parts(write_query(&OpResult {
                status: 200,
                headers: vec![("Content-Type", JSON.into())],
                body: self.entity.to_vec(),
            })),
        };
        respond(StatusCode::ACCEPTED, Some(content_type), body)
    }
}

/// A change set response with `ops` parts: 204 each, or 201 with `entity`.
fn change_set(ops: usize, no_content: bool, entity: &[u8]) -> (String, Vec<u8>) {
    let part = if no_content {
        OpResult {
            status: 204,
            headers: vec![
                ("Preference-Applied", "return-no-content".into()),
                ("DataServiceVersion", "3.0;".into()),
            ],
            body: Vec::new(),
        }
    } else {
        OpResult {
            status: 201,
            headers: vec![("Content-Type", JSON.into()), ("DataServiceVersion", "3.0;".into())],
            body: entity.to_vec(),
        }
    };
    let parts: Vec<(Option<String>, OpResult)> = (0..ops).map(|_| (None, part.clone())).collect();
    write_success(&parts)
}

fn as_parts((content_type, body): (String, Vec<u8>)) -> (HeaderValue, Bytes) {
    let content_type =
        HeaderValue::from_str(&content_type).unwrap_or_else(|_| HeaderValue::from_static("multipart/mixed"));
    (content_type, Bytes::from(body))
}

/// The handler of every request.
async fn answer(answers: &Answers, req: http::Request<hyper::body::Incoming>) -> Response {
    let (parts, body) = req.into_parts();
    // Read in full, as any server must (an unread body can also cost the keep-alive).
    let body: Bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return respond(StatusCode::BAD_REQUEST, None, Bytes::from(e.to_string())),
    };
    busy(answers.work);
    let json = || Some(HeaderValue::from_static(JSON));
    match kind(&parts.method, parts.uri.path()) {
        Kind::Entity => respond(StatusCode::OK, json(), answers.entity.clone()),
        Kind::Query => respond(StatusCode::OK, json(), answers.page.clone()),
        Kind::NoContent => respond(StatusCode::NO_CONTENT, None, Bytes::new()),
        Kind::Create if prefers_no_content(&parts.headers) => {
            respond(StatusCode::NO_CONTENT, None, Bytes::new())
        }
        Kind::Create => respond(StatusCode::CREATED, json(), body),
        Kind::Batch => answers.batch(&body),
    }
}

/// Keeps the thread busy for `work` (nothing for zero).
fn busy(work: Duration) {
    if work.is_zero() {
        return;
    }
    let start = std::time::Instant::now();
    while start.elapsed() < work {
        std::hint::spin_loop();
    }
}

fn prefers_no_content(headers: &HeaderMap) -> bool {
    headers.get("prefer").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"return-no-content"))
}

/// The kind of answer for `method` on `path` (`/account/rest`).
fn kind(method: &Method, path: &str) -> Kind {
    let rest = path.trim_start_matches('/');
    let rest = rest.split_once('/').map_or("", |(_, rest)| rest);
    match *method {
        Method::POST if rest == "$batch" => Kind::Batch,
        Method::POST => Kind::Create,
        Method::GET | Method::HEAD if rest.ends_with(')') && !rest.ends_with("()") && rest != "Tables()" => {
            if rest.starts_with("Tables(") {
                Kind::Query
            } else {
                Kind::Entity
            }
        }
        Method::GET | Method::HEAD => Kind::Query,
        _ => Kind::NoContent,
    }
}

/// The operations of a `$batch` request body and whether its first one asks for
/// `Prefer: return-no-content`; `None` for a batch without a change set.
///
/// Cost: the change set boundary is read from the first `boundary=` in the body (within
/// its first lines), then one `memmem` pass over the rest of the body counts the
/// delimiter lines `--<boundary>\r\n` (a SIMD substring search, linear in the body: a
/// few microseconds for a 100-entity batch of ~140 KB, where a real server also splits
/// the parts, parses each sub-request and its JSON, and writes the entities). The
/// `Prefer` check looks only inside the first part.
fn count_operations(body: &[u8]) -> Option<(usize, bool)> {
    const HEAD: usize = 512;
    let head = &body[..body.len().min(HEAD)];
    let at = memchr::memmem::find(head, b"boundary=")? + b"boundary=".len();
    let end = head[at..].iter().position(|&b| matches!(b, b'\r' | b'\n' | b';' | b' '))?;
    let boundary = head[at..at + end].strip_prefix(b"\"").unwrap_or(&head[at..at + end]);
    let boundary = boundary.strip_suffix(b"\"").unwrap_or(boundary);
    let mut delimiter = Vec::with_capacity(boundary.len() + 4);
    delimiter.extend_from_slice(b"--");
    delimiter.extend_from_slice(boundary);
    delimiter.extend_from_slice(b"\r\n");
    let finder = memchr::memmem::Finder::new(&delimiter);
    let mut found = finder.find_iter(&body[at..]);
    let first = found.next()?;
    let second = found.next();
    let ops = 1 + second.map_or(0, |_| 1) + found.count();
    let first_part = &body[at + first..second.map_or(body.len(), |s| at + s)];
    let no_content = memchr::memmem::find(first_part, b"return-no-content").is_some();
    Some((ops, no_content))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::{batch_body, batch_outcome, count_entities, Layout};

    #[test]
    fn answers_by_method_and_path() {
        let cases = [
            (Method::POST, "/devstoreaccount1/Tables", Kind::Create),
            (Method::DELETE, "/devstoreaccount1/Tables('t')", Kind::NoContent),
            (Method::POST, "/devstoreaccount1/$batch", Kind::Batch),
            (Method::POST, "/devstoreaccount1/t", Kind::Create),
            (Method::PUT, "/devstoreaccount1/t(PartitionKey='a',RowKey='b')", Kind::NoContent),
            (Method::PATCH, "/devstoreaccount1/t(PartitionKey='a',RowKey='b')", Kind::NoContent),
            (Method::GET, "/devstoreaccount1/t(PartitionKey='a',RowKey='b')", Kind::Entity),
            (Method::GET, "/devstoreaccount1/t()", Kind::Query),
            (Method::GET, "/devstoreaccount1/t", Kind::Query),
            (Method::GET, "/devstoreaccount1/Tables", Kind::Query),
            (Method::GET, "/devstoreaccount1/Tables('t')", Kind::Query),
        ];
        for (method, path, expected) in cases {
            assert_eq!(kind(&method, path), expected, "{method} {path}");
        }
    }

    #[test]
    fn work_keeps_the_thread_busy_that_long() {
        let cpu = || crate::stats::cpu_us_in("/proc/thread-self/stat").unwrap_or(0);
        let (cpu_before, start) = (cpu(), std::time::Instant::now());
        busy(Duration::from_millis(300));
        let elapsed = start.elapsed();
        assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
        // on the CPU, not asleep: this thread's own counter moved (by how much depends on
        // what else the cores run, so no share is asserted)
        assert!(cpu() > cpu_before, "no CPU time counted while busy");
    }

    /// The tool's own batch response check takes the ceiling's answer to each of its
    /// batches as all success, one part per operation.
    #[test]
    fn batch_answers_are_all_success_for_the_tool() {
        let answers = Answers::new(Duration::ZERO);
        let mut rng = Rng::new(1);
        for n in [1u64, 2, 37, 100, 101] {
            let entities: Vec<Vec<u8>> =
                (0..n).map(|i| entity_json("p", &Layout::row_key(i), i, "hay", &mut rng)).collect();
            let (_, body) = batch_body("http://127.0.0.1:1/devstoreaccount1", "t", n, &entities);
            assert_eq!(count_operations(&body), Some((n as usize, true)), "{n} operations");
            let (content_type, answer) = match count_operations(&body) {
                Some((ops, true)) if ops <= PREPARED_OPS => answers.no_content[ops].clone(),
                Some((ops, no_content)) => as_parts(change_set(ops, no_content, &answers.entity)),
                None => panic!("a change set"),
            };
            assert!(content_type.to_str().is_ok_and(|ct| ct.starts_with("multipart/mixed; boundary=")));
            assert_eq!(batch_outcome(&answer, n), Ok(()), "{n} operations");
            assert_eq!(
                batch_outcome(&answer, n + 1),
                Err(format!("{n} sub-responses for {} operations", n + 1))
            );
        }
        // without `Prefer: return-no-content`: 201 parts with the entity
        let (_, with_entities) = change_set(3, false, &answers.entity);
        assert_eq!(batch_outcome(&with_entities, 3), Ok(()));
        assert_eq!(count_entities(&with_entities), 3);
        // the old ceiling's answer to everything, one entity, is not a batch answer
        assert!(batch_outcome(&answers.entity, 100).is_err());
        assert_eq!(count_operations(b"--batch_x\r\nContent-Type: application/http\r\n\r\nGET x"), None);
    }
}
