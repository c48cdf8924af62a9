//! Query-string options of a request (`$top`, `$select`, `$filter`, `$format`,
//! continuation tokens, `comp`, `restype`), decoded once.

use aztable_model::error::{ApiError, ErrorCode};

/// The query parameters the Table service reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParams {
    pub filter: Option<String>,
    pub select: Option<String>,
    pub top: Option<String>,
    pub format: Option<String>,
    pub next_partition_key: Option<String>,
    pub next_row_key: Option<String>,
    pub next_table_name: Option<String>,
    pub comp: Option<String>,
    pub restype: Option<String>,
}

impl QueryParams {
    /// Decodes a raw query string (form encoding: `%XX` and `+` for space).
    pub fn parse(raw: Option<&str>) -> QueryParams {
        let mut q = QueryParams::default();
        let raw = match raw {
            // no query (a point read's): nothing to decode
            None | Some("") => return q,
            Some(raw) => raw,
        };
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            let slot = match k.as_ref() {
                "$filter" => &mut q.filter,
                "$select" => &mut q.select,
                "$top" => &mut q.top,
                "$format" => &mut q.format,
                "NextPartitionKey" => &mut q.next_partition_key,
                "NextRowKey" => &mut q.next_row_key,
                "NextTableName" => &mut q.next_table_name,
                "comp" => &mut q.comp,
                "restype" => &mut q.restype,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v.into_owned());
            }
        }
        q
    }

    /// `$filter`, parsed. An empty one (`$filter=`, as the SDKs send for an empty filter
    /// string) means no filter, as on the service.
    pub fn parsed_filter(&self) -> Result<Option<aztable_wire::filter::Expr>, ApiError> {
        match self.filter.as_deref() {
            Some(f) if !f.trim().is_empty() => Ok(Some(aztable_wire::filter::parse(f)?)),
            _ => Ok(None),
        }
    }

    /// `$top` as a page size: absent → 1000; otherwise 1..=1000, else 400.
    pub fn page_size(&self) -> Result<usize, ApiError> {
        let Some(top) = &self.top else { return Ok(1000) };
        match top.trim().parse::<usize>() {
            Ok(n @ 1..=1000) => Ok(n),
            _ => Err(ApiError::with_message(
                ErrorCode::InvalidInput,
                format!("The value '{top}' of $top is not valid: it must be an integer from 1 to 1000."),
            )),
        }
    }

    /// `$select` as a list of property names (empty entries dropped; `*` → all).
    pub fn select_list(&self) -> Option<Vec<String>> {
        let s = self.select.as_deref()?.trim();
        if s.is_empty() || s == "*" {
            return None;
        }
        Some(s.split(',').map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_options() {
        let q = QueryParams::parse(Some(
            "$top=5&$select=a,%20b&NextPartitionKey=1%218%21abc&$filter=PartitionKey%20eq%20%27x%27&x=1",
        ));
        assert_eq!(q.page_size().unwrap(), 5);
        assert_eq!(q.select_list().unwrap(), vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(q.next_partition_key.as_deref(), Some("1!8!abc"));
        assert_eq!(q.filter.as_deref(), Some("PartitionKey eq 'x'"));
        assert_eq!(QueryParams::parse(None).page_size().unwrap(), 1000);
        assert!(QueryParams::parse(Some("$top=0")).page_size().is_err());
        assert!(QueryParams::parse(Some("$top=1001")).page_size().is_err());
        assert!(QueryParams::parse(Some("$top=x")).page_size().is_err());
    }
}
