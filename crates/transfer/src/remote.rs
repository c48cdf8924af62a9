//! A running server (aztable, Azurite or the real service), over HTTP with SharedKey
//! signatures ([`aztable_wire::auth::sign`]). Imports are entity group transactions of up to
//! 100 Insert Or Replace operations, one partition each; the server stamps Timestamps.

use super::format::parse_entity_object;
use aztable_model::Entity;
use aztable_wire::auth::sign::{shared_key_authorization, SignParts};
use reqwest::header::HeaderMap;
use reqwest::{Method, Url};

/// The service version the requests are sent as.
const VERSION: &str = "2019-02-02";
/// Operations in one entity group transaction (the service's limit).
const BATCH_OPS: usize = 100;

pub(crate) struct Remote {
    http: reqwest::Client,
    /// The table endpoint, without a trailing `/` (e.g. `http://127.0.0.1:10002/devstoreaccount1`).
    base: String,
    account: String,
    key: Vec<u8>,
}

/// An answer: status, headers, body.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    fn error(&self, what: &str) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let code = self.header("x-ms-error-code").unwrap_or_default();
        format!("{what}: HTTP {} {code} {}", self.status, text.chars().take(300).collect::<String>())
    }
}

/// `table(PartitionKey='..',RowKey='..')` and the rest of a URL path, percent-encoded.
fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl Remote {
    pub(crate) fn new(base: &str, account: &str, key: Vec<u8>) -> Result<Remote, String> {
        Url::parse(base).map_err(|e| format!("--url {base}: {e}"))?;
        let http = reqwest::Client::builder().build().map_err(|e| e.to_string())?;
        Ok(Remote { http, base: base.trim_end_matches('/').to_owned(), account: account.to_owned(), key })
    }

    /// Sends a signed request to `{base}/{path}` (`path` already encoded, with any query).
    async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: &str,
        extra: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Answer, String> {
        let url = Url::parse(&format!("{}/{path}", self.base)).map_err(|e| format!("{path}: {e}"))?;
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let parts = SignParts {
            method: method.as_str(),
            raw_path: url.path(),
            query: url.query(),
            content_md5: "",
            content_type,
            date: &date,
        };
        let auth = shared_key_authorization(&self.account, &self.key, &parts);
        let mut req = self
            .http
            .request(method, url.clone())
            .header("x-ms-date", &date)
            .header("x-ms-version", VERSION)
            .header("DataServiceVersion", "3.0")
            .header("MaxDataServiceVersion", "3.0;NetFx")
            .header("Authorization", auth);
        if !content_type.is_empty() {
            req = req.header("Content-Type", content_type);
        }
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        let resp = req.body(body).send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.bytes().await.map_err(|e| format!("{url}: {e}"))?.to_vec();
        Ok(Answer { status, headers, body })
    }

    fn json(a: &Answer, what: &str) -> Result<serde_json::Value, String> {
        serde_json::from_slice(&a.body).map_err(|e| format!("{what}: the answer is not JSON: {e}"))
    }

    /// Every table of the account.
    pub(crate) async fn tables(&self) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let path = match &next {
                Some(n) => format!("Tables?NextTableName={}", encode(n)),
                None => "Tables".to_owned(),
            };
            let accept = [("Accept", "application/json;odata=nometadata")];
            let a = self.send(Method::GET, &path, "", &accept, Vec::new()).await?;
            if a.status != 200 {
                return Err(a.error("Query Tables"));
            }
            let v = Self::json(&a, "Query Tables")?;
            let names = v.get("value").and_then(|v| v.as_array()).cloned().unwrap_or_default();
            out.extend(names.iter().filter_map(|t| t.get("TableName")?.as_str().map(str::to_owned)));
            match a.header("x-ms-continuation-NextTableName") {
                Some(n) => next = Some(n),
                None => return Ok(out),
            }
        }
    }

    /// The table's name as created, or an error naming it when it does not exist.
    pub(crate) async fn table(&self, name: &str) -> Result<String, String> {
        let path = format!("Tables('{}')", encode(&name.replace('\'', "''")));
        let accept = [("Accept", "application/json;odata=nometadata")];
        let a = self.send(Method::GET, &path, "", &accept, Vec::new()).await?;
        match a.status {
            200 => Ok(Self::json(&a, "Get Table")?
                .get("TableName")
                .and_then(|t| t.as_str())
                .unwrap_or(name)
                .to_owned()),
            404 => Err(format!("no table '{name}'")),
            _ => Err(a.error("Get Table")),
        }
    }

    /// One page of a table's entities from `next`, and where the next page starts.
    pub(crate) async fn page(
        &self,
        table: &str,
        next: Option<(String, String)>,
    ) -> Result<(Vec<Entity>, Option<(String, String)>), String> {
        let mut path = format!("{}()", encode(table));
        if let Some((pk, rk)) = &next {
            path.push_str(&format!("?NextPartitionKey={}&NextRowKey={}", encode(pk), encode(rk)));
        }
        let accept = [("Accept", "application/json;odata=minimalmetadata")];
        let a = self.send(Method::GET, &path, "", &accept, Vec::new()).await?;
        if a.status != 200 {
            return Err(a.error(&format!("Query Entities of {table}")));
        }
        let v = Self::json(&a, "Query Entities")?;
        let items = v.get("value").and_then(|v| v.as_array()).cloned().unwrap_or_default();
        let mut entities = Vec::with_capacity(items.len());
        for item in &items {
            let ts = item.get("Timestamp").and_then(|t| t.as_str());
            let bytes = serde_json::to_vec(item).map_err(|e| e.to_string())?;
            let (e, _) = parse_entity_object(&bytes, ts).map_err(|e| format!("table {table}: {e}"))?;
            entities.push(e);
        }
        let more = match (
            a.header("x-ms-continuation-NextPartitionKey"),
            a.header("x-ms-continuation-NextRowKey"),
        ) {
            (Some(pk), rk) => Some((pk, rk.unwrap_or_default())),
            _ => None,
        };
        Ok((entities, more))
    }

    /// Creates the table unless it exists.
    pub(crate) async fn create_table(&self, name: &str) -> Result<(), String> {
        let body = super::format::table_line(name);
        let extra = [("Accept", "application/json;odata=nometadata"), ("Prefer", "return-no-content")];
        let a = self.send(Method::POST, "Tables", "application/json", &extra, body).await?;
        match a.status {
            201 | 204 | 409 => Ok(()),
            _ => Err(a.error(&format!("Create Table {name}"))),
        }
    }

    /// Writes the entities (Insert Or Replace), one entity group transaction per run of
    /// up to 100 of a partition's entities.
    pub(crate) async fn write(&self, table: &str, entities: &[Entity]) -> Result<(), String> {
        for run in entities.chunk_by(|a, b| a.partition_key == b.partition_key) {
            for chunk in run.chunks(BATCH_OPS) {
                self.batch(table, chunk).await?;
            }
        }
        Ok(())
    }

    async fn batch(&self, table: &str, entities: &[Entity]) -> Result<(), String> {
        let id = uuid::Uuid::new_v4();
        let (batch, changeset) = (format!("batch_{id}"), format!("changeset_{id}"));
        let mut body = Vec::with_capacity(entities.len() * 512);
        body.extend_from_slice(
            format!("--{batch}\r\nContent-Type: multipart/mixed; boundary={changeset}\r\n\r\n").as_bytes(),
        );
        for e in entities {
            let url = format!(
                "{}/{}",
                self.base,
                aztable_wire::odata::entity_path(table, &e.partition_key, &e.row_key)
            );
            body.extend_from_slice(
                format!(
                    "--{changeset}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
                     PUT {url} HTTP/1.1\r\nContent-Type: application/json\r\n\
                     Accept: application/json;odata=nometadata\r\nPrefer: return-no-content\r\n\
                     DataServiceVersion: 3.0\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(&aztable_wire::odata::entity_object(e));
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{changeset}--\r\n\r\n--{batch}--\r\n").as_bytes());
        let content_type = format!("multipart/mixed; boundary={batch}");
        let a = self.send(Method::POST, "$batch", &content_type, &[], body).await?;
        let text = String::from_utf8_lossy(&a.body);
        let failed = text.lines().find(|l| l.starts_with("HTTP/1.1 ") && !l.starts_with("HTTP/1.1 2"));
        match (a.status, failed) {
            (202, None) => Ok(()),
            (202, Some(line)) => {
                let pk = entities.first().map_or("", |e| e.partition_key.as_str());
                let detail = text.split(line).nth(1).unwrap_or("").chars().take(400).collect::<String>();
                Err(format!("table {table}, partition '{pk}': {line}{detail}"))
            }
            _ => Err(a.error(&format!("batch into {table}"))),
        }
    }
}
