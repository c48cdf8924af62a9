//! [`Rendition`]: a point read's answer as the front end rendered it (the entity's
//! ETag and response body), kept in the entity cache in place of the stored row, so a
//! hot entity read again in the same form costs neither a decode nor a render.
//!
//! The engine does not know how an entity is rendered; the caller names its rendering
//! with a `tag` holding everything the body depends on besides the row (the format and,
//! where the body carries them, the URLs and the table's name as asked). A read with
//! another tag renders afresh from the row.

use std::sync::Arc;

/// A rendered entity: cheap to clone (shared), and its body is what `as_ref` gives, so
/// a response can send it without a copy.
#[derive(Clone)]
pub struct Rendition(Arc<Rendered>);

struct Rendered {
    tag: Box<[u8]>,
    etag: Box<str>,
    body: Box<[u8]>,
}

impl Rendition {
    /// `etag` and `body` rendered under `tag`.
    pub fn new(tag: &[u8], etag: String, body: Vec<u8>) -> Rendition {
        Rendition(Arc::new(Rendered { tag: tag.into(), etag: etag.into(), body: body.into() }))
    }

    /// The entity's ETag (`W/"datetime'…'"`).
    pub fn etag(&self) -> &str {
        &self.0.etag
    }

    /// The response body.
    pub fn body(&self) -> &[u8] {
        &self.0.body
    }

    /// What the rendering depends on besides the row.
    pub(super) fn tag(&self) -> &[u8] {
        &self.0.tag
    }

    /// Bytes held (for the cache's budget).
    pub(super) fn size(&self) -> usize {
        self.0.tag.len() + self.0.etag.len() + self.0.body.len()
    }
}

impl AsRef<[u8]> for Rendition {
    fn as_ref(&self) -> &[u8] {
        self.body()
    }
}

impl std::fmt::Debug for Rendition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rendition").field("etag", &self.etag()).field("body_len", &self.0.body.len()).finish()
    }
}
