//! The kind of a query, from the key ranges the planner gives its filter
//! ([`aztable_wire::filter::plan::plan_ranges`]): the four kinds of the service's query
//! performance guidance, from cheapest to dearest.

use aztable_model::KeyRange;
use aztable_wire::filter::{plan::plan_ranges, Expr};
use serde::Serialize;

/// How much of a table a query reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    /// One entity by both keys (or a few such, or nothing at all).
    #[default]
    Point,
    /// Rows of one partition: `PartitionKey eq 'p'`, with or without a RowKey range.
    RowRange,
    /// A range of partitions: a PartitionKey range bounded on at least one side.
    PartitionRange,
    /// Every entity of the table: nothing in the filter narrows the PartitionKey.
    FullScan,
}

impl QueryKind {
    pub const ALL: [QueryKind; 4] =
        [QueryKind::Point, QueryKind::RowRange, QueryKind::PartitionRange, QueryKind::FullScan];

    /// Position in [`QueryKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in reports and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryKind::Point => "point",
            QueryKind::RowRange => "row_range",
            QueryKind::PartitionRange => "partition_range",
            QueryKind::FullScan => "full_scan",
        }
    }

    /// The name shown to a person.
    pub fn label(self) -> &'static str {
        match self {
            QueryKind::Point => "point query",
            QueryKind::RowRange => "row range scan",
            QueryKind::PartitionRange => "partition range scan",
            QueryKind::FullScan => "full table scan",
        }
    }
}

/// The kind of a query over these planned ranges: the dearest of its ranges' kinds.
/// No range at all (a filter nothing can match) reads nothing: a point query.
pub fn classify_ranges(ranges: &[KeyRange]) -> QueryKind {
    ranges.iter().map(range_kind).max().unwrap_or(QueryKind::Point)
}

fn range_kind(r: &KeyRange) -> QueryKind {
    match (&r.lower, &r.upper) {
        (None, None) => QueryKind::FullScan,
        (Some(l), Some(u)) if l.pk == u.pk => {
            let one_row = l.rk.is_some() && l.rk == u.rk && l.inclusive && u.inclusive;
            if one_row {
                QueryKind::Point
            } else {
                QueryKind::RowRange
            }
        }
        _ => QueryKind::PartitionRange,
    }
}

/// The kind of a Query Entities request with this `$filter` (none: the whole table).
pub fn classify(filter: Option<&Expr>) -> QueryKind {
    match filter {
        Some(f) => classify_ranges(&plan_ranges(f)),
        None => QueryKind::FullScan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aztable_wire::filter::parse;

    fn kind(filter: &str) -> QueryKind {
        classify(Some(&parse(filter).expect(filter)))
    }

    #[test]
    fn the_guidance_examples_are_classified() {
        // point: both keys with eq
        assert_eq!(kind("PartitionKey eq 'Sales' and RowKey eq '2'"), QueryKind::Point);
        assert_eq!(
            kind("(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey eq '2')"),
            QueryKind::Point
        );
        // row range: one partition, a RowKey range (or none)
        assert_eq!(kind("PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'"), QueryKind::RowRange);
        assert_eq!(kind("PartitionKey eq 'Sales' and RowKey gt '2'"), QueryKind::RowRange);
        assert_eq!(kind("PartitionKey eq 'Sales'"), QueryKind::RowRange);
        assert_eq!(kind("PartitionKey eq 'Sales' and LastName eq 'Jones'"), QueryKind::RowRange);
        // partition range: a PartitionKey range
        assert_eq!(kind("PartitionKey ge 'Sales' and PartitionKey lt 'T'"), QueryKind::PartitionRange);
        assert_eq!(kind("PartitionKey gt 'Sales' and LastName eq 'Jones'"), QueryKind::PartitionRange);
        assert_eq!(kind("PartitionKey lt 'M'"), QueryKind::PartitionRange);
        // full scan: nothing narrows the PartitionKey
        assert_eq!(kind("LastName eq 'Jones'"), QueryKind::FullScan);
        assert_eq!(kind("RowKey eq '2'"), QueryKind::FullScan);
        assert_eq!(kind("PartitionKey eq 'a' or LastName eq 'Jones'"), QueryKind::FullScan);
        assert_eq!(kind("PartitionKey ne 'a'"), QueryKind::PartitionRange);
        assert_eq!(classify(None), QueryKind::FullScan);
        // nothing can match: nothing is read
        assert_eq!(kind("PartitionKey eq 'a' and PartitionKey eq 'b'"), QueryKind::Point);
    }

    #[test]
    fn named_partitions_stay_row_ranges() {
        assert_eq!(kind("PartitionKey eq 'a' or PartitionKey eq 'z'"), QueryKind::RowRange);
        assert_eq!(kind("PartitionKey eq 'a' or PartitionKey ge 'z'"), QueryKind::PartitionRange);
    }
}
