//! The `Prefer` request header of inserts and table creation (`return-content` or
//! `return-no-content`), read the same way for single requests and for the operations
//! of a batch.

/// The client's `Prefer` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    ReturnContent,
    ReturnNoContent,
}

impl Prefer {
    /// Reads a `Prefer` value: the first of its comma-separated preferences that is
    /// `return-content` or `return-no-content`; `None` when there is none.
    pub fn parse(value: Option<&str>) -> Option<Prefer> {
        value?.split(',').find_map(|p| match p.trim() {
            "return-no-content" => Some(Prefer::ReturnNoContent),
            "return-content" => Some(Prefer::ReturnContent),
            _ => None,
        })
    }

    /// The `Preference-Applied` value that answers it.
    pub fn applied(self) -> &'static str {
        match self {
            Prefer::ReturnContent => "return-content",
            Prefer::ReturnNoContent => "return-no-content",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefer_values() {
        assert_eq!(Prefer::parse(None), None);
        assert_eq!(Prefer::parse(Some("")), None);
        assert_eq!(Prefer::parse(Some("return-no-content")), Some(Prefer::ReturnNoContent));
        assert_eq!(Prefer::parse(Some("odata.maxpagesize=5, return-content")), Some(Prefer::ReturnContent));
        // a preference is a whole token, not a substring of another one
        assert_eq!(Prefer::parse(Some("x-return-no-content-please")), None);
    }
}
